"""The bot's store raises on Redis errors instead of silently dropping state; the CLI's cache degrades."""

from __future__ import annotations

from pathlib import Path
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


async def test_the_file_store_keeps_plain_keys_between_runs(tmp_path: Path) -> None:
    """PRHUB_CACHE_FILE (a CI job's cache, docs/github-action.md): values written in one run are read in the
    next, expired ones are not, an unreadable file starts empty with one warning, the write is atomic."""
    from bot.store import FileStore

    path = tmp_path / "cache" / "analyses.json"
    first = FileStore(path)
    await first.set_json("prhub:a", {"x": 1})
    await first.set_json("prhub:gone", 1, ttl_s=-1)
    await first.set_json("prhub:later", [1, 2], ttl_s=3600)
    await first.close()
    second = FileStore(path)
    assert second.loaded == 2
    assert await second.get_json("prhub:a") == {"x": 1}
    assert await second.get_json("prhub:later") == [1, 2]
    assert await second.get_json("prhub:gone") is None
    assert not path.with_name("analyses.json.tmp").exists()
    path.write_text("{not json", encoding="utf-8")
    warned: list[str] = []
    third = FileStore(path, warn=warned.append)
    assert third.loaded == 0
    assert warned == ["the cache file analyses.json could not be read (JSONDecodeError); starting empty"]
