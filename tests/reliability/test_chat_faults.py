"""The chat bot under the faults of issue 14's table: a huge mention, a burst, a failed answer, Redis stopped
and Redis hung — each answered, once, and nothing lost."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from typing import Any

import httpx
import pytest
from fakes.slack_api import FakeSlack

from .conftest import SIGNING_SECRET, Bot, PrivateRedis, bot_settings

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def _body(event_id: str, channel: str, ts: str, text: str) -> str:
    event = {"type": "app_mention", "user": "U0ALICE", "text": f"<@U0BOT> {text}", "ts": ts, "channel": channel,
             "event_ts": ts}
    return json.dumps({"token": "legacy", "team_id": "T0TEAM", "api_app_id": "A0APP", "type": "event_callback",
                       "event_id": event_id, "event_time": 1713500000, "event": event,
                       "authorizations": [{"team_id": "T0TEAM", "user_id": "U0BOT", "is_bot": True}]})


def _headers(body: str, retry: int | None = None) -> dict[str, str]:
    stamp = str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    headers = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}",
               "Content-Type": "application/json"}
    if retry is not None:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_error"}
    return headers


def mention(bot: Bot, event_id: str, channel: str, ts: str, text: str, *, retry: int | None = None) -> float:
    """POST one signed mention; the seconds its ack took."""
    body = _body(event_id, channel, ts, text)
    started = time.perf_counter()
    answer = httpx.post(f"{bot.url}/slack/events", content=body, headers=_headers(body, retry), timeout=30)
    assert answer.status_code == 200, answer.text
    return time.perf_counter() - started


ANSWERS = ("chat.postMessage", "chat.postEphemeral")
"""How the bot answers in a thread: for all to see, or (the help, subscriptions, errors) for the asker."""


def answers(fake: FakeSlack, channel: str, ts: str, methods: tuple[str, ...] = ANSWERS) -> list[dict[str, Any]]:
    """The accepted posts in the thread of the mention ``ts`` of ``channel`` (``methods``)."""
    return [c.args for method in methods for c in fake.of(method) if c.args.get("channel") == channel
            and c.args.get("thread_ts") == ts]


def wait_until(check: Any, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())


def test_a_40000_digit_mention_stalls_nothing(fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        huge = "1" * 40_000  # Slack's longest message
        sender = asyncio.new_event_loop()
        try:
            async def during() -> tuple[float, float, float]:
                async with httpx.AsyncClient(timeout=30) as http:
                    body = _body("EvHuge", "C0HUGE", "1713500001.000100", huge)
                    first = asyncio.create_task(http.post(f"{bot.url}/slack/events", content=body,
                                                          headers=_headers(body)))
                    await asyncio.sleep(0.05)
                    t0 = time.perf_counter()
                    assert (await http.get(f"{bot.url}/healthz")).status_code == 200
                    health_s = time.perf_counter() - t0
                    other = _body("EvOther", "C0OTHER", "1713500001.000200", "帮助")
                    t0 = time.perf_counter()
                    assert (await http.post(f"{bot.url}/slack/events", content=other,
                                            headers=_headers(other))).status_code == 200
                    ack_s = time.perf_counter() - t0
                    t0 = time.perf_counter()
                    assert (await first).status_code == 200
                    return health_s, ack_s, time.perf_counter() - t0
            health_s, ack_s, _ = sender.run_until_complete(during())
        finally:
            sender.close()
        assert health_s < 1.0
        assert ack_s < 1.0
        assert wait_until(lambda: answers(fake_slack, "C0HUGE", "1713500001.000100"))  # answered (the help)
        assert wait_until(lambda: answers(fake_slack, "C0OTHER", "1713500001.000200"))


def test_200_mentions_at_50_concurrent_are_each_answered_once(fake_slack: FakeSlack,
                                                               private_redis: PrivateRedis) -> None:
    # a pool far smaller than the burst: requests wait for a connection instead of failing
    with Bot(bot_settings(fake_slack), private_redis.url, max_connections=8) as bot:
        async def burst() -> None:
            gate = asyncio.Semaphore(50)
            async with httpx.AsyncClient(timeout=30) as http:
                async def one(n: int) -> None:
                    body = _body(f"EvBurst{n}", f"C0B{n:03d}", f"1713500100.{n:06d}", "帮助")
                    async with gate:
                        answer = await http.post(f"{bot.url}/slack/events", content=body, headers=_headers(body))
                        assert answer.status_code == 200
                await asyncio.gather(*(one(n) for n in range(200)))
        asyncio.run(burst())
        assert wait_until(lambda: len(fake_slack.of("chat.postEphemeral")) >= 200, timeout=90)
        time.sleep(0.5)
        for n in range(200):
            assert len(answers(fake_slack, f"C0B{n:03d}", f"1713500100.{n:06d}")) == 1, n
        assert len(fake_slack.of("chat.postEphemeral")) + len(fake_slack.of("chat.postMessage")) == 200


def test_with_redis_stopped_every_mention_is_answered_and_nothing_twice_after(
        fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        mention(bot, "EvBefore", "C0R", "1713500300.000100", "帮助")
        assert wait_until(lambda: answers(fake_slack, "C0R", "1713500300.000100"))
        assert bot.health()["status"] == "ok"

        private_redis.stop()
        mention(bot, "EvDuring", "C0R", "1713500300.000200", "帮助")
        mention(bot, "EvSub", "C0R", "1713500300.000300", "订阅 npu")
        mention(bot, "EvList", "C0R", "1713500300.000400", "我的订阅")
        mention(bot, "EvDigest", "C0R", "1713500300.000500", "2026-W16 周报")
        for ts in ("000200", "000300", "000400", "000500"):
            assert wait_until(lambda ts=ts: answers(fake_slack, "C0R", f"1713500300.{ts}")), ts
        said = json.dumps(answers(fake_slack, "C0R", "1713500300.000300"), ensure_ascii=False)
        assert "没有保存" in said  # the subscription is refused with a message, not silently lost
        health = bot.health()
        assert (health["status"], health["redis"]) == ("degraded", "down")

        private_redis.start()  # the same data (SHUTDOWN SAVE, then a start)
        assert wait_until(lambda: bot.health()["redis"] == "ok", timeout=10)
        for event_id, ts in (("EvBefore", "000100"), ("EvDuring", "000200"), ("EvSub", "000300")):
            mention(bot, event_id, "C0R", f"1713500300.{ts}", "帮助", retry=1)  # redeliveries after the fault
        time.sleep(1.5)
        for ts in ("000100", "000200", "000300"):
            assert len(answers(fake_slack, "C0R", f"1713500300.{ts}")) == 1, ts  # nothing answered twice
        mention(bot, "EvSubAgain", "C0R", "1713500300.000600", "订阅 npu")
        assert wait_until(lambda: answers(fake_slack, "C0R", "1713500300.000600"))
        assert "已订阅" in json.dumps(answers(fake_slack, "C0R", "1713500300.000600"), ensure_ascii=False)


def test_with_redis_hung_a_mention_and_a_subscribe_are_answered_meanwhile(
        fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        mention(bot, "EvWarm", "C0H", "1713500400.000100", "帮助")
        assert wait_until(lambda: answers(fake_slack, "C0H", "1713500400.000100"))
        private_redis.pause(8)  # hung: every command waits
        started = time.monotonic()
        mention(bot, "EvHung", "C0H", "1713500400.000200", "帮助")
        mention(bot, "EvHungSub", "C0H", "1713500400.000300", "订阅 npu")
        assert wait_until(lambda: answers(fake_slack, "C0H", "1713500400.000200")
                          and answers(fake_slack, "C0H", "1713500400.000300"), timeout=6)
        assert time.monotonic() - started < 6  # answered while Redis still hangs (the pause is 8 s)
        said = json.dumps(answers(fake_slack, "C0H", "1713500400.000300"), ensure_ascii=False)
        assert "没有保存" in said
