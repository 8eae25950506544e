"""The bot's store raises on Redis errors instead of silently dropping state; the CLI's cache degrades."""

from __future__ import annotations

from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from bot.store import RedisStore


class FlakyClient:
    """A redis client whose first GET fails, then works (a blip)."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.failures = 1

    async def get(self, key: str) -> Any:
        if self.failures:
            self.failures -= 1
            raise RedisConnectionError("blip")
        return self.data.get(key)

    async def set(self, key: str, value: Any, ex: int | None = None) -> None:
        self.data[key] = value.encode() if isinstance(value, str) else value


async def test_strict_store_raises_then_recovers() -> None:
    client = FlakyClient()
    store = RedisStore(client, degrade=False)  # type: ignore[arg-type]
    await store.set_json("k", {"a": 1})
    with pytest.raises(RedisConnectionError):
        await store.get_json("k")
    assert await store.get_json("k") == {"a": 1}  # the next call reaches Redis again


async def test_cache_store_degrades_once_and_warns() -> None:
    client = FlakyClient()
    warnings: list[str] = []
    store = RedisStore(client, on_unavailable=warnings.append)  # type: ignore[arg-type]
    await store.set_json("k", {"a": 1})
    assert await store.get_json("k") is None
    assert len(warnings) == 1
    assert await store.get_json("k") is None  # stays off for the rest of the one-shot run
