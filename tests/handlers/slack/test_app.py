"""The Slack bot end to end: signed requests into the real bolt app (HTTP mode), recorded
``chat.postMessage`` and ``response_url`` calls out of the fake Slack API."""

from __future__ import annotations

import time

import httpx
from fakes.slack_api import FakeSlack

from .conftest import SlowAnalyzer, StartBot, post_action, post_command, post_event

MENTION = {"type": "app_mention", "user": "U0ALICE", "text": "<@U0BOT> PR #6046 值得读吗", "ts": "1713500001.000200",
           "channel": "C0CHAN", "event_ts": "1713500001.000200"}


def test_healthz(start_bot: StartBot) -> None:
    bot = start_bot()
    answer = httpx.get(f"{bot.url}/healthz", timeout=5)
    assert answer.status_code == 200
    assert answer.json()["status"] == "ok"


def test_slash_digest_posts_the_card_alone_and_the_rest_when_full_report_is_pressed(
    start_bot: StartBot, fake_slack: FakeSlack,
) -> None:
    bot = start_bot()
    answer = post_command(bot, "digest 2026-W16", response_url=fake_slack.response_url("r1"))
    assert answer.status_code == 200
    assert "生成中" in answer.text
    [card] = fake_slack.wait_for("response_url", 1)
    assert card.args["response_type"] == "in_channel"
    assert card.args["blocks"][0]["text"]["text"] == "2026 第 16 周 · 04-13 至 04-19 周报"
    buttons = [e for b in card.args["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert any(e.get("action_id") == "prhub_full_report" for e in buttons)
    time.sleep(0.5)
    assert fake_slack.of("chat.postMessage") == []  # one card, not four messages at once
    ts = "1713500000.000150"
    payload = {
        "type": "block_actions", "user": {"id": "U0ALICE"}, "team": {"id": "T0TEAM"}, "api_app_id": "A0APP",
        "channel": {"id": "C0CHAN"}, "message": {"type": "message", "ts": ts, "blocks": card.args["blocks"]},
        "response_url": fake_slack.response_url("button"), "trigger_id": "1.2.3",
        "container": {"type": "message", "message_ts": ts, "channel_id": "C0CHAN"},
        "actions": [{"type": "button", "action_id": "prhub_full_report", "block_id": "b1",
                     "value": "verl-project/verl|2026-W16", "action_ts": "1713600001.000000"}],
    }
    assert post_action(bot, payload).status_code == 200
    rest = fake_slack.wait_for("chat.postMessage", 3)
    assert [p.args["thread_ts"] for p in rest] == [ts] * 3


def test_slow_slash_command_is_acked_within_three_seconds(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot(analyzer=SlowAnalyzer(5.0))
    started = time.monotonic()
    answer = post_command(bot, "pr 6046", response_url=fake_slack.response_url("slow"))
    acked = time.monotonic() - started
    assert answer.status_code == 200
    assert acked < 3.0, f"acked after {acked:.1f} s"
    assert answer.text == "生成中…"  # bolt answers a text-only ack as plain text: an ephemeral note
    [reply] = fake_slack.wait_for("response_url", 1, timeout=30)
    assert reply.at - started >= 4.5  # the work really took its 5 s, after the ack
    assert reply.args["response_type"] == "in_channel"
    assert reply.args["blocks"][0]["text"]["text"].startswith("PR #6046")


def test_an_event_delivered_three_times_is_answered_once(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    for retry in (None, 1, 2):
        assert post_event(bot, MENTION, event_id="Ev0RETRY", retry=retry).status_code == 200
    [reply] = fake_slack.wait_for("chat.postMessage", 1)
    time.sleep(1.0)
    assert len(fake_slack.of("chat.postMessage")) == 1
    assert reply.args["thread_ts"] == MENTION["ts"]
    assert reply.args["blocks"][0]["text"]["text"].startswith("PR #6046")


def test_a_mention_seen_as_app_mention_and_message_is_answered_once(
    start_bot: StartBot, fake_slack: FakeSlack,
) -> None:
    bot = start_bot()
    as_message = {**MENTION, "type": "message", "channel_type": "channel"}
    assert post_event(bot, MENTION, event_id="Ev0MENTION").status_code == 200
    assert post_event(bot, as_message, event_id="Ev0MESSAGE").status_code == 200
    fake_slack.wait_for("chat.postMessage", 1)
    time.sleep(1.0)
    assert len(fake_slack.of("chat.postMessage")) == 1


def test_a_dm_is_answered_in_its_thread(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    dm = {"type": "message", "channel_type": "im", "user": "U0ALICE", "text": "help", "ts": "1713500009.000100",
          "channel": "D0ALICE"}
    assert post_event(bot, dm, event_id="Ev0DM").status_code == 200
    [reply] = fake_slack.wait_for("chat.postMessage", 1)
    assert (reply.args["channel"], reply.args["thread_ts"]) == ("D0ALICE", dm["ts"])
    assert "prhub" in reply.args["blocks"][0]["text"]["text"]


def test_a_bad_signature_is_rejected(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    answer = post_command(bot, "digest", response_url=fake_slack.response_url("bad"), secret="not-the-secret")
    assert answer.status_code == 401
    time.sleep(0.5)
    assert [c for c in fake_slack.calls if c.method != "auth.test"] == []


def test_rate_limited_post_waits_for_retry_after(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    fake_slack.rate_limit_next("chat.postMessage", retry_after=1)
    post_event(bot, MENTION, event_id="Ev0LIMITED")
    [reply] = fake_slack.wait_for("chat.postMessage", 1)
    attempts = [c for c in fake_slack.calls if c.method == "chat.postMessage"]
    assert len(attempts) == 2
    assert attempts[1].at - attempts[0].at >= 1.0
    assert reply is attempts[1]


def test_without_membership_the_digest_goes_through_response_url(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    fake_slack.not_member.add("C0CLOSED")
    post_command(bot, "digest 2026-W16", response_url=fake_slack.response_url("closed"), channel="C0CLOSED")
    [reply] = fake_slack.wait_for("response_url", 1)
    assert reply.args["response_type"] == "in_channel"
    time.sleep(0.5)
    assert len(fake_slack.of("response_url")) == 1
    assert fake_slack.of("chat.postMessage") == []


def test_subscribe_then_list(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    post_command(bot, "subscribe npu", response_url=fake_slack.response_url("s1"))
    fake_slack.wait_for("response_url", 1)
    post_command(bot, "subscriptions", response_url=fake_slack.response_url("s2"))
    first, second = fake_slack.wait_for("response_url", 2)
    assert first.args["response_type"] == "ephemeral"
    assert "已订阅 verl-project/verl：npu" in first.args["text"]  # a bare command: the channel's language
    assert "npu（verl-project/verl）" in second.args["blocks"][0]["text"]["text"]  # no language: the channel's


def test_full_report_button_posts_the_rest_once(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    card = {"type": "message", "ts": "1713600000.000100", "blocks": [
        {"type": "actions", "elements": [
            {"type": "button", "action_id": "prhub_full_report", "value": "verl-project/verl|2026-W16"}]}]}
    payload = {
        "type": "block_actions", "user": {"id": "U0ALICE"}, "team": {"id": "T0TEAM"}, "api_app_id": "A0APP",
        "channel": {"id": "C0CHAN"}, "message": card, "response_url": fake_slack.response_url("button"),
        "container": {"type": "message", "message_ts": card["ts"], "channel_id": "C0CHAN"}, "trigger_id": "1.2.3",
        "actions": [{"type": "button", "action_id": "prhub_full_report", "block_id": "b1",
                     "value": "verl-project/verl|2026-W16", "action_ts": "1713600001.000000"}],
    }
    assert post_action(bot, payload).status_code == 200
    posts = fake_slack.wait_for("chat.postMessage", 3)
    assert [p.args["thread_ts"] for p in posts] == [card["ts"]] * 3
    assert post_action(bot, payload).status_code == 200
    [note] = fake_slack.wait_for("response_url", 1)
    assert note.args["response_type"] == "ephemeral"
    assert len(fake_slack.of("chat.postMessage")) == 3


def _ts_of_first(fake: FakeSlack) -> str:
    """The ts the fake gave the first accepted post (its counter starts at …000100 + 100)."""
    return "1713500000.000200"


def test_full_report_that_failed_can_be_pressed_again(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    """A full report whose digest fails says so, and does not block the next press."""
    bot = start_bot()
    card = {"type": "message", "ts": "1713600000.000900", "blocks": []}
    payload = {
        "type": "block_actions", "user": {"id": "U0ALICE"}, "team": {"id": "T0TEAM"}, "api_app_id": "A0APP",
        "channel": {"id": "C0CHAN"}, "message": card, "response_url": fake_slack.response_url("button"),
        "container": {"type": "message", "message_ts": card["ts"], "channel_id": "C0CHAN"}, "trigger_id": "1.2.3",
        "actions": [{"type": "button", "action_id": "prhub_full_report", "block_id": "b1",
                     "value": "verl-project/verl|2026-W99", "action_ts": "1713600001.000000"}],
    }
    assert post_action(bot, payload).status_code == 200
    [error] = fake_slack.wait_for("response_url", 1)
    assert "2026-W99" in str(error.args)
    assert post_action(bot, payload).status_code == 200  # the same press again: tried again, not "already done"
    notes = fake_slack.wait_for("response_url", 2)
    assert "2026-W99" in str(notes[1].args)
    assert fake_slack.of("chat.postMessage") == []


def test_full_report_pressed_again_a_day_later_posts_nothing(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    """The claim "this thread has its full report" lives as long as the push markers (400 days), not as a
    delivery's dedup claim: the clock of the store is moved a day, then a year, and the press posts nothing."""
    from bot.claims import DONE_TTL_S
    from bot.store import MemoryStore

    now = [1_000.0]
    bot = start_bot(store=MemoryStore(clock=lambda: now[0]))
    card = {"type": "message", "ts": "1713600000.000300", "blocks": []}
    payload = {
        "type": "block_actions", "user": {"id": "U0ALICE"}, "team": {"id": "T0TEAM"}, "api_app_id": "A0APP",
        "channel": {"id": "C0CHAN"}, "message": card, "response_url": fake_slack.response_url("later"),
        "container": {"type": "message", "message_ts": card["ts"], "channel_id": "C0CHAN"}, "trigger_id": "1.2.3",
        "actions": [{"type": "button", "action_id": "prhub_full_report", "block_id": "b1",
                     "value": "verl-project/verl|2026-W16", "action_ts": "1713600001.000000"}],
    }
    assert post_action(bot, payload).status_code == 200
    posted = len(fake_slack.wait_for("chat.postMessage", 3))
    for later in (24 * 3600, DONE_TTL_S - 24 * 3600 - 60):  # a day later, then almost 400 days later
        now[0] += later
        assert post_action(bot, payload).status_code == 200
        notes = fake_slack.wait_for("response_url", 1 if later == 24 * 3600 else 2)
        assert notes[-1].args["response_type"] == "ephemeral"
        assert "完整报告已在这条消息的话题里" in notes[-1].args["text"]
    time.sleep(0.5)
    assert len(fake_slack.of("chat.postMessage")) == posted
