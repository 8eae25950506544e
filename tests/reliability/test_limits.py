"""Issue 30: subscription caps hold when the requests come at once — the real bolt app over HTTP on a
private Redis, every request sent at the same instant."""

from __future__ import annotations

import asyncio
import json

import pytest
from fakes.slack_api import FakeSlack

from .conftest import Bot, PrivateRedis, bot_settings
from .test_chat_faults import _body, _headers, answers, wait_until
from .test_races import _post_all

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def _stored(redis: PrivateRedis) -> dict[str, list[dict[str, object]]]:
    client = redis.client()
    out = {}
    for key in client.scan_iter(match="prhub:subscriptions:slack:*"):
        out[key.decode()] = [json.loads(v) for v in client.hgetall(key).values()]
    return out


def test_a_persons_cap_holds_against_40_requests_at_once(fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    settings = bot_settings(fake_slack, max_subscriptions_per_person=20)
    requests = []
    for n in range(40):  # one person, forty channels
        body = _body(f"EvCapP{n}", f"C0CP{n:02d}", f"1714000000.{n:06d}", "订阅 npu")
        requests.append((body, _headers(body)))
    with Bot(settings, private_redis.url) as bot:
        assert asyncio.run(_post_all(bot.url, requests)) == [200] * 40
        assert wait_until(lambda: all(answers(fake_slack, f"C0CP{n:02d}", f"1714000000.{n:06d}") for n in range(40)),
                          timeout=60)
    made = [s for subs in _stored(private_redis).values() for s in subs if s.get("created_by") == "U0ALICE"]
    assert len(made) == 20
    refused = [n for n in range(40) if "达到每人上限" in json.dumps(answers(fake_slack, f"C0CP{n:02d}",
                                                                     f"1714000000.{n:06d}"), ensure_ascii=False)]
    assert len(refused) == 20


def test_a_channels_cap_holds_against_45_requests_at_once(fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    settings = bot_settings(fake_slack, max_subscriptions_per_channel=30, max_subscriptions_per_person=100)
    requests = []
    for n in range(45):  # one channel, forty-five different filters
        body = _body(f"EvCapC{n}", "C0CC", f"1714000100.{n:06d}", f"订阅 path:docs/part{n}/**")
        requests.append((body, _headers(body)))
    with Bot(settings, private_redis.url) as bot:
        assert asyncio.run(_post_all(bot.url, requests)) == [200] * 45
        assert wait_until(lambda: all(answers(fake_slack, "C0CC", f"1714000100.{n:06d}") for n in range(45)),
                          timeout=60)
    assert len(_stored(private_redis).get("prhub:subscriptions:slack:C0CC", [])) == 30
