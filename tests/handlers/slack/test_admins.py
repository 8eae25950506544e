"""Who may change a Slack channel's subscriptions, through the real bolt app (signed HTTP requests): with
admins configured, a member who is not one is refused and told so — by the slash command, a mention and the
subscribe menu — an admin may, and a person's DM is theirs."""

from __future__ import annotations

import json

import pytest
from fakes.slack_api import BOT_TOKEN, FakeSlack

from bot.config import Settings, load_settings

from .conftest import EXAMPLE, REPO, SIGNING_SECRET, StartBot, post_action, post_command, post_event


@pytest.fixture
def bot_settings(fake_slack: FakeSlack) -> Settings:  # start_bot builds the bot on these
    return load_settings(
        slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=fake_slack.base_url + "/api",
        default_source=f"jsonl:{EXAMPLE}", default_repo=REPO, language="zh", admins=("slack:U0ADMIN",),
    )


def _mention(text: str, *, user: str, ts: str, channel: str = "C0CHAN") -> dict[str, object]:
    return {"type": "app_mention", "user": user, "text": f"<@U0BOT> {text}", "ts": ts, "channel": channel,
            "event_ts": ts}


def test_a_member_who_is_not_an_admin_is_refused_and_told(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    post_command(bot, "subscribe me to npu -ci", response_url=fake_slack.response_url("c1"))  # U0ALICE in C0CHAN
    [refusal] = fake_slack.wait_for("response_url", 1)
    assert refusal.args["response_type"] == "ephemeral"
    assert "Only this channel's admins can change its subscriptions (admins: U0ADMIN)" in refusal.args["text"]

    post_event(bot, _mention("订阅 npu", user="U0ALICE", ts="1713500100.000100"), event_id="Ev0REFUSE")
    [reply] = fake_slack.wait_for("chat.postEphemeral", 1)  # only the asker sees it
    assert (reply.args["user"], reply.args["thread_ts"]) == ("U0ALICE", "1713500100.000100")
    said = json.dumps(reply.args["blocks"], ensure_ascii=False)
    assert "只有这个频道的管理员可以修改它的订阅（管理员：U0ADMIN）" in said

    post_event(bot, _mention("订阅 npu", user="U0ADMIN", ts="1713500200.000100"), event_id="Ev0ADMIN")
    posts = fake_slack.wait_for("chat.postEphemeral", 2)
    assert "已订阅 verl-project/verl：npu" in json.dumps(posts[-1].args["blocks"], ensure_ascii=False)
    assert fake_slack.of("chat.postMessage") == []

    post_command(bot, "unsubscribe all", response_url=fake_slack.response_url("c2"))  # Alice again: refused
    post_command(bot, "subscriptions", response_url=fake_slack.response_url("c3"))  # but she may look
    notes = fake_slack.wait_for("response_url", 3)
    assert "只有这个频道的管理员" in notes[1].args["text"]  # a bare command: the channel's language
    assert "npu（verl-project/verl）" in notes[2].args["blocks"][0]["text"]["text"]


def test_the_subscribe_menu_refuses_a_non_admin(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    card = {"type": "message", "ts": "1713600000.000100", "blocks": [
        {"type": "actions", "elements": [
            {"type": "button", "action_id": "prhub_full_report", "value": f"{REPO}|2026-W16"}]}]}
    payload = {
        "type": "block_actions", "user": {"id": "U0ALICE"}, "team": {"id": "T0TEAM"}, "api_app_id": "A0APP",
        "channel": {"id": "C0CHAN"}, "message": card, "response_url": fake_slack.response_url("menu"),
        "container": {"type": "message", "message_ts": card["ts"], "channel_id": "C0CHAN"}, "trigger_id": "1.2.3",
        "actions": [{"type": "static_select", "action_id": "prhub_subscribe_label", "block_id": "b2",
                     "selected_option": {"text": {"type": "plain_text", "text": "npu"}, "value": "npu"},
                     "action_ts": "1713600001.000000"}],
    }
    assert post_action(bot, payload).status_code == 200
    [note] = fake_slack.wait_for("response_url", 1)
    assert note.args["response_type"] == "ephemeral"
    assert "只有这个频道的管理员可以修改它的订阅" in note.args["text"]


def test_a_dm_is_its_person_s(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    dm = {"type": "message", "channel_type": "im", "user": "U0ALICE", "text": "订阅 npu", "ts": "1713500300.000100",
          "channel": "D0ALICE"}
    post_event(bot, dm, event_id="Ev0DM")
    [reply] = fake_slack.wait_for("chat.postMessage", 1)
    assert "已订阅 verl-project/verl：npu" in json.dumps(reply.args["blocks"], ensure_ascii=False)


def test_the_preview_buttons_keep_or_undo_a_new_subscription(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    """Saving answers with the preview (issue 29) and two buttons: 保留 says so, 撤销 removes the subscription."""
    bot = start_bot()
    dm = {"type": "message", "channel_type": "im", "user": "U0ALICE", "text": "订阅 npu", "ts": "1713500300.000100",
          "channel": "D0ALICE"}
    post_event(bot, dm, event_id="Ev0PREVIEW")
    [reply] = fake_slack.wait_for("chat.postMessage", 1)
    blocks = reply.args["blocks"]
    blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
    said = json.dumps(blocks, ensure_ascii=False)
    assert "这个订阅会发出" in said
    [buttons] = [b for b in blocks if b["type"] == "actions"]
    assert [(e["action_id"], e["value"]) for e in buttons["elements"]] == [
        ("prhub_keep_subscription", f"{REPO}|label:npu"), ("prhub_undo_subscription", f"{REPO}|label:npu")]

    def press(action_id: str, name: str) -> None:
        payload = {
            "type": "block_actions", "user": {"id": "U0ALICE"}, "team": {"id": "T0TEAM"}, "api_app_id": "A0APP",
            "channel": {"id": "D0ALICE"}, "message": {"type": "message", "ts": "1713500301.000100"},
            "response_url": fake_slack.response_url(name), "trigger_id": "1.2.3",
            "container": {"type": "message", "message_ts": "1713500301.000100", "channel_id": "D0ALICE"},
            "actions": [{"type": "button", "action_id": action_id, "block_id": "b9", "value": f"{REPO}|label:npu",
                         "action_ts": "1713500302.000000"}]}
        assert post_action(bot, payload).status_code == 200

    press("prhub_keep_subscription", "keep")
    [kept] = fake_slack.wait_for("response_url", 1)
    assert "好的，保留这个订阅。" in kept.args["text"]
    press("prhub_undo_subscription", "undo")
    notes = fake_slack.wait_for("response_url", 2)
    assert "已取消订阅 verl-project/verl：npu。" in json.dumps(notes[1].args, ensure_ascii=False)
