"""Scheduler tests: a real Redis (DB 15, a unique key prefix per test, cleaned up — the test
fails without Redis when ``CI=true`` and is skipped otherwise), the fake Slack Web API and
the fake Feishu Open API on 127.0.0.1, and the 2026-W16 example snapshot. Clocks are injected."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fakes.feishu_api import FakeFeishuAPI
from fakes.slack_api import FakeSlack, serve
from redis_support import redis_client, redis_store

from bot.store import RedisStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "verl-2026-W16.jsonl"
REPO = "verl-project/verl"
SHANGHAI = ZoneInfo("Asia/Shanghai")
MONDAY_W17 = datetime(2026, 4, 20, 10, 0, tzinfo=SHANGHAI)
"""The fire of ``mon 10:00`` Asia/Shanghai that posts 2026-W16."""


@pytest.fixture
def prefix() -> str:
    return f"test-sched-{uuid.uuid4().hex[:12]}:"


@pytest.fixture
async def store(prefix: str) -> AsyncIterator[RedisStore]:
    """A store on DB 15 under a unique prefix; every key under it is deleted afterwards."""
    async with redis_store(prefix) as made:
        yield made


@pytest.fixture
async def second_store(store: RedisStore, prefix: str) -> AsyncIterator[RedisStore]:
    """Another client on the same Redis and prefix (a second replica)."""
    client = await redis_client()
    try:
        yield RedisStore(client, key_prefix=prefix)
    finally:
        await client.aclose()


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake


@pytest.fixture
def fake_feishu() -> Iterator[FakeFeishuAPI]:
    with FakeFeishuAPI() as fake:
        yield fake
