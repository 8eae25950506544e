"""The weekly push: the digest of the week that just ended, exactly once per (channel, repository, week).

A channel with ``push`` in its ``[channels."platform:id"]`` section gets, at that time in
its ``timezone``, the digest of the ISO week before the fire's week (``mon 10:00`` of
2026-W17 posts 2026-W16), for its ``repo``, from its ``source``, in its ``language`` —
the same core and cards as the bots' "上周周报".

Exactly once, whoever runs it (the scheduler of any replica, a late run, the catch-up at
start, ``prhub push``) — three keys (:mod:`bot.claims`, :func:`~bot.claims.push_keys`):

- ``prhub:push:done:{platform}:{id}:{repo}:{week}`` — set after the last message was
  accepted (:data:`~bot.claims.DONE_TTL_S`, over a year); present = nothing to do;
- ``prhub:push:lock:{platform}:{id}:{repo}:{week}`` — a lease of ``push_lock_ttl_s``
  (60 s) taken before building the digest and renewed every third of it while the push
  runs (:meth:`bot.claims.Claims.hold`, redis-py's ``Lock.extend()``); whoever does not
  get it does nothing; a replica killed mid-push frees it within ``push_lock_ttl_s``;
- ``prhub:push:progress:{platform}:{id}:{repo}:{week}`` — what the push is posting and
  how far it got: the rendered messages, the thread's anchor (Slack root ts, Feishu
  first card's id) and the ids posted so far, written before the first message and after
  each one (:data:`PROGRESS_TTL_S`).

A push finds its progress and continues: the next messages go into the thread already
begun, never a second root post — the run that takes over after a crash (the catch-up
at start, ``push-retry`` every :data:`RETRY_EVERY_S`, ``prhub push``) finishes it. Only a
message the platform accepted in the instant before the kill (posted, not yet recorded)
can appear twice (Feishu drops even that one by its ``uuid``).

A digest posted whole in one thread marks that thread complete (as :func:`bot.delivery.post_digest`
does), so 完整报告 under it posts nothing more.

A push that fails (the platform refuses, the source cannot be read) releases its lease,
keeps its progress and raises, so the next try continues it. A graceful shutdown
(SIGTERM) waits up to ``shutdown_grace_s`` for the pushes in flight (:meth:`Pusher.drain`);
one still running then is cancelled and handed over the same way.

Catch-up (:meth:`Pusher.catch_up`, at start): a fire within ``push_grace_s`` (default 24 h)
before now whose week is not done is pushed now; older misses within the last
:data:`LOOKBACK` are logged at ERROR level with the command that posts them.

The digest compares the week with the weeks before it (week over week, read from the same source
without any LLM call, :meth:`~bot.digest.service.DigestService.look_back`).

Before building the digest the channel's source is fetched when it is a git clone
(:func:`~bot.channels.refresh_source`, bounded by ``git_timeout_s``; a failure is logged and the
push goes on with the history it has).

A week still being analysed (an LLM analyzer that has not finished by the deadline,
:data:`LLM_DEADLINE_S`) is posted with what is ready; the rest show as pending
(分析结果尚未生成). The digest comes from the process's :class:`~bot.digest.service.DigestService`,
the same one the chat bots use (with ``prhub worker`` processes alive, its analyses are jobs on the
queue, :mod:`bot.jobs`). In ``prhub serve`` a push posted with pending analyses is handed to the
:class:`~bot.scheduler.refresh.PendingRefresher`, which edits it in place when they land.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from redis.exceptions import RedisError

from bot import metrics
from bot.cards.i18n import multi_repo_headline
from bot.channels import Channels, refresh_source
from bot.claims import Claims, push_keys
from bot.config import Settings
from bot.delivery import Deliverer, Deliverers, Message, Place, Posted, mark_full_report, split_channel
from bot.digest.service import DigestService
from bot.digest.window import parse_week
from bot.errors import ConfigError, PrhubError
from bot.models import Digest, Language, Window
from bot.replies import NoteReply
from bot.scheduler.refresh import PendingRefresher
from bot.scheduler.schedule import cron_trigger, fires_between, latest_fire, week_before
from bot.sources.base import PRSource
from bot.sources.reads import read_source
from bot.store import cache_key

__all__ = ["LLM_DEADLINE_S", "LOOKBACK", "PROGRESS_TTL_S", "RETRY_EVERY_S", "PushOutcome", "Pusher", "progress_key"]

log = logging.getLogger(__name__)

RETRY_EVERY_S = 15 * 60
"""How often pushes that failed within their grace are tried again (seconds)."""
RESUME_EVERY_S = 20
"""How often a push whose run stopped midway is looked for and resumed (seconds; cheap: one read per channel)."""
LLM_DEADLINE_S = 15 * 60
"""How long a push waits for LLM analyses before posting the rest as pending (seconds)."""
PROGRESS_TTL_S = 8 * 24 * 3600
"""How long a push's progress record is kept (past the grace of its week's fire), seconds."""
BUILT_KEPT = 256
"""Digests a :class:`Pusher` keeps for the other channels of the same repository, window and language."""
BUILT_TTL_S = 600.0
"""How long a built digest serves the other channels of a push round (seconds): one round, not the next."""
LOOKBACK = timedelta(days=7)
"""How far back the catch-up looks for missed fires: the last week (so only the latest fire of a
weekly push counts, and a fresh install does not report the weeks before it existed)."""


def _me(now: datetime) -> str:
    """Who this run is, for the push's holder record: host, process id and since when."""
    return f"{socket.gethostname()} pid {os.getpid()} since {now.astimezone(UTC).strftime('%H:%M:%S')} UTC"


