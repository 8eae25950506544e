"""The channel binding of the operator guide's example, and Store.claim in memory and in Redis."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import redis.asyncio as aioredis

from bot.config import load_settings
from bot.store import MemoryStore, RedisStore

from .conftest import REDIS_URL, ROOT


def test_the_guide_channel_example_binds_a_channel(no_config: Path) -> None:
    guide = (ROOT / "docs" / "operator-guide.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```toml\n(.*?)```", guide, re.DOTALL) if "[channels." in b)
    (no_config / "prhub.toml").write_text(block, encoding="utf-8")
    settings = load_settings()
    bound = settings.channel("slack:C0123456789")
    assert (bound.repo, bound.source, bound.language) == (
        "verl-project/verl", "jsonl:examples/verl-2026-W16.jsonl", "en")
    other = settings.channel("slack:C0OTHER")
    assert (other.repo, other.source, other.language) == ("verl-project/verl", "github", "zh")
    assert load_settings(default_repo="a/b").channel("slack:C0OTHER").repo == "a/b"


async def test_memory_claim_is_taken_once_and_expires() -> None:
    now = [100.0]
    store = MemoryStore(clock=lambda: now[0])
    assert await store.claim("k", 10)
    assert not await store.claim("k", 10)
    now[0] += 10
    assert await store.claim("k", 10)


async def test_redis_claim_is_taken_once(redis_prefix: str) -> None:
    store = RedisStore(aioredis.Redis.from_url(REDIS_URL), key_prefix=redis_prefix)
    try:
        assert await store.claim("k", 60)
        assert not await store.claim("k", 60)
    finally:
        await store.close()


async def test_redis_claim_expires(redis_prefix: str) -> None:
    ttl = 1
    store = RedisStore(aioredis.Redis.from_url(REDIS_URL), key_prefix=redis_prefix)
    try:
        assert await store.claim("e", ttl)
        await asyncio.sleep(ttl + 0.2)
        assert await store.claim("e", ttl)
    finally:
        await store.close()
