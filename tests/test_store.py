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


class BusyPool:
    """A strict store whose pool stays busy (``No connection available``) for ``busy_s`` while Redis itself
    answers the probe: a burst, not an outage."""

    key_prefix = "prhub"

    def __init__(self, busy_s: float) -> None:
        import time

        self.until = time.monotonic() + busy_s

    def _turn(self) -> None:
        import time

        if time.monotonic() < self.until:
            raise RedisConnectionError("No connection available.")

    async def probe(self) -> None:
        return None

    async def get_json(self, key: str) -> Any:
        self._turn()
        return {"cached": True}

    async def records(self, key: str) -> dict[str, Any]:
        self._turn()
        return {"U1": {"filter": "npu"}}


async def test_a_busy_pool_gives_a_cached_read_up_soon_but_keeps_a_persons_state_waiting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A read with a fallback gives up after BUSY_WAIT_S; a call on state (a subscription) waits the burst out
    up to STATE_BUSY_WAIT_S instead of refusing the person; neither is an outage."""
    import bot.store as store_module
    from bot.store import ResilientStore

    monkeypatch.setattr(store_module, "BUSY_WAIT_S", 0.2)
    monkeypatch.setattr(store_module, "STATE_BUSY_WAIT_S", 5.0)
    store = ResilientStore(BusyPool(busy_s=1.0))  # type: ignore[arg-type]
    assert await store.get_json("k") is None  # gave up after 0.2 s: the in-memory fallback answered
    assert store.busy >= 5
    assert await store.records("subscriptions") == {"U1": {"filter": "npu"}}  # waited the rest of the second
    assert store.outages == 0
    assert store.health == "ok"
