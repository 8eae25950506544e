"""Recorded Feishu payloads through the real lark-oapi dispatcher, answered against the fake Open API."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from fakes.feishu_api import BOT_OPEN_ID, FakeFeishuAPI, card_problem

from bot.cards.feishu import render_feishu
from bot.handlers.feishu.app import FeishuBot
from bot.handlers.feishu.events import MessageReceived, read_message
from bot.handlers.intents import parse_intent

from .conftest import fixture, post_event


@pytest.mark.parametrize(
    ("name", "status", "replies", "title"),
    [
        ("group_mention_text", 200, 1, "PR #6046"),
        ("group_post", 200, 1, "2026 第 16 周"),  # a digest in chat: the card alone
        ("p2p_text", 200, 1, "npu"),
        ("group_no_mention", 200, 0, None),
        ("wrong_token", 401, 0, None),
        ("url_challenge", 200, 0, None),
    ],
)
async def test_each_message_gets_exactly_one_reply_with_a_valid_card(
    name: str, status: int, replies: int, title: str | None, http: httpx.AsyncClient, bot: FeishuBot,
    fake_api: FakeFeishuAPI,
) -> None:
    payload = fixture(name)
    response = await post_event(http, bot, payload)
    assert response.status_code == status, response.text
    sent = fake_api.replies()
    assert len(sent) == replies
    if name == "url_challenge":
        assert response.json() == {"challenge": payload["challenge"]}
    for message in sent:
        assert message.target == payload["event"]["message"]["message_id"]
        assert message.reply_in_thread
        assert message.msg_type == "interactive"
        assert card_problem(message.content) is None
        assert title is not None
        assert title in message.content["header"]["title"]["content"]


async def test_wrong_token_reaches_no_handler(http: httpx.AsyncClient, bot: FeishuBot,
                                              fake_api: FakeFeishuAPI) -> None:
    response = await post_event(http, bot, fixture("wrong_token"))
    assert (response.status_code, response.json()) == (401, {"msg": "invalid request"})  # one answer for all
    assert not [c for c in fake_api.calls if c.path.startswith("/open-apis/im/")]


async def test_same_message_three_times_is_answered_once(http: httpx.AsyncClient, bot: FeishuBot,
                                                         fake_api: FakeFeishuAPI) -> None:
    first = fixture("group_mention_text")
    later = []
    for n in (2, 3):  # Feishu may redeliver under a new event id
        again = json.loads(json.dumps(first))
        again["header"]["event_id"] = f"ev_text_000{n}"
        later.append(again)
    responses = await asyncio.gather(*(post_event(http, bot, p) for p in (first, *later)))
    assert [r.status_code for r in responses] == [200, 200, 200]
    await bot.drain()
    assert len(fake_api.replies()) == 1


async def test_a_bot_restart_does_not_answer_again(http: httpx.AsyncClient, bot: FeishuBot,
                                                   fake_api: FakeFeishuAPI) -> None:
    await post_event(http, bot, fixture("p2p_text"))
    fresh = FeishuBot(deliverer=bot.deliverer, core=bot.core, claims=bot.claims, verification_token="v-token-test")
    await fresh.start()
    from bot.handlers.feishu.events import IncomingMessage

    message = read_message(fixture("p2p_text"), bot_open_id=fresh.open_id)  # type: ignore[arg-type]
    assert isinstance(message, IncomingMessage)
    await fresh.handle_message(message)
    assert len(fake_api.replies()) == 1


async def test_full_report_button_posts_the_rest_in_the_thread(http: httpx.AsyncClient, bot: FeishuBot,
                                                               fake_api: FakeFeishuAPI) -> None:
    payload = fixture("card_action")
    response = await post_event(http, bot, payload)
    assert response.status_code == 200
    assert response.json()["toast"]["content"] == "正在发送完整报告…"
    digest = await bot.core.digest("verl-project/verl", "2026-W16", _conversation(), "zh")
    expected = render_feishu(digest)[1:]
    sent = fake_api.replies()
    assert [m.content for m in sent] == expected
    assert all(m.target == "om_card_0001" and m.reply_in_thread for m in sent)
    # the same callback delivered again changes nothing
    await post_event(http, bot, payload)
    assert len(fake_api.replies()) == len(expected)


async def test_a_digest_in_chat_is_one_card_and_full_report_pressed_twice_posts_the_rest_once(
    http: httpx.AsyncClient, bot: FeishuBot, fake_api: FakeFeishuAPI,
) -> None:
    await post_event(http, bot, fixture("group_post"))  # "周报 2026-W16": "处理中", patched into the digest card
    await bot.drain()
    [card] = fake_api.replies()
    assert "2026 第 16 周" in card.content["header"]["title"]["content"]
    assert [m for m, _ in fake_api.patches] == [card.message_id]
    for n in (3, 4):  # two presses, two event ids
        payload = fixture("card_action")
        payload["header"]["event_id"] = f"ev_card_000{n}"
        payload["event"]["context"]["open_message_id"] = card.message_id
        response = await post_event(http, bot, payload)
        await bot.drain()
    assert response.json()["toast"]["content"] == "完整报告已在这条消息的话题里"
    digest = await bot.core.digest("verl-project/verl", "2026-W16", _conversation(), "zh")
    assert len(fake_api.replies()) == 1 + len(render_feishu(digest)[1:])


async def test_subscribe_button_answers_with_a_toast(http: httpx.AsyncClient, bot: FeishuBot,
                                                     fake_api: FakeFeishuAPI) -> None:
    payload = fixture("card_action")
    payload["event"]["action"]["value"] = {"action": "prhub_subscribe_label", "repo": "verl-project/verl",
                                           "label": "npu", "lang": "zh"}
    response = await post_event(http, bot, payload)
    expected = ("已订阅 verl-project/verl：npu。符合的 PR 合并后会在这里提醒"
                "（每 10 分钟最多一条消息，列出这段时间合并的全部 PR）。")
    toast = response.json()["toast"]
    assert toast["type"] == "success"
    assert toast["content"].startswith(expected + "\n过去四周（")  # and the preview of the subscription (issue 29)
    assert "这个订阅会发出 13 条提醒" in toast["content"]
    subs = await bot.core.subscriptions(_conversation())
    assert [(s.repo, s.filter.text()) for s in subs] == [("verl-project/verl", "label:npu")]
    assert fake_api.replies() == []

    keep = fixture("card_action")  # the preview's 保留 / 撤销 (issue 29)
    keep["header"]["event_id"] += "-keep"
    keep["event"]["action"]["value"] = {"action": "prhub_keep_subscription", "repo": "verl-project/verl",
                                        "filter": "label:npu", "lang": "zh"}
    kept = (await post_event(http, bot, keep)).json()["toast"]
    assert kept == {"type": "success", "content": "好的，保留这个订阅。"}
    undo = fixture("card_action")
    undo["header"]["event_id"] += "-undo"
    undo["event"]["action"]["value"] = {"action": "prhub_undo_subscription", "repo": "verl-project/verl",
                                        "filter": "label:npu", "lang": "zh"}
    undone = (await post_event(http, bot, undo)).json()["toast"]
    assert undone == {"type": "success", "content": "已取消订阅 verl-project/verl：npu。"}
    assert await bot.core.subscriptions(_conversation()) == ()


async def test_analyze_button_replies_with_the_pr_card(http: httpx.AsyncClient, bot: FeishuBot,
                                                       fake_api: FakeFeishuAPI) -> None:
    payload = fixture("card_action")
    payload["header"]["event_id"] = "ev_card_0002"
    payload["event"]["action"]["value"] = {"action": "prhub_analyze_pr", "repo": "verl-project/verl",
                                           "number": "6046", "lang": "zh"}
    response = await post_event(http, bot, payload)
    assert response.json()["toast"]["content"] == "正在分析 PR #6046…"
    [sent] = fake_api.replies()
    assert sent.target == "om_card_0001"
    assert "PR #6046" in sent.content["header"]["title"]["content"]
    payload["header"]["event_id"] = "ev_card_0002b"  # pressed again: one card, a toast says where it is
    again = await post_event(http, bot, payload)
    assert again.json()["toast"]["content"] == "完整内容已经在这条消息的话题里了。"
    assert len(fake_api.replies()) == 1


def _conversation() -> Any:
    from bot.handlers.core import Conversation

    return Conversation(platform="feishu", channel="oc_group_0001", user="ou_alice_0001")


def test_mentions_resolve_and_only_the_bots_is_removed() -> None:
    message = read_message(fixture("group_mention_text"), bot_open_id=BOT_OPEN_ID)  # type: ignore[arg-type]
    assert message is not None
    assert message.text == "@Bob PR #6046 值得读吗"
    post = read_message(fixture("group_post"), bot_open_id=BOT_OPEN_ID)  # type: ignore[arg-type]
    assert post is not None
    assert post.text == "周报 2026-W16"
    assert read_message(fixture("group_no_mention"), bot_open_id=BOT_OPEN_ID) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["text", "post"])
def test_the_shared_intent_table_reads_the_same_through_feishu(kind: str) -> None:
    from handlers.test_intents import TABLE

    for text, intent in TABLE:
        if "<@" in text:
            continue
        if kind == "text":
            content: dict[str, Any] = {"text": f"@_user_1 {text}"}
        else:
            content = {"title": "", "content": [[{"tag": "at", "user_id": "@_user_1"}, {"tag": "text", "text": text}]]}
        payload: MessageReceived = {
            "header": {"event_id": "ev"},
            "event": {"sender": {"sender_id": {"open_id": "ou_x"}, "sender_type": "user"},
                      "message": {"message_id": "om", "chat_id": "oc", "chat_type": "group", "message_type": kind,
                                  "content": json.dumps(content, ensure_ascii=False),
                                  "mentions": [{"key": "@_user_1", "id": {"open_id": BOT_OPEN_ID}, "name": "prhub"}]}},
        }
        message = read_message(payload, bot_open_id=BOT_OPEN_ID)
        assert message is not None
        assert parse_intent(message.text) == intent, text


async def test_full_report_that_failed_says_so_and_can_be_pressed_again(
    http: httpx.AsyncClient, bot: FeishuBot, fake_api: FakeFeishuAPI,
) -> None:
    payload = fixture("card_action")
    payload["header"]["event_id"] = "ev_card_0099"
    payload["event"]["action"]["value"] = {"action": "prhub_full_report", "repo": "verl-project/verl",
                                           "window": "2026-W99", "lang": "zh"}
    await post_event(http, bot, payload)
    await bot.drain()
    [error] = fake_api.replies()
    assert error.content["header"]["template"] == "red"
    assert "2026-W99" in json.dumps(error.content, ensure_ascii=False)
    payload["header"]["event_id"] = "ev_card_0100"  # a second press on the same card
    response = await post_event(http, bot, payload)
    assert response.json()["toast"]["content"] == "正在发送完整报告…"  # not "already in the thread"


async def test_a_second_full_report_press_a_day_later_posts_nothing(
    client: Any, fake_api: FakeFeishuAPI, settings: Any,
) -> None:
    """The thread's claim lives as long as the push markers (400 days): moved a day, then almost 400 days."""
    from bot.app import build_services
    from bot.claims import DONE_TTL_S
    from bot.delivery.feishu import FeishuDeliverer
    from bot.handlers.feishu.actions import read_action
    from bot.store import MemoryStore

    from .conftest import NOW

    now = [50.0]
    services = build_services(settings, MemoryStore(clock=lambda: now[0]), clock=lambda: NOW)
    feishu = FeishuBot(deliverer=FeishuDeliverer(client), core=services.core, claims=services.claims)
    await feishu.start()
    payload = fixture("card_action")
    first = read_action(payload)
    assert first is not None
    assert (await feishu.handle_action(first))["toast"]["content"] == "正在发送完整报告…"
    await feishu.drain()
    posted = len(fake_api.replies())
    assert posted > 0
    for n, later in enumerate((24 * 3600, DONE_TTL_S - 24 * 3600 - 60)):
        now[0] += later
        payload["header"]["event_id"] = f"ev_card_later_{n}"  # a new press, not a redelivery
        again = read_action(payload)
        assert again is not None
        assert (await feishu.handle_action(again))["toast"]["content"] == "完整报告已在这条消息的话题里"
        await feishu.drain()
    assert len(fake_api.replies()) == posted