def progress_key(platform: str, channel: str, repo: str, week: str) -> str:
    """Where the push of ``repo``'s ``week`` to ``channel`` records what it posted (see the module docstring)."""
    return cache_key("push", "progress", platform, channel, repo, week)


@dataclass(frozen=True, slots=True)
class PushOutcome:
    """What one push did: ``posted`` (``prs`` PRs, ``pending`` of them without analysis),
    ``already_done`` (the marker was there), ``busy`` (another run holds the lock) or
    ``missed`` (a fire beyond the grace, only logged)."""

    channel: str
    repo: str
    week: str
    status: Literal["posted", "already_done", "busy", "missed"]
    prs: int = 0
    pending: int = 0
    resumed: bool = False
    """A push that continued one begun earlier (a crash, a shutdown, a platform error)."""
    holder: str | None = None
    """``busy``: who holds the push (host, process id, since), when it said."""


class Pusher:
    """Weekly pushes of the configured channels.

    Args:
        settings: ``push_grace_s``.
        claims: markers and locks (Redis; a Redis failure propagates — better no push than two).
        channels: the channels' bindings (``repo``, ``source``, ``language``, ``timezone``, ``push``)
            and their sources.
        deliverers: where channels are.
        digests: the digest service.
        clock: the current instant (aware).
        deadline_s: how long the LLM analyses of one push may take (:data:`LLM_DEADLINE_S`).
        refresher: fills in a posted digest's pending analyses when they land (``prhub serve``;
            :mod:`bot.scheduler.refresh`); ``None``: the post stays as it is.
    """

    def __init__(self, *, settings: Settings, claims: Claims, channels: Channels, deliverers: Deliverers,
                 digests: DigestService, clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 deadline_s: float = LLM_DEADLINE_S, refresher: PendingRefresher | None = None) -> None:
        self.settings = settings
        self._claims = claims
        self._channels = channels
        self._deliverers = deliverers
        self._digests = digests
        self._clock = clock
        self._deadline_s = deadline_s
        self._refresher = refresher
        self._in_flight: set[asyncio.Task[object]] = set()
        self._built: dict[tuple[str, int, str, str], tuple[float, asyncio.Task[Digest]]] = {}
        self.builds = 0
        """Digests built so far (each repository's once per window and language, however many channels)."""

    async def drain(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` for the pushes in flight to finish, then cancel what still runs (its
        lease is released and its progress kept: the next run continues it)."""
        running = [t for t in self._in_flight if not t.done()]
        if not running:
            return
        log.info("waiting up to %.0f s for %d push(es) in flight", timeout_s, len(running))
        _, late = await asyncio.wait(running, timeout=timeout_s)
        for task in late:
            log.warning("a push did not finish within shutdown_grace_s; handed over (the next run continues it)")
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=5)

    def scheduled_channels(self) -> list[str]:
        """The channel keys with a ``push`` time, sorted."""
        return self._channels.scheduled()

    def _keys(self, channel: str, repo: str, week: str) -> tuple[str, str]:
        platform, ident = split_channel(channel)
        return push_keys(platform, ident, repo, week)

    def _repo_key(self, channel: str) -> str:
        """The repository part of ``channel``'s push keys: its repository, or ``a/b+c/d`` for several."""
        binding = self._channels.binding(channel)
        if len(binding.repos) > 1:
            return "+".join(name for name, _ in self._channels.repos_of(channel))
        return self._channels.resolve(channel)[1]

    async def is_done(self, channel: str, week: str) -> bool:
        """Whether the push of ``week`` to ``channel`` (for its bound repository or repositories) is marked done."""
        return await self._claims.is_done(self._keys(channel, self._repo_key(channel), week)[0])

    async def push(self, channel: str, week: str | None = None, *, fire: datetime | None = None) -> PushOutcome:
        """Push one week's digest to ``channel`` unless that was done.

        Args:
            channel: ``slack:C123``, ``feishu:oc_x`` or ``feishu-webhook:NAME``.
            week: ``YYYY-Www``, ``this`` or ``last`` in the channel's zone; ``None``: the week
                before ``fire`` (default: now) — what the schedule posts.
            fire: the scheduled instant this run stands for (a late run still posts its week).

        Raises:
            ConfigError: the channel or its platform is not configured.
            PrhubError: the source or the platform failed (the lock is released first).
            redis.exceptions.RedisError: the store did not answer.
        """
        try:
            outcome = await self._push(channel, week, fire)
        except BaseException:
            metrics.PUSHES.labels("failed").inc()
            raise
        metrics.PUSHES.labels(outcome.status).inc()
        return outcome

    async def _push(self, channel: str, week: str | None, fire: datetime | None) -> PushOutcome:
        deliverer, target = self._deliverers.for_channel(channel)
        binding = self._channels.binding(channel)
        followed = self._channels.repos_of(channel) if len(binding.repos) > 1 else []
        if followed:  # several repositories: one post, each repository's own digest in its thread
            source, repo = followed[0][1], "+".join(name for name, _ in followed)
        else:
            source, repo = self._channels.resolve(channel)
        language, tz = binding.language or self.settings.language, binding.timezone or "UTC"
        now = self._clock()
        window = parse_week(week, tz=tz, now=now) if week is not None else week_before(fire or now, tz)
        done_key, lock_key = self._keys(channel, repo, window.name)
        if await self._claims.is_done(done_key):
            return PushOutcome(channel, repo, window.name, "already_done")
        task = asyncio.current_task()
        if task is not None:
            self._in_flight.add(task)
        try:
            async with self._claims.hold(lock_key, self.settings.push_lock_ttl_s, holder=_me(now)) as held:
                if held is None:
                    holder = await self._claims.holder(lock_key)
                    log.info("the push of %s %s to %s is held by %s; nothing done here", repo, window.name,
                             channel, holder or "another run")
                    return PushOutcome(channel, repo, window.name, "busy", holder=holder)
                if await self._claims.is_done(done_key):  # finished just before our lock
                    return PushOutcome(channel, repo, window.name, "already_done")
                outcome = await self._post(deliverer, channel, target, source, repo, window, language, now,
                                           done_key, followed)
        finally:
            if task is not None:
                self._in_flight.discard(task)
        log.info("pushed %s %s to %s: %d PRs, %d pending%s", repo, window.name, channel, outcome.prs,
                 outcome.pending, " (resumed)" if outcome.resumed else "")
        return outcome

    async def _post(self, deliverer: Deliverer, channel: str, target: str, source: PRSource, repo: str,
                    window: Window, language: Language, now: datetime, done_key: str,
                    followed: list[tuple[str, PRSource]] | None = None) -> PushOutcome:
        """Build (or find) the push's messages, post those not posted yet, recording each, then mark it done;
        ``followed``: the repositories of a channel that follows several (:meth:`_compose`)."""
        store = self._claims.store
        platform, ident = split_channel(channel)
        key = progress_key(platform, ident, repo, window.name)
        progress = await store.get_json(key)
        resumed = isinstance(progress, dict) and bool(progress.get("posted"))
        digest: Digest | None = None  # a resumed push has its messages, not its digest: it is not filled in
        if not isinstance(progress, dict) or not progress.get("messages"):
            if followed:
                messages, prs, pending = await self._compose(deliverer, target, followed, window, language, now)
            else:
                if self.settings.git_fetch_interval_s > 0:  # a git clone fetches its remote first (bounded, logged)
                    await asyncio.to_thread(refresh_source, source, f"the source of {channel}")
                digest = await self._build(source, repo, window, language, now)
                messages = deliverer.digest_messages(digest, await deliverer.card_extras(Place(target), digest))
                prs, pending = digest.stats.pr_count, len(digest.pending)
            progress = {"messages": messages, "posted": [], "anchor": None, "window": window.name,
                        "prs": prs, "pending": pending}
            await store.set_json(key, progress, PROGRESS_TTL_S)
        elif resumed:
            log.warning("resuming the push of %s %s to %s after %d of %d messages", repo, window.name, channel,
                        len(progress["posted"]), len(progress["messages"]))
        messages = progress["messages"]
        for n in range(len(progress["posted"]), len(messages)):
            anchor = progress["anchor"]
            place = Place(target, thread=anchor) if anchor else Place(target)
            posted = await deliverer.post(place, [messages[n]], key=f"{done_key}:{n}")
            if n == 0:
                progress["anchor"] = posted.anchor
            progress["posted"].append(posted.ids[0] if posted.ids else "")
            await store.set_json(key, progress, PROGRESS_TTL_S)
        if len(messages) > 1:
            await mark_full_report(self._claims, deliverer.platform, target, progress["anchor"], window.name)
        await self._claims.take(done_key)
        await store.delete(key)
        if self._refresher is not None and digest is not None:  # issue 17: pending cards edited when they land
            self._refresher.track(deliverer, Place(target), Posted(tuple(progress["posted"]), progress["anchor"]),
                                  digest, lambda: self._build_once(source, repo, window, language, now),
                                  what=f"{repo} {window.name} to {channel}")
        return PushOutcome(channel, repo, window.name, "posted", int(progress.get("prs", 0)),
                           int(progress.get("pending", 0)), resumed=resumed)

    async def _compose(self, deliverer: Deliverer, target: str, followed: list[tuple[str, PRSource]],
                       window: Window, language: Language, now: datetime) -> tuple[list[Message], int, int]:
        """The post of a channel that follows several repositories: a cross-repository headline
        (:func:`bot.cards.i18n.multi_repo_headline`), then each repository's own digest messages, exactly as
        its own push would post them, in the headline's thread. Returns the messages, PRs and pending."""
        digests: list[Digest] = []
        for name, source in followed:
            digests.append(await self._build(source, name, window, language, now))
        messages: list[Message] = deliverer.reply_messages(NoteReply(multi_repo_headline(digests, language), language))
        for digest in digests:
            messages += deliverer.digest_messages(digest, await deliverer.card_extras(Place(target), digest))
        return messages, sum(d.stats.pr_count for d in digests), sum(len(d.pending) for d in digests)

    async def _build(self, source: PRSource, repo: str, window: Window, language: Language,
                     now: datetime) -> Digest:
        """``repo``'s digest of ``window`` in ``language``: built once however many channels push it (the
        first asker builds, the others await the same task; :attr:`builds` counts)."""
        key = (repo.lower(), id(source), window.name, language)
        kept = self._built.get(key)
        fresh = kept is not None and time.monotonic() - kept[0] < BUILT_TTL_S and not (
            kept[1].done() and (kept[1].cancelled() or kept[1].exception() is not None))
        if kept is None or not fresh:
            kept = (time.monotonic(), asyncio.ensure_future(self._build_once(source, repo, window, language, now)))
            self._built.pop(key, None)
            self._built[key] = kept
            while len(self._built) > BUILT_KEPT:  # the oldest go first
                self._built.pop(next(iter(self._built)))
        return await asyncio.shield(kept[1])

    async def _build_once(self, source: PRSource, repo: str, window: Window, language: Language,
                          now: datetime) -> Digest:
        self.builds += 1
        try:
            prs = await read_source(source, source.merged_prs, repo, window)
            earlier = await self._digests.look_back(source, repo, window, language=language)
            digest = await self._digests.digest(prs, repo=repo, window=window, language=language, now=now,
                                                deadline_s=self._deadline_s, lookback=earlier.lookback,
                                                known=earlier.known)
        except PrhubError:
            metrics.DIGESTS.labels("push", "failed").inc()
            raise
        metrics.DIGESTS.labels("push", "built" if digest.stats.pr_count else "empty").inc()
        return digest

    async def run_scheduled(self, channel: str) -> PushOutcome | None:
        """The scheduler's job: push the week of the latest fire within the grace (``None``: no fire
        in it — the job ran far too late, :meth:`catch_up` reports such misses)."""
        cfg = self.settings.channel(channel)
        if cfg.push is None:
            raise ConfigError(f"channel {channel} has no push time")
        now = self._clock()
        fire = latest_fire(cron_trigger(cfg.push, cfg.timezone or "UTC"), now,
                           timedelta(seconds=max(self.settings.push_grace_s, 60)))
        if fire is None:
            return None
        return await self.push(channel, fire=fire)

    async def resume_interrupted(self) -> list[PushOutcome]:
        """Finish the pushes whose run stopped midway (a process killed, a restart): each scheduled
        channel's week of its latest fire with a progress record and no holder (its lease expired,
        :data:`~bot.claims.PUSH_LOCK_TTL_S` after the holder died) is resumed in its thread, and logged.
        The scheduler runs this every :data:`RESUME_EVERY_S` seconds, so a half-posted digest waits at most
        the lease's life plus that.

        Returns:
            The outcomes of the pushes resumed (or found ``busy`` / ``already_done`` meanwhile).
        """
        now = self._clock()
        outcomes: list[PushOutcome] = []
        for channel in self.scheduled_channels():
            cfg = self.settings.channel(channel)
            assert cfg.push is not None
            tz = cfg.timezone or "UTC"
            fire = latest_fire(cron_trigger(cfg.push, tz), now, LOOKBACK)
            if fire is None:
                continue
            week = week_before(fire, tz)
            try:
                repo = self._repo_key(channel)
                platform, ident = split_channel(channel)
                if await self._claims.store.get_json(progress_key(platform, ident, repo, week.name)) is None:
                    continue
                if await self._claims.holder(self._keys(channel, repo, week.name)[1]) is not None:
                    continue  # its run is alive (it renews its lease)
                log.warning("the push of %s %s to %s stopped midway (its run is gone); resuming it", repo,
                            week.name, channel)
                outcomes.append(await self.push(channel, fire=fire))
            except (PrhubError, RedisError):
                log.exception("resuming the push to %s failed; the next check tries again", channel)
        return outcomes

    async def catch_up(self, *, report_missed: bool = True) -> list[PushOutcome]:
        """At start: push the weeks whose fire lies within the grace and are not done; log the
        older misses of the last :data:`LOOKBACK` loudly. One channel's failure is logged and
        the others go on. The scheduler also runs it every :data:`RETRY_EVERY_S` seconds with
        ``report_missed=False``, so a push that failed (source or platform down at the fire)
        is tried again until it is posted or its grace runs out.

        Returns:
            One outcome per fire looked at (``posted``, ``already_done``, ``busy`` or ``missed``).
        """
        now = self._clock()
        grace = timedelta(seconds=self.settings.push_grace_s)
        outcomes: list[PushOutcome] = []
        for channel in self.scheduled_channels():
            cfg = self.settings.channel(channel)
            assert cfg.push is not None
            tz = cfg.timezone or "UTC"
            try:
                for fire in fires_between(cron_trigger(cfg.push, tz), now - LOOKBACK + timedelta(seconds=1), now):
                    week = week_before(fire, tz).name
                    if now - fire <= grace:
                        outcomes.append(await self.push(channel, fire=fire))
                    elif report_missed and not await self.is_done(channel, week):
                        repo = self._repo_key(channel)
                        log.error("MISSED weekly push: %s %s to %s was due at %s, more than %s ago "
                                  "(push_grace_s); post it with: prhub push --channel %s --week %s",
                                  repo, week, channel, fire.isoformat(), grace, channel, week)
                        outcomes.append(PushOutcome(channel, repo, week, "missed"))
            except (PrhubError, RedisError):  # one channel's failure must not stop the others' catch-up
                log.exception("catch-up of the weekly push to %s failed", channel)
        return outcomes
