"""The Open API client against the fake: bot info, replies in threads, rate limits, rejected cards."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fakes.feishu_api import BOT_OPEN_ID, FakeFeishuAPI, card_problem

from bot.cards.feishu import render_feishu
from bot.delivery.feishu import FeishuAPIError, FeishuClient, Target
from bot.models import Digest


def _texts(cards: list[dict[str, Any]]) -> list[str]:
    return [e.get("content", "") for c in cards for e in c["body"]["elements"] if e["tag"] == "markdown"]


async def test_bot_info_gives_the_open_id(client: FeishuClient) -> None:
    assert await client.bot_open_id() == BOT_OPEN_ID


async def test_cards_go_to_the_thread_in_order(client: FeishuClient, fake_api: FakeFeishuAPI,
                                               w16_digest: Digest) -> None:
    cards = render_feishu(w16_digest)
    ids = await client.send_cards(Target(reply_to="om_question"), cards, key="om_question")
    assert len(ids) == len(cards) == len(fake_api.messages)
    assert [m.content for m in fake_api.messages] == cards
    assert all(m.kind == "reply" and m.target == "om_question" and m.reply_in_thread for m in fake_api.messages)
    # the same answer sent again (a retry after a crash) is not doubled: same uuids
    await client.send_cards(Target(reply_to="om_question"), cards, key="om_question")
    assert len(fake_api.messages) == len(cards)


async def test_rate_limits_are_waited_out(client: FeishuClient, fake_api: FakeFeishuAPI, sleeps: list[float],
                                          w16_digest: Digest) -> None:
    fake_api.rate_limit_next = 2
    await client.send_cards(Target(chat_id="oc_push"), render_feishu(w16_digest)[:1])
    assert len(fake_api.messages) == 1
    assert fake_api.messages[0].kind == "create"
    assert fake_api.messages[0].target == "oc_push"
    assert sleeps.count(1.0) == 2


async def test_an_oversized_card_is_split_and_nothing_is_dropped(client: FeishuClient, fake_api: FakeFeishuAPI,
                                                                 w16_digest: Digest) -> None:
    card = max(render_feishu(w16_digest), key=lambda c: len(json.dumps(c, ensure_ascii=False).encode()))
    size = len(json.dumps(card, ensure_ascii=False).encode())
    assert size > 15_000
    fake_api.max_content_bytes = size * 2 // 5  # Feishu refuses it as too large (230025)
    await client.send_cards(Target(reply_to="om_q"), [card], key="om_q")
    sent = [m.content for m in fake_api.messages]
    assert len(sent) >= 2
    assert all(m.msg_type == "interactive" for m in fake_api.messages)
    assert all(card_problem(c) is None for c in sent)
    assert _texts(sent) == _texts([card])


async def test_a_malformed_card_falls_back_to_a_post(client: FeishuClient, fake_api: FakeFeishuAPI) -> None:
    card = {"schema": "2.0", "header": {"title": {"tag": "plain_text", "content": "周报"}},
            "body": {"elements": [{"tag": "chart", "content": "**加粗** 正文"}]}}
    await client.send_cards(Target(reply_to="om_q"), [card])
    [sent] = fake_api.messages
    assert sent.msg_type == "post"
    assert sent.content["zh_cn"]["title"] == "周报"


async def test_other_refusals_raise(client: FeishuClient, fake_api: FakeFeishuAPI) -> None:
    with pytest.raises(FeishuAPIError) as refused:
        await client.send(Target(reply_to="om_q"), "sticker", {"file_key": "x"})
    assert refused.value.code == 230099
