"""Exactly once: every claim the bot makes in the store, with one time-to-live policy and one key scheme.

A claim is an atomic "set if absent" with a time to live (:meth:`bot.store.Store.claim`, Redis
``SET key 1 NX EX ttl``), so replicas, restarts and redeliveries agree on who does a piece of work.
Three kinds, each with its lifetime:

=============  =====================================================  =================================
kind           what it says                                           lives
=============  =====================================================  =================================
seen           this delivery of a chat event is being answered        :data:`HANDLING_TTL_S` while the
               (Slack event id, Slack channel + message ts, Feishu    answer is made, then
               message id, Feishu event id) — two steps: taken when   ``dedup_ttl_s`` (12 h by default:
               the answer starts, marked answered when it was         Slack retries within minutes,
               delivered, released when it failed (so the platform's  Feishu's last retry comes ~6 h on)
               retry is served)
done           a piece of once-only work is finished: a week pushed   :data:`DONE_TTL_S` (400 days)
               to a channel, a person's weekly digest sent, the full
               report posted in a thread, a PR's analysis posted in a
               thread (and, before alerts were batched, an alert sent)
lock           a piece of once-only work is under way (the push, a    as long as that work may take
               subscriber's alert queue, a personal digest);          (:data:`ALERT_LOCK_TTL_S`); the
               released when it fails, so the next try runs           push's is a lease of
                                                                      ``push_lock_ttl_s`` (60 s) renewed
                                                                      while it runs (:meth:`Claims.hold`)
=============  =====================================================  =================================

While Redis is down (:class:`bot.store.ResilientStore`) the "seen" claims are taken in this process
(answering beats losing a message) and written back when Redis returns; "done" claims and locks
raise :class:`~bot.errors.StoreUnavailableError` (better no push now than two).

Keys (docs/operator-guide.md "Redis keys"): ``prhub:seen:{platform}:{kind}:{id}``,
``prhub:done:full-report:{platform}:{conversation}:{thread}:{window}``,
``prhub:done:pr-answer:{platform}:{conversation}:{thread}:{repo}#{number}``,
``prhub:push:{done|lock}:{platform}:{channel}:{repo}:{week}``,
``prhub:personal:{done|lock}:{platform}:{user}:{week}``, ``prhub:alert:queue-lock:{platform}:{subscriber}``
and (read only: the per-PR markers of the alerts before batching)
``prhub:alert:sent:{platform}:{subscriber}:{repo}:{number}``. Parts are joined by
:func:`bot.store.cache_key` (a part with a ``:`` or a space, or a long one, becomes a short hash).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from bot.store import Lease, Store, cache_key

__all__ = [
    "ALERT_LOCK_TTL_S",
    "DONE_TTL_S",
    "HANDLING_TTL_S",
    "PUSH_LOCK_TTL_S",
    "SEEN_TTL_S",
    "Claims",
    "Held",
    "alert_keys",
    "alert_queue_lock_key",
    "full_report_key",
    "holder_key",
    "personal_digest_keys",
    "pr_answer_key",
    "push_keys",
    "seen_key",
]

log = logging.getLogger(__name__)

SEEN_TTL_S = 12 * 3600
"""Default lifetime of a "seen" claim (``dedup_ttl_s``), seconds."""
DONE_TTL_S = 400 * 24 * 3600
"""Lifetime of a "done" claim, seconds: over a year, so a week pushed or a thread completed stays so."""
HANDLING_TTL_S = 5 * 60
"""Lifetime of a "seen" claim while its answer is made (a process killed meanwhile frees it this soon)."""
PUSH_LOCK_TTL_S = 60
"""Default lifetime of the push's lease (``push_lock_ttl_s``), renewed every third of it while the push runs."""
ALERT_LOCK_TTL_S = 10 * 60


def seen_key(platform: str, kind: str, ident: str) -> str:
    """The claim of one delivery: ``kind`` is ``event``, ``msg`` (Slack: ``{channel}:{ts}``; Feishu: the
    message id)."""
    return cache_key("seen", platform, kind, *ident.split(":"))


def full_report_key(platform: str, conversation: str, thread: str, window: str) -> str:
    """"The full report of ``window`` is in ``thread`` (a Slack thread ts, a Feishu card's message id)"."""
    return cache_key("done", "full-report", platform, conversation, thread, window)


def pr_answer_key(platform: str, conversation: str, thread: str, repo: str, number: int) -> str:
    """"The analysis of ``repo#number`` is in ``thread``" (分析此 PR)."""
    return cache_key("done", "pr-answer", platform, conversation, thread, f"{repo}#{number}")


def push_keys(platform: str, channel: str, repo: str, week: str) -> tuple[str, str]:
    """``(done, lock)`` of the weekly push of ``repo``'s ``week`` to ``channel``."""
    return (cache_key("push", "done", platform, channel, repo, week),
            cache_key("push", "lock", platform, channel, repo, week))


def alert_keys(platform: str, subscriber: str, repo: str, number: int) -> tuple[str, str]:
    """``(sent, lock)`` of the alert of ``repo#number`` to ``subscriber`` as the alerts wrote them before they
    were batched (the poller still honours a "sent" marker, so an upgrade repeats nothing)."""
    return (cache_key("alert", "sent", platform, subscriber, repo, number),
            cache_key("alert", "lock", platform, subscriber, repo, number))


