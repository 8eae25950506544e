"""The Feishu bot with the real lark-oapi dispatcher, a real Redis and the fake Open API.

``bot`` is a started :class:`~bot.handlers.feishu.app.FeishuBot`: lark-oapi's
client talks to :class:`~fakes.feishu_api.FakeFeishuAPI` on 127.0.0.1, the core
answers from the 2026-W16 example snapshot, claims and subscriptions live in
Redis (DB 15, a unique key prefix per test; without Redis the test fails when
``CI=true`` and is skipped otherwise). ``http`` posts to ``POST /feishu/events``
of a Starlette app holding the bot's route (in-process ASGI transport).
Waits the client would do (rate limits, pacing) are recorded in ``sleeps``, not slept.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI
from redis_support import redis_store
from starlette.applications import Starlette

from bot.app import Services, build_services
from bot.config import Settings
from bot.delivery.feishu import FeishuClient, FeishuDeliverer
from bot.delivery.pacing import Pacer
from bot.handlers.feishu.http import events_route
from bot.store import RedisStore

if TYPE_CHECKING:
    from bot.handlers.feishu.app import FeishuBot

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "feishu"
EXAMPLE = ROOT / "examples" / "verl-2026-W16.jsonl"
REPO = "verl-project/verl"
VERIFICATION_TOKEN = "v-token-test"
NOW = datetime(2026, 4, 22, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
"""Wednesday of 2026-W17: "last week" is the example's 2026-W16."""


async def post_event(http: httpx.AsyncClient, bot: FeishuBot, payload: dict[str, Any]) -> httpx.Response:
    """POST ``payload`` to the bot's event URL as Feishu does, then wait until the bot has answered it."""
    response = await http.post("/feishu/events", content=json.dumps(payload, ensure_ascii=False).encode(),
                               headers={"Content-Type": "application/json; charset=utf-8"})
    await bot.drain()
    return response


def fixture(name: str) -> dict[str, Any]:
    """A recorded payload from ``tests/fixtures/feishu/{name}.json``."""
    value: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return value


@pytest.fixture
async def store() -> AsyncIterator[RedisStore]:
    async with redis_store(f"test-feishu-{uuid.uuid4().hex[:12]}:") as made:
        yield made


@pytest.fixture
def fake_api() -> Iterator[FakeFeishuAPI]:
    with FakeFeishuAPI() as fake:
        yield fake


@pytest.fixture
def settings(verl_settings: Settings) -> Settings:
    return verl_settings.model_copy(update={"default_source": f"jsonl:{EXAMPLE}", "default_repo": REPO})


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def client(fake_api: FakeFeishuAPI, sleeps: list[float]) -> FeishuClient:
    async def record(seconds: float) -> None:
        sleeps.append(seconds)
        await asyncio.sleep(0)

    return FeishuClient(app_id=APP_ID, app_secret=APP_SECRET, base_url=fake_api.base_url, pacer=Pacer(),
                        sleep=record)


@pytest.fixture
async def services(store: RedisStore, settings: Settings) -> AsyncIterator[Services]:
    made = build_services(settings, store, clock=lambda: NOW)
    yield made
    await made.aclose()


@pytest.fixture
async def bot(client: FeishuClient, services: Services) -> AsyncIterator[FeishuBot]:
    from bot.handlers.feishu.app import FeishuBot

    feishu = FeishuBot(deliverer=FeishuDeliverer(client), core=services.core, claims=services.claims,
                       verification_token=VERIFICATION_TOKEN)
    await feishu.start()
    yield feishu
    await feishu.drain()


@pytest.fixture
async def http(bot: FeishuBot) -> AsyncIterator[httpx.AsyncClient]:
    app = Starlette(routes=[events_route(bot.dispatcher)])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot.test") as client:
        yield client
