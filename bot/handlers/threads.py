"""What the chat bots remember of a conversation: the last request answered in each chat thread, and each
person's language.

:class:`ThreadMemory` keeps, in the store (Redis with a TTL; the in-memory store when Redis is absent):

- ``prhub:thread:{platform}:{channel}:{thread}`` — the last request of a thread
  (:class:`bot.understand.followup.Remembered` as JSON), for follow-ups such as "那上周呢" or
  "and #6029?"; a thread is Slack's ``thread_ts`` (the message's own ``ts`` when it starts one) or
  Feishu's ``root_id`` (the message's own id);
- ``prhub:thread:{platform}:{channel}:@{user}`` — the same, per person and conversation, for a follow-up
  written outside the thread (a direct message without threads, the slash command);
- ``prhub:lang:{platform}:{user}`` — the language of the person's last message that had one, so "PR 6046"
  is answered in the language they write in.

Records expire after ``ttl_s`` (``thread_memory_ttl_s``; the language after 30 days).
"""

from __future__ import annotations

from typing import Literal

from bot.models import Language
from bot.store import Store, cache_key
from bot.understand.followup import Remembered

__all__ = ["LANGUAGE_TTL_S", "ThreadMemory"]

LANGUAGE_TTL_S = 30 * 24 * 3600
"""How long a person's language is remembered (seconds)."""


class ThreadMemory:
    """The last request of each thread and each person's language, in ``store``.

    Args:
        store: the bot's store.
        ttl_s: how long a thread's last request is kept (seconds).
    """

    def __init__(self, store: Store, *, ttl_s: int) -> None:
        self._store = store
        self._ttl_s = ttl_s

    @staticmethod
    def _keys(platform: str, channel: str, thread: str | None, user: str) -> list[str]:
        keys = [cache_key("thread", platform, channel, thread)] if thread else []
        if user:
            keys.append(cache_key("thread", platform, channel, "@" + user))
        return keys

    async def recall(self, platform: str, channel: str, thread: str | None, user: str) -> Remembered | None:
        """The thread's last request (else the person's last one in this conversation), or ``None``."""
        for key in self._keys(platform, channel, thread, user):
            found = Remembered.from_json(await self._store.get_json(key))
            if found is not None:
                return found
        return None

    async def recall_thread(self, platform: str, channel: str, thread: str | None) -> Remembered | None:
        """The thread's own last request (never the person's elsewhere), or ``None``: what a request made in the
        thread leaves unsaid is taken from it (:func:`bot.understand.inherit.inherit`)."""
        if not thread:
            return None
        return Remembered.from_json(await self._store.get_json(cache_key("thread", platform, channel, thread)))

    async def remember(self, platform: str, channel: str, thread: str | None, user: str,
                       record: Remembered) -> None:
        """Keep ``record`` as the thread's (and the person's, in this conversation) last request."""
        for key in self._keys(platform, channel, thread, user):
            await self._store.set_json(key, record.to_json(), ttl_s=self._ttl_s)

    async def language(self, platform: str, user: str) -> Language | None:
        """The language of the person's last message that had one, or ``None``."""
        found = await self._store.get_json(cache_key("lang", platform, user)) if user else None
        return _language(found)

    async def set_language(self, platform: str, user: str, language: Language) -> None:
        """Remember the language the person wrote in."""
        if user:
            await self._store.set_json(cache_key("lang", platform, user), language, ttl_s=LANGUAGE_TTL_S)


def _language(value: object) -> Literal["zh", "en"] | None:
    return value if value in ("zh", "en") else None
