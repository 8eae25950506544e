"""Exactly one reply per Feishu message, across redeliveries and restarts.

Feishu delivers events at least once and retries one it thinks went
unanswered (15 s, 5 min, 1 h, 6 h later), possibly under a new ``event_id``;
``im.message.receive_v1`` is de-duplicated on its ``message_id``, other events
(card actions) on their ``event_id``. A claim is an atomic "set if absent"
with a time to live (:data:`TTL_S`, 12 hours: beyond the last retry) in the
shared store, so several replicas of the bot agree on who answers.
"""

from __future__ import annotations

from typing import Protocol

from bot.store import cache_key

__all__ = ["TTL_S", "Claims", "Deduper"]

TTL_S = 12 * 3600
"""How long a claim lasts, in seconds (Feishu's last retry comes about 6 hours after the first try)."""


FULL_REPORT_TTL_S = 30 * 24 * 3600
"""How long a thread remembers that its digest's full report was posted (seconds)."""


class Claims(Protocol):
    """The store's atomic claim: ``True`` for the first caller of ``key`` within ``ttl_s``, then ``False``."""

    async def claim(self, key: str, ttl_s: int) -> bool: ...

    async def delete(self, *keys: str) -> None: ...


class Deduper:
    """Claims Feishu message and event ids in a :class:`Claims` store.

    Args:
        store: the bot's store (Redis in production).
        ttl_s: claim lifetime; at least 8 hours.
    """

    def __init__(self, store: Claims, *, ttl_s: int = TTL_S) -> None:
        if ttl_s < 8 * 3600:
            raise ValueError(f"ttl_s must be at least 8 hours (Feishu retries for ~6 hours), got {ttl_s}")
        self._store = store
        self._ttl_s = ttl_s

    async def first_message(self, message_id: str, event_id: str = "") -> bool:
        """Whether this delivery of message ``message_id`` is the first one (then the caller answers).

        The event id is claimed too, so a delivery whose message id were missing
        still counts once.
        """
        fresh = await self._store.claim(cache_key("feishu", "msg", message_id), self._ttl_s)
        if event_id:
            await self._store.claim(cache_key("feishu", "event", event_id), self._ttl_s)
        return fresh

    async def first_event(self, event_id: str) -> bool:
        """Whether event ``event_id`` (a card action) is seen for the first time."""
        return await self._store.claim(cache_key("feishu", "event", event_id), self._ttl_s)

    async def first_full_report(self, card_message_id: str) -> bool:
        """Whether the full report under the card ``card_message_id`` is still to be posted.

        Claimed when a digest reply posts all its cards in the thread, and when 完整报告 is
        pressed: the remaining cards appear in a thread once.
        """
        return await self._store.claim(cache_key("feishu", "full", card_message_id), FULL_REPORT_TTL_S)

    async def release_full_report(self, card_message_id: str) -> None:
        """Give back the claim of :meth:`first_full_report` (posting failed: a later press may retry)."""
        await self._store.delete(cache_key("feishu", "full", card_message_id))
