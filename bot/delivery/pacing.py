"""The platforms' per-chat rate limits, kept before each send: one :class:`Pacer` per process (aiolimiter).

==================  ==========================  =====================================================
platform            limit per conversation      source
==================  ==========================  =====================================================
``slack``           4 in 4 s (1/s, bursts 4)    ``chat.postMessage``: about one message a second to a
                                                channel, short bursts allowed
``feishu``          5 per second                sending messages: 5 QPS to one user or one group
``feishu-webhook``  5 per second, 100 a minute  custom group bots
==================  ==========================  =====================================================

A leaky bucket (:class:`aiolimiter.AsyncLimiter`) per (platform, conversation), made on first use.
A digest of up to four Slack messages goes out at once; an alert poll with many alerts for one
chat spreads them out. The waits happen on the event loop that sends (limiters belong to one loop:
the pacer is made by the process's composition root, on its loop). Rate-limit answers that still
come back (HTTP 429) are waited out by the clients themselves.

A wait in the pacer is not work: an answer's deadline (:class:`bot.deadline.WorkDeadline`, entered by
:func:`bot.handlers.core.answer_once`) stops running while its task waits here, so a reply queued
behind a busy channel's other replies is posted when its turn comes instead of failing at the
deadline.
"""

from __future__ import annotations

from collections.abc import Mapping

from aiolimiter import AsyncLimiter
from cachetools import LRUCache

from bot.deadline import not_counted

__all__ = ["LIMITERS_KEPT", "RATES", "Pacer"]

LIMITERS_KEPT = 10_000
"""Conversations whose buckets one pacer keeps (the least recently written to go first)."""

RATES: Mapping[str, tuple[tuple[float, float], ...]] = {
    "slack": ((4, 4.0),),
    "feishu": ((5, 1.0),),
    "feishu-webhook": ((5, 1.0), (100, 60.0)),
}
"""``platform`` -> ``(max_rate, time_period_s)`` limits, all kept."""


class Pacer:
    """Waits until a conversation may get its next message.

    Args:
        rates: the limits of each platform (default :data:`RATES`; tests pass faster ones).
    """

    def __init__(self, rates: Mapping[str, tuple[tuple[float, float], ...]] = RATES) -> None:
        self._rates = rates
        # bounded: a conversation not written to for a while loses its bucket (a fresh one is as full)
        self._limiters: LRUCache[tuple[str, str], tuple[AsyncLimiter, ...]] = LRUCache(maxsize=LIMITERS_KEPT)

    async def wait(self, platform: str, conversation: str) -> None:
        """Return when ``conversation`` on ``platform`` may get one more message, counting it as sent."""
        key = (platform, conversation)
        limiters = self._limiters.get(key)
        if limiters is None:
            limiters = self._limiters[key] = tuple(AsyncLimiter(rate, period)
                                                   for rate, period in self._rates.get(platform, ()))
        with not_counted():  # the turn of a conversation is no part of an answer's work
            for limiter in limiters:
                await limiter.acquire()
