"""Fixtures of the delivery tests: the fake Feishu Open API on 127.0.0.1 and a client on it whose waits
(rate limits) are recorded in ``sleeps`` instead of slept."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI

from bot.delivery.feishu import FeishuClient
from bot.delivery.pacing import Pacer


@pytest.fixture
def fake_api() -> Iterator[FakeFeishuAPI]:
    with FakeFeishuAPI() as fake:
        yield fake


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
