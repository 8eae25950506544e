"""Job-queue tests: the real Redis (DB 15; a unique key prefix and queue name per test, every key
removed afterwards), the fake LLM server on 127.0.0.1, and workers run in threads of the test."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from fakes.llm_server import FakeLLMServer
from llm_support import llm_settings
from redis_support import REDIS_URL, redis_store

from bot.config import Settings, load_settings
from bot.store import RedisStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "verl-2026-W16.jsonl"
REPO = "verl-project/verl"


@pytest.fixture
def prefix() -> str:
    return f"test-jobs-{uuid.uuid4().hex[:12]}:"


@pytest.fixture
async def store(prefix: str) -> AsyncIterator[RedisStore]:
    async with redis_store(prefix) as made:
        yield made


@pytest.fixture
def fake_llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as fake:
        yield fake


@pytest.fixture
def settings(fake_llm: FakeLLMServer, prefix: str, no_config: Path) -> Settings:
    """The fake model, Redis DB 15 under ``prefix``, a queue of this test's own, quick heartbeats, one retry."""
    return llm_settings(load_settings(), fake_llm.base_url, redis_url=REDIS_URL, redis_key_prefix=prefix,
                        jobs_queue=f"q{uuid.uuid4().hex[:10]}", jobs_heartbeat_timeout_s=2, jobs_max_retries=1,
                        llm_timeout_s=15.0)  # a loaded machine must not turn a call into a retry
