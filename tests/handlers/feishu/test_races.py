"""Issue 30: two deliveries of one Feishu event at the same instant, through the real lark-oapi dispatcher
and a real Redis — exactly one is answered, none is lost."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import httpx
import pytest
from fakes.feishu_api import FakeFeishuAPI

from bot.handlers.feishu.app import FeishuBot

from .conftest import fixture


@pytest.mark.parametrize("round_", range(4))
async def test_40_duplicate_pairs_at_the_same_instant_are_each_answered_once(
        round_: int, http: httpx.AsyncClient, bot: FeishuBot, fake_api: FakeFeishuAPI) -> None:
    payloads = []
    for n in range(40):
        payload = fixture("p2p_text")
        payload["header"]["event_id"] = f"ev_pair_{round_}_{n:04d}"
        payload["event"]["message"]["message_id"] = f"om_pair_{n:04d}"
        payload["event"]["message"]["content"] = json.dumps({"text": "帮助"})
        payloads += [payload, payload]  # the delivery and its redelivery, sent together
    bodies = [json.dumps(p, ensure_ascii=False).encode() for p in payloads]
    gate = asyncio.Event()

    async def one(body: bytes) -> int:
        await gate.wait()
        answer = await http.post("/feishu/events", content=body,
                                 headers={"Content-Type": "application/json; charset=utf-8"})
        return answer.status_code

    tasks = [asyncio.create_task(one(body)) for body in bodies]
    await asyncio.sleep(0.01)
    gate.set()
    assert await asyncio.gather(*tasks) == [200] * 80
    for _ in range(100):  # the bot's tasks are handed over from the dispatcher's threads
        await bot.drain()
        if len({m.target for m in fake_api.replies()}) == 40:
            break
        await asyncio.sleep(0.05)
    await bot.drain()
    counts = Counter(m.target for m in fake_api.replies())
    assert counts == {f"om_pair_{n:04d}": 1 for n in range(40)}
