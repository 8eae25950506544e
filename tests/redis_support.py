"""The real local Redis for tests: DB 15, a unique key prefix per test, keys deleted afterwards.

Without Redis a test fails when ``CI=true`` and is skipped otherwise.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import redis
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from bot.store import RedisStore

REDIS_URL = "redis://127.0.0.1:6379/15"


async def redis_client() -> aioredis.Redis:
    """A client on :data:`REDIS_URL` that answered a PING (else fail in CI, skip elsewhere)."""
    client = aioredis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        await client.ping()
    except RedisError as exc:
        await client.aclose()
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis at {REDIS_URL} is required in CI: {exc}")
        pytest.skip(f"Redis at {REDIS_URL} does not answer: {exc}")
    return client


def redis_sync_client() -> redis.Redis:
    """A blocking client on :data:`REDIS_URL` that answered a PING (else fail in CI, skip elsewhere)."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except RedisError as exc:
        client.close()
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis at {REDIS_URL} is required in CI: {exc}")
        pytest.skip(f"Redis at {REDIS_URL} does not answer: {exc}")
    return client


@asynccontextmanager
async def redis_store(prefix: str | None = None) -> AsyncIterator[RedisStore]:
    """A :class:`RedisStore` under ``prefix`` (default a fresh ``test-…:``); its keys are deleted on exit."""
    client = await redis_client()
    prefix = prefix or f"test-{uuid.uuid4().hex[:12]}:"
    try:
        yield RedisStore(client, key_prefix=prefix)
    finally:
        keys = [key async for key in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