def holder_key(lease: str) -> str:
    """Who holds the lease ``lease`` (``{lease}:holder``; :meth:`Claims.hold`)."""
    return f"{lease}:holder"


def alert_queue_lock_key(platform: str, subscriber: str) -> str:
    """The lock around one subscriber's alert queue (read, add or take, send, write back)."""
    return cache_key("alert", "queue-lock", platform, subscriber)


def personal_digest_keys(platform: str, user: str, week: str) -> tuple[str, str]:
    """``(done, lock)`` of the weekly personal digest of ``week`` to person ``user``."""
    return (cache_key("personal", "done", platform, user, week), cache_key("personal", "lock", platform, user, week))


class Claims:
    """The claims of the bot in ``store`` (see the module docstring).

    Args:
        store: the bot's store; a Redis failure propagates (answering twice or not at all is the
            caller's decision).
        seen_ttl_s: lifetime of "seen" claims (``dedup_ttl_s``).
    """

    def __init__(self, store: Store, *, seen_ttl_s: int = SEEN_TTL_S) -> None:
        self._store = store
        self.store = store
        self.seen_ttl_s = seen_ttl_s

    async def first_delivery(self, *keys: str, local_ok: bool = True) -> bool:
        """Claim every "seen" key of one delivery (:func:`seen_key`) for :data:`HANDLING_TTL_S`, all in one
        atomic step (:meth:`bot.store.Store.claim_all`); ``True`` only when none was taken, i.e. this
        delivery is the first of its event and of its message. Of any number of simultaneous deliveries
        sharing a key exactly one gets ``True``. The caller then marks them :meth:`answered`, or
        :meth:`release` s them when the answer failed. While Redis is down the claims are this
        process's (see the module docstring), unless not ``local_ok``: then it raises.

        Raises:
            StoreUnavailableError: Redis is down and not ``local_ok`` (the GitHub webhook: GitHub
                redelivers what was refused, so refusing loses nothing and answers nothing twice).
        """
        return await self._store.claim_all(keys, min(HANDLING_TTL_S, self.seen_ttl_s), local_ok=local_ok)

    async def answered(self, *keys: str) -> None:
        """The answer of the delivery claimed by ``keys`` was delivered: remember it ``seen_ttl_s``."""
        for key in keys:
            await self._store.set_json(key, 1, self.seen_ttl_s)

    @contextlib.asynccontextmanager
    async def hold(self, key: str, ttl_s: float, *, holder: str = "") -> AsyncIterator[Held | None]:
        """Take the lease ``key`` and renew it every ``ttl_s / 3`` seconds while the block runs; yields
        ``None`` when another holds it. Released on exit (whatever happened), so a failed run can be
        tried again at once; a process killed meanwhile frees it within ``ttl_s``. ``holder`` (who
        holds it: host, process, since when) is kept beside the lease for :meth:`holder`.

        Raises:
            StoreUnavailableError: Redis is down.
        """
        lease = await self._store.lease(key, ttl_s)
        if lease is None:
            yield None
            return
        if holder:
            await self._store.set_json(holder_key(key), holder, max(1, round(ttl_s)))
        held = Held(lease, ttl_s, on_renew=(lambda: self._store.set_json(holder_key(key), holder,
                                                                         max(1, round(ttl_s)))) if holder else None)
        renewing = asyncio.create_task(held.renew_forever(), name=f"renew {key}")
        try:
            yield held
        finally:
            renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewing
            await asyncio.shield(lease.release())
            if holder:
                await asyncio.shield(self._store.delete(holder_key(key)))

    async def holder(self, key: str) -> str | None:
        """Who holds the lease ``key`` (as its :meth:`hold` said), or ``None`` when unknown or free."""
        value = await self._store.get_json(holder_key(key))
        return str(value) if value is not None else None

    async def take(self, key: str) -> bool:
        """Claim the once-only work ``key`` ("done"): ``True`` for the one caller that may do it."""
        return await self._store.claim(key, DONE_TTL_S)

    async def is_done(self, key: str) -> bool:
        """Whether the "done" claim ``key`` is there."""
        return await self._store.get_json(key) is not None

    async def lock(self, key: str, ttl_s: int) -> bool:
        """Take the lock ``key`` for ``ttl_s`` seconds: ``True`` when this caller got it."""
        return await self._store.claim(key, ttl_s)

    async def release(self, *keys: str) -> None:
        """Give claims back (the work failed: the next try may run)."""
        await self._store.delete(*keys)


class Held:
    """A lease being renewed (:meth:`Claims.hold`); ``lost`` once a renewal found it gone."""

    def __init__(self, lease: Lease, ttl_s: float,
                 on_renew: Callable[[], Awaitable[None]] | None = None) -> None:
        self._lease = lease
        self.ttl_s = ttl_s
        self.lost = False
        self._on_renew = on_renew

    async def renew_forever(self) -> None:
        """Extend the lease to ``ttl_s`` every third of it (a failed renewal is logged and tried again)."""
        from bot.errors import StoreUnavailableError

        while True:
            await asyncio.sleep(self.ttl_s / 3)
            try:
                if not await self._lease.extend(self.ttl_s):
                    self.lost = True
                    log.warning("a lease expired before it was renewed; another run may take over")
                    return
                if self._on_renew is not None:
                    await self._on_renew()
            except StoreUnavailableError as exc:
                log.warning("could not renew a lease (%s); trying again", exc)
