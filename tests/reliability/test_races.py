"""Issue 30's races through the real bolt app over HTTP on a private Redis: two deliveries of one event at
the same instant, a busy channel's answers behind Slack's pacing, and an answer that fails after the ack."""

from __future__ import annotations

import asyncio
import logging
import time

import httpx
import pytest
from fakes.slack_api import FakeSlack

from bot.delivery.pacing import Pacer

from .conftest import Bot, PrivateRedis, bot_settings
from .test_chat_faults import _body, _headers, answers, mention, wait_until

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


async def _post_all(url: str, requests: list[tuple[str, dict[str, str]]]) -> list[int]:
    """POST every ``(body, headers)`` at the same instant; their statuses."""
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=200)) as http:
        gate = asyncio.Event()

        async def one(body: str, headers: dict[str, str]) -> int:
            await gate.wait()
            return (await http.post(f"{url}/slack/events", content=body, headers=headers)).status_code

        tasks = [asyncio.create_task(one(body, headers)) for body, headers in requests]
        await asyncio.sleep(0.05)
        gate.set()
        return list(await asyncio.gather(*tasks))


def test_40_duplicate_pairs_at_the_same_instant_are_each_answered_once(
        fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    # each pair: the delivery and Slack's retry of it (same event id, same channel and ts), sent together
    requests = []
    for n in range(40):
        body = _body(f"EvPair{n}", f"C0P{n:02d}", f"1713600000.{n:06d}", "帮助")
        requests += [(body, _headers(body)), (body, _headers(body, retry=1))]
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        statuses = asyncio.run(_post_all(bot.url, requests))
        assert statuses == [200] * 80
        assert wait_until(lambda: all(answers(fake_slack, f"C0P{n:02d}", f"1713600000.{n:06d}")
                                      for n in range(40)), timeout=60)
        time.sleep(0.5)
        counts = [len(answers(fake_slack, f"C0P{n:02d}", f"1713600000.{n:06d}")) for n in range(40)]
        assert counts == [1] * 40  # none lost, none twice


def test_a_mention_and_its_message_event_at_the_same_instant_are_answered_once(
        fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    # Slack sends a mention twice, as app_mention and as message (two event ids, one channel and ts)
    requests = []
    for n in range(20):
        first = _body(f"EvM{n}", f"C0M{n:02d}", f"1713600100.{n:06d}", "帮助")
        second = first.replace('"app_mention"', '"message"').replace(f'"EvM{n}"', f'"EvMsg{n}"')
        requests += [(first, _headers(first)), (second, _headers(second))]
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        assert asyncio.run(_post_all(bot.url, requests)) == [200] * 40
        assert wait_until(lambda: all(answers(fake_slack, f"C0M{n:02d}", f"1713600100.{n:06d}")
                                      for n in range(20)), timeout=60)
        time.sleep(0.5)
        assert [len(answers(fake_slack, f"C0M{n:02d}", f"1713600100.{n:06d}")) for n in range(20)] == [1] * 20


def test_a_busy_channel_answers_every_mention_however_long_its_turn_takes(
        fake_slack: FakeSlack, private_redis: PrivateRedis) -> None:
    # one message per 0.1 s to a channel; 40 mentions queue 4 s of pacing behind a 1 s deadline on the work
    slow = Pacer({"slack": ((1, 0.1),)})
    settings = bot_settings(fake_slack, answer_deadline_s=1.0)
    requests = []
    for n in range(40):
        body = _body(f"EvBusy{n}", "C0BUSY", f"1713600200.{n:06d}", "帮助")
        requests.append((body, _headers(body)))
    with Bot(settings, private_redis.url, pacer=slow) as bot:
        assert asyncio.run(_post_all(bot.url, requests)) == [200] * 40
        assert wait_until(lambda: all(answers(fake_slack, "C0BUSY", f"1713600200.{n:06d}") for n in range(40)),
                          timeout=60)
        time.sleep(0.3)
        counts = [len(answers(fake_slack, "C0BUSY", f"1713600200.{n:06d}")) for n in range(40)]
        assert counts == [1] * 40
        failed = [c for c in fake_slack.of("chat.postEphemeral") if "没能回答" in str(c.args.get("text", ""))]
        assert failed == []


def test_an_answer_refused_after_the_ack_is_tried_again_by_the_bot(
        fake_slack: FakeSlack, private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with Bot(bot_settings(fake_slack), private_redis.url) as bot:
        fake_slack.fail_next("chat.postMessage", 3)  # the first try and slack_sdk's two retries
        posted = ("chat.postMessage",)
        mention(bot, "EvRetry", "C0RT", "1713600300.000100", "PR #6046 值得读吗")  # no platform retry follows
        assert wait_until(lambda: answers(fake_slack, "C0RT", "1713600300.000100", posted), timeout=20)
        mention(bot, "EvRetry", "C0RT", "1713600300.000100", "PR #6046 值得读吗", retry=1)  # a late retry
        time.sleep(1.0)
        assert len(answers(fake_slack, "C0RT", "1713600300.000100", posted)) == 1
    lines = [r.getMessage() for r in caplog.records if "EvRetry" in r.getMessage()]
    assert any("try 1 of 3 failed" in line for line in lines)
    assert any("answered in" in line for line in lines)
