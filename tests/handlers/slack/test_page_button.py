"""完整报告 as a link to the page: Slack still reports the press of a URL button; the bot only acknowledges
it (no "unhandled request" 404, nothing posted), and the card's other controls still find its repository."""

from __future__ import annotations

import time

import pytest
from fakes.slack_api import FakeSlack

from bot.cards.actions import ACTION_OPEN_PAGE, ACTION_SUBSCRIBE_LABEL
from bot.config import Settings

from .conftest import StartBot, post_action

PAGE = "https://prhub.example.com/pages/abc.def.ghi"


@pytest.fixture
def bot_settings(bot_settings: Settings) -> Settings:
    """The channel may also see acme/rocket (the card's repository): access follows the allow-list."""
    return bot_settings.model_copy(update={"allowed_repos": ("acme/rocket",)})


def _payload(fake: FakeSlack, action: dict[str, object]) -> dict[str, object]:
    card = {"type": "message", "ts": "1713600000.000900", "blocks": [
        {"type": "actions", "block_id": "a1", "elements": [
            {"type": "button", "action_id": ACTION_OPEN_PAGE, "text": {"type": "plain_text", "text": "完整报告"},
             "url": PAGE, "value": "acme/rocket|2026-W16"}]}]}
    return {"type": "block_actions", "user": {"id": "U0ALICE"}, "team": {"id": "T0TEAM"}, "api_app_id": "A0APP",
            "channel": {"id": "C0CHAN"}, "message": card, "response_url": fake.response_url("page"),
            "container": {"type": "message", "message_ts": card["ts"], "channel_id": "C0CHAN"},
            "trigger_id": "1.2.3", "actions": [action]}


def test_the_page_button_is_only_acknowledged(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    press = {"type": "button", "action_id": ACTION_OPEN_PAGE, "block_id": "a1", "value": "verl-project/verl|2026-W16",
             "action_ts": "1713600001.000000"}
    answer = post_action(bot, _payload(fake_slack, press))
    assert answer.status_code == 200
    time.sleep(1.0)
    assert fake_slack.of("chat.postMessage") == []
    assert fake_slack.of("response_url") == []


def test_the_subscribe_menu_of_a_linked_card_knows_its_repository(start_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = start_bot()
    pick = {"type": "static_select", "action_id": ACTION_SUBSCRIBE_LABEL, "block_id": "a1",
            "selected_option": {"text": {"type": "plain_text", "text": "npu"}, "value": "npu"},
            "action_ts": "1713600001.000000"}
    assert post_action(bot, _payload(fake_slack, pick)).status_code == 200
    [note] = fake_slack.wait_for("response_url", 1)
    assert "npu" in note.args["text"]
    assert "acme/rocket" in note.args["text"]  # the card's repository, not the channel's default
