"""Who may change a Feishu group's subscriptions, through the real lark-oapi dispatcher: with admins configured, a
member who is not one is refused and told so (in a reply card and on the 订阅此标签 button); an admin may; a
person's p2p chat is theirs."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fakes.feishu_api import FakeFeishuAPI

from bot.config import Settings
from bot.handlers.core import Conversation
from bot.handlers.feishu.app import FeishuBot

from .conftest import EXAMPLE, REPO, fixture, post_event


@pytest.fixture
def settings(verl_settings: Settings) -> Settings:  # the conftest's services are built on these
    return verl_settings.model_copy(update={"default_source": f"jsonl:{EXAMPLE}", "default_repo": REPO,
                                            "admins": ("feishu:ou_admin_0009",)})


def _message(text: str, *, sender: str, message_id: str, chat_type: str = "group",
             chat: str = "oc_group_0001") -> dict[str, Any]:
    payload = fixture("group_mention_text")
    payload["header"]["event_id"] = f"ev_{message_id}"
    event = payload["event"]
    event["sender"]["sender_id"]["open_id"] = sender
    event["message"].update({"message_id": message_id, "chat_type": chat_type, "chat_id": chat,
                             "content": json.dumps({"text": f"@_user_1 {text}"}, ensure_ascii=False)})
    return payload


def _card_text(card: dict[str, Any]) -> str:
    return " ".join(str(e.get("content", "")) for e in card["body"]["elements"])


async def test_a_member_who_is_not_an_admin_is_refused_and_told(http: httpx.AsyncClient, bot: FeishuBot,
                                                                fake_api: FakeFeishuAPI) -> None:
    response = await post_event(http, bot, _message("订阅 npu -ci", sender="ou_alice_0001", message_id="om_a1"))
    assert response.status_code == 200
    assert fake_api.replies() == []  # a subscription answer in a group: only the asker sees it
    [reply] = fake_api.ephemerals
    assert (reply["chat_id"], reply["open_id"]) == ("oc_group_0001", "ou_alice_0001")
    assert "只有这个频道的管理员可以修改它的订阅" in _card_text(reply["card"])
    assert "ou_admin_0009" in _card_text(reply["card"])
    assert reply["card"]["header"]["template"] == "red"
    group = Conversation("feishu", "oc_group_0001", "ou_alice_0001")
    assert await bot.core.subscriptions(group) == ()

    await post_event(http, bot, _message("订阅 npu -ci", sender="ou_admin_0009", message_id="om_a2"))
    assert "已订阅 verl-project/verl：npu，排除 ci" in _card_text(fake_api.ephemerals[-1]["card"])
    await post_event(http, bot, _message("退订全部", sender="ou_alice_0001", message_id="om_a3"))
    assert "只有这个频道的管理员" in _card_text(fake_api.ephemerals[-1]["card"])
    assert [s.filter.text() for s in await bot.core.subscriptions(group)] == ["label:npu -label:ci"]
    changes = await bot.core._subscriptions.changes()
    assert [(c.by, c.action) for c in changes] == [("ou_admin_0009", "subscribe")]


async def test_the_subscribe_button_refuses_a_non_admin_with_a_toast(http: httpx.AsyncClient, bot: FeishuBot,
                                                                     fake_api: FakeFeishuAPI) -> None:
    payload = fixture("card_action")
    payload["event"]["action"]["value"] = {"action": "prhub_subscribe_label", "repo": REPO, "label": "npu",
                                           "lang": "zh"}
    response = await post_event(http, bot, payload)
    toast = response.json()["toast"]
    assert toast["type"] == "error"
    assert "只有这个频道的管理员可以修改它的订阅" in toast["content"]


async def test_a_p2p_chat_is_its_person_s(http: httpx.AsyncClient, bot: FeishuBot, fake_api: FakeFeishuAPI) -> None:
    await post_event(http, bot, _message("subscribe me to npu", sender="ou_alice_0001", message_id="om_p1",
                                    chat_type="p2p", chat="oc_alice_p2p"))
    assert "Subscribed to verl-project/verl: npu" in _card_text(fake_api.replies()[-1].content)  # a DM: normal
    # a button pressed later in that p2p chat: the chat is remembered as Alice's, so no admin is needed
    payload = fixture("card_action")
    payload["header"]["event_id"] = "ev_card_p2p"
    payload["event"]["operator"]["open_id"] = "ou_alice_0001"
    payload["event"]["context"]["open_chat_id"] = "oc_alice_p2p"
    payload["event"]["action"]["value"] = {"action": "prhub_subscribe_label", "repo": REPO, "label": "rollout",
                                           "lang": "zh"}
    response = await post_event(http, bot, payload)
    assert response.json()["toast"]["type"] == "success"
