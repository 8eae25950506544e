"""Exactly one reply per Slack request: claims in the store (Redis ``SET NX EX``).

Slack redelivers an event it thinks was not answered (``X-Slack-Retry-Num``,
same ``event_id``), and a message that mentions the bot arrives twice, as
``app_mention`` and as ``message`` (different event ids, same channel and
``ts``). :meth:`Dedup.first_time` claims both the event id and the
``(channel, ts)`` pair; only the caller that takes every claim goes on.
Claims live ``ttl_s`` seconds (hours), so a restart does not answer again.

Keys: ``prhub:seen:slack:event:{event_id}``, ``prhub:seen:slack:msg:{channel}:{ts}``,
``prhub:once:slack:{what}`` (button work done once per thread).
"""

from __future__ import annotations

from bot.store import Store


class Dedup:
    """Claims of handled Slack requests.

    Args:
        store: the shared store; a Redis failure propagates (the bot needs Redis).
        ttl_s: how long a claim lasts, in seconds.
    """

    def __init__(self, store: Store, *, ttl_s: int) -> None:
        self._store = store
        self._ttl_s = ttl_s

    async def first_time(self, *, event_id: str | None, channel: str | None, ts: str | None) -> bool:
        """Whether this is the first delivery of the event ``event_id`` and of the message
        ``(channel, ts)``; either part may be ``None`` (not checked).

        Raises:
            redis.exceptions.RedisError: the store could not be reached.
        """
        if event_id and not await self._store.claim(f"prhub:seen:slack:event:{event_id}", self._ttl_s):
            return False
        return not (channel and ts) or await self._store.claim(f"prhub:seen:slack:msg:{channel}:{ts}", self._ttl_s)

    async def once(self, what: str) -> bool:
        """Claim the piece of work named ``what`` (e.g. ``full:C123:1713.0001:2026-W16``)."""
        return await self._store.claim(once_key(what), self._ttl_s)

    async def release(self, what: str) -> None:
        """Give the claim on ``what`` back (the work failed: a later press may try again)."""
        await self._store.delete(once_key(what))


def once_key(what: str) -> str:
    """The store key of the once-only work ``what`` (see :meth:`Dedup.once`)."""
    return f"prhub:once:slack:{what}"
