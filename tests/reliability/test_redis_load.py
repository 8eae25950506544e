"""Issue 30: a healthy Redis under a burst is not an outage, and a restarted Redis's stale pooled
connections are replaced — through the real bolt app over HTTP on a private ``redis-server``."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import httpx
import pytest
from fakes.slack_api import FakeSlack

from .conftest import Bot, PrivateRedis, bot_settings
from .test_chat_faults import _body, _headers, answers, mention, wait_until

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

OUTAGE = "Redis does not answer"
"""The start of the store's one warning when it declares an outage."""


def test_a_burst_on_a_busy_pool_is_no_outage_and_loses_no_subscription(
        fake_slack: FakeSlack, private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    # four pooled connections, a caller waits at most 0.2 s for one: a burst of 200 finds the pool busy
    with Bot(bot_settings(fake_slack), private_redis.url, max_connections=4, pool_timeout_s=0.2) as bot:
        healths: list[str] = []

        async def burst() -> None:
            gate = asyncio.Semaphore(100)
            async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=120)) as http:
                async def one(n: int) -> None:
                    text = "订阅 npu" if n % 40 == 0 else "帮助"
                    body = _body(f"EvLoad{n}", f"C0L{n:03d}", f"1713700000.{n:06d}", text)
                    async with gate:
                        answer = await http.post(f"{bot.url}/slack/events", content=body, headers=_headers(body))
                        assert answer.status_code == 200

                async def watch() -> None:
                    for _ in range(20):
                        healths.append((await http.get(f"{bot.url}/healthz")).json()["status"])
                        await asyncio.sleep(0.05)

                await asyncio.gather(watch(), *(one(n) for n in range(200)))
        asyncio.run(burst())
        assert wait_until(lambda: all(answers(fake_slack, f"C0L{n:03d}", f"1713700000.{n:06d}")
                                      for n in range(200)), timeout=90)
        time.sleep(0.5)
        assert [len(answers(fake_slack, f"C0L{n:03d}", f"1713700000.{n:06d}")) for n in range(200)] == [1] * 200
        for n in range(0, 200, 40):  # every subscription sent in the burst was saved, none refused
            said = json.dumps(answers(fake_slack, f"C0L{n:03d}", f"1713700000.{n:06d}"), ensure_ascii=False)
            assert "已订阅" in said, (n, said)
        assert set(healths) == {"ok"}
        assert bot.store is not None
        assert bot.store.outages == 0
    assert not [r for r in caplog.records if r.getMessage().startswith(OUTAGE)]


def test_after_a_redis_restart_redeliveries_are_not_answered_again(
        fake_slack: FakeSlack, private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        for n in range(5):
            mention(bot, f"EvRestart{n}", "C0RS", f"1713700100.{n:06d}", "帮助")
        assert wait_until(lambda: all(answers(fake_slack, "C0RS", f"1713700100.{n:06d}") for n in range(5)))
        private_redis.stop()  # nothing asks meanwhile: the pool still holds the old server's connections
        private_redis.start()  # the same data, a new server
        for n in range(5):  # the events redelivered after the restart
            mention(bot, f"EvRestart{n}", "C0RS", f"1713700100.{n:06d}", "帮助", retry=1)
        time.sleep(1.5)
        assert [len(answers(fake_slack, "C0RS", f"1713700100.{n:06d}")) for n in range(5)] == [1] * 5
        assert bot.health()["status"] == "ok"
    assert not [r for r in caplog.records if r.getMessage().startswith(OUTAGE)]


def test_healthz_answers_at_once_while_redis_hangs(fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    # the production timeout: a PING of the hung Redis would hold /healthz 2 s (compose gives up at 4 s)
    with Bot(bot_settings(fake_slack), private_redis.url, socket_timeout_s=2.0) as bot:
        private_redis.pause(8)
        mention(bot, "EvHang", "C0HG", "1713700200.000100", "帮助")  # the store finds Redis hung
        assert wait_until(lambda: bot.health()["redis"] == "down", timeout=6)
        took = []
        for _ in range(8):  # Redis is due another try every 0.5 s meanwhile
            started = time.monotonic()
            assert bot.health()["status"] == "degraded"
            took.append(time.monotonic() - started)
            time.sleep(0.3)
        assert max(took) < 1.0, took


def test_a_burst_at_start_up_asks_slack_who_the_bot_is_once(
        fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    """Every request of a burst reaching a bot that has not yet asked auth.test is answered (no HTTP 500 from a
    slow auth.test), and auth.test is asked once, not once per request (bot/handlers/slack/app.py)."""
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        before = sum(1 for c in fake_slack.calls if c.method == "auth.test")

        async def burst() -> list[int]:
            async with httpx.AsyncClient(timeout=60) as http:
                async def one(n: int) -> int:
                    body = _body(f"EvStart{n}", "C0ST", f"1713700200.{n:06d}", "帮助")
                    answer = await http.post(f"{bot.url}/slack/events", content=body, headers=_headers(body))
                    return answer.status_code

                return list(await asyncio.gather(*(one(n) for n in range(40))))

        assert asyncio.run(burst()) == [200] * 40
        assert wait_until(lambda: all(answers(fake_slack, "C0ST", f"1713700200.{n:06d}") for n in range(40)))
        assert sum(1 for c in fake_slack.calls if c.method == "auth.test") - before <= 1
