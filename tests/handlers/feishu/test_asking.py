"""Every kind of request once, as a person asks it in a Feishu group: events through the real lark-oapi
dispatcher, cards out of the fake Open API — slow answers as a "处理中" card patched into the answer,
private ones (subscriptions, the help, questions back, errors) as ephemeral cards, a digest as one card,
and a button pressed twice answered once."""

from __future__ import annotations

import json
from typing import Any

import httpx
from fakes.feishu_api import FakeFeishuAPI, card_problem

from bot.handlers.feishu.app import FeishuBot

from .conftest import fixture, post_event


def _message(text: str, n: int, *, chat_type: str = "group", chat: str = "oc_group_0001") -> dict[str, Any]:
    payload = fixture("group_mention_text")
    payload["header"]["event_id"] = f"ev_ask_{n:03d}"
    payload["event"]["message"].update({"message_id": f"om_ask_{n:03d}", "chat_type": chat_type, "chat_id": chat,
                                        "content": json.dumps({"text": f"@_user_1 {text}"}, ensure_ascii=False)})
    return payload


def _shown(card: dict[str, Any]) -> str:
    return json.dumps(card, ensure_ascii=False)


async def test_each_kind_of_request_once(http: httpx.AsyncClient, bot: FeishuBot, fake_api: FakeFeishuAPI) -> None:
    public = [
        ("上周周报", "2026 第 16 周"),
        ("6046这个PR讲了什么", "PR #6046"),
        ("#6046 和 #6029 哪个更值得读", "先读"),
        ("npu 标签 W16", "npu · 2026 第 16 周"),
        ("本月合并了哪些 PR", "合并的 PR"),
        ("W16 有没有改 megatron 的 PR", "与“megatron”相关的 PR"),
        ("上周谁贡献最多", "的贡献者"),
        ("上上周周报", "最近一个有合并 PR 的周是 2026-W16"),
        ("label npu", "npu · 2026 第 16 周"),  # no sentence: the channel's language (zh)
    ]
    for n, (text, words) in enumerate(public):
        before = len(fake_api.replies())
        await post_event(http, bot, _message(text, n))
        sent = fake_api.replies()[before:]
        assert sent, text
        first = sent[0]
        assert first.target == f"om_ask_{n:03d}"
        assert first.reply_in_thread
        assert words in _shown(first.content), (text, _shown(first.content)[:300])
        assert "处理中" not in _shown(first.content)  # the working card became the answer
        assert all(card_problem(m.content) is None for m in sent)
    digest = fake_api.replies()[0]
    assert [m for m in fake_api.replies() if m.target == "om_ask_000"] == [digest]  # one card, not three
    assert digest.message_id in {m for m, _ in fake_api.patches}

    private = [("订阅 npu", "已订阅 verl-project/verl：npu"), ("help", "我能做什么"), ("第60周周报", "ISO 周只有"),
               ("今天天气怎么样", "你可能想问"), ("PR #999999 值得读吗", "没有找到 PR #999999")]
    replies = len(fake_api.replies())
    for n, (text, words) in enumerate(private, 100):
        before = len(fake_api.ephemerals)
        await post_event(http, bot, _message(text, n))
        shown = fake_api.ephemerals[before:]
        assert shown, text
        assert shown[0]["open_id"] == "ou_alice_0001"
        assert words in _shown(shown[0]["card"]), text
        assert "/work/" not in _shown(shown[0]["card"])
        assert ".jsonl" not in _shown(shown[0]["card"])
    # the slow one that failed (PR #999999) left its 处理中 card saying where the answer went
    assert len([m for m in fake_api.replies()[replies:] if "只有你能看到" in _shown(m.content)]) == 1

    before = len(fake_api.replies())
    await post_event(http, bot, _message("我订阅了什么", 200, chat_type="p2p", chat="oc_alice_p2p"))
    assert len(fake_api.replies()) == before + 1  # a p2p chat: a normal reply


async def test_the_latest_week_button_pressed_twice_posts_one_card(
    http: httpx.AsyncClient, bot: FeishuBot, fake_api: FakeFeishuAPI,
) -> None:
    await post_event(http, bot, _message("上上周周报", 1))
    [empty] = fake_api.replies()
    button = next(e for e in empty.content["body"]["elements"] if e["tag"] == "button")
    value = button["behaviors"][0]["value"]
    assert value["window"] == "2026-W16"
    for n in (1, 2):
        payload = fixture("card_action")
        payload["header"]["event_id"] = f"ev_open_{n}"
        payload["event"]["context"]["open_message_id"] = empty.message_id
        payload["event"]["action"]["value"] = value
        response = await post_event(http, bot, payload)
    assert response.json()["toast"]["content"] == "这段时间的回答已经在话题里了。"
    opened = fake_api.replies()[1:]
    assert len(opened) == 1
    assert "2026 第 16 周" in _shown(opened[0].content)
