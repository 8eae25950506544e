"""Pending analyses filled in: a posted digest's cards edited in place when its analyses land.

A weekly push that ran out of time posts the analyses that were ready and shows the rest as pending
(分析结果尚未生成). In ``prhub serve`` the push then hands the post to :class:`PendingRefresher`, which,
in the background:

1. waits until the analyses still running for the digest service land
   (:meth:`~bot.digest.service.DigestService.settled`: the workers' jobs, or the in-process calls past
   the deadline), at most ``wait_s`` (:data:`REFRESH_WAIT_S`);
2. builds the digest again (every analysis now from the cache; the narrative once more);
3. when fewer PRs are pending than were posted, edits the post in place
   (:meth:`~bot.delivery.Deliverer.edit`: the lead card by Slack ``chat.update`` or Feishu's message
   patch — the cards are sent with ``update_multi`` — and each follow-up in the thread that changed
   edited, or appended when the digest now takes more messages).

A Feishu custom-bot webhook cannot edit: its posts stay as they are. A failure is logged (WARNING) and
leaves the post as it was; ``prhub push`` (one shot) does not refresh.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.delivery import Deliverer, DeliveryError, Place, Posted
from bot.digest.service import DigestService
from bot.models import Digest

__all__ = ["REFRESH_WAIT_S", "PendingRefresher"]

log = logging.getLogger(__name__)

REFRESH_WAIT_S = 60 * 60
"""How long a posted digest waits for its pending analyses before it is filled in with what landed."""


class PendingRefresher:
    """Edits posted digests once their pending analyses land (see the module docstring).

    Args:
        digests: the digest service whose analyses are awaited.
        wait_s: the longest wait for them, seconds.
    """

    def __init__(self, digests: DigestService, *, wait_s: float = REFRESH_WAIT_S) -> None:
        self._digests = digests
        self._wait_s = wait_s
        self._tasks: set[asyncio.Task[bool]] = set()

    def track(self, deliverer: Deliverer, place: Place, posted: Posted, digest: Digest,
              rebuild: Callable[[], Awaitable[Digest]], *, what: str) -> bool:
        """Fill in ``digest`` (posted as ``posted`` at ``place``) when its pending analyses land;
        ``rebuild()`` builds it again. ``False`` when there is nothing to do (nothing pending, or a post
        that cannot be edited)."""
        if not digest.pending or not posted.ids or deliverer.platform == "feishu-webhook":
            return False
        task = asyncio.ensure_future(self._refresh(deliverer, place, posted, digest, rebuild, what))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _refresh(self, deliverer: Deliverer, place: Place, posted: Posted, digest: Digest,
                       rebuild: Callable[[], Awaitable[Digest]], what: str) -> bool:
        try:
            still = await self._digests.settled(self._wait_s)
            fresh = await rebuild()
            if len(fresh.pending) >= len(digest.pending):
                log.info("%s: no pending analysis landed within %.0f s (%d still running)", what, self._wait_s,
                         still)
                return False
            extras = await deliverer.card_extras(place, fresh)
            messages = deliverer.digest_messages(fresh, extras)
            before = deliverer.digest_messages(digest, extras)
            same = {i for i, (old, new) in enumerate(zip(before, messages, strict=False)) if old == new}
            await deliverer.edit(place, posted, messages, unchanged=same)
        except DeliveryError as exc:
            log.warning("%s: the posted digest could not be filled in: %s", what, exc)
            return False
        except Exception:
            log.exception("%s: the posted digest could not be filled in", what)
            return False
        log.info("%s: filled in %d of %d pending analyses", what, len(digest.pending) - len(fresh.pending),
                 len(digest.pending))
        return True

    async def idle(self) -> list[bool]:
        """Wait for the refreshes under way; what each did (``True``: edited). For tests and shutdown."""
        done: list[bool] = []
        while self._tasks:
            done += [r for r in await asyncio.gather(*list(self._tasks), return_exceptions=True)
                     if isinstance(r, bool)]
        return done

    async def aclose(self) -> None:
        """Stop the refreshes still waiting (shutdown)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
