"""A share of the phrasing corpus (tests/understand/corpus) through the real lark-oapi dispatcher: each
case's thread played as replies in one Feishu thread (``root_id``) of a p2p chat, then the case itself; the
answer must be in the case's language and answer what it asks (:func:`corpus_check.door_problems`)."""

from __future__ import annotations

import json
from typing import Any

import httpx
from fakes.feishu_api import FakeFeishuAPI
from understand.corpus_check import door_cases, door_problems

from bot.handlers.feishu.app import FeishuBot

from .conftest import fixture, post_event


async def test_a_share_of_the_corpus_through_feishu(http: httpx.AsyncClient, bot: FeishuBot,
                                                    fake_api: FakeFeishuAPI) -> None:
    n = 0
    wrong: list[str] = []

    async def say(text: str, chat: str, user: str, root: str | None) -> tuple[str, str]:
        nonlocal n
        n += 1
        payload = fixture("group_mention_text")
        payload["header"]["event_id"] = f"ev_corpus_{n:04d}"
        message: dict[str, Any] = {"message_id": f"om_corpus_{n:04d}", "chat_type": "p2p", "chat_id": chat,
                                   "content": json.dumps({"text": text}, ensure_ascii=False), "mentions": []}
        if root:
            message["root_id"] = root
        payload["event"]["message"].update(message)
        payload["event"]["sender"]["sender_id"]["open_id"] = user
        replies, patches, ephemerals = len(fake_api.replies()), len(fake_api.patches), len(fake_api.ephemerals)
        await post_event(http, bot, payload)
        await bot.drain()
        shown = [m.content for m in fake_api.replies()[replies:]] + [c for _, c in fake_api.patches[patches:]] + [
            e["card"] for e in fake_api.ephemerals[ephemerals:]]
        assert shown, text
        return message["message_id"], json.dumps(shown, ensure_ascii=False)

    cases = door_cases()
    for index, case in enumerate(cases):
        chat, user = f"oc_corpus_{index:02d}", f"ou_corpus_{index:02d}"
        for filter_text in case.get("subscribed", ()):
            await say("subscribe " + filter_text.replace(" OR ", " "), chat, user, None)
        root: str | None = None
        for earlier in case.get("thread", ()):
            sent, _ = await say(earlier, chat, user, root)
            root = root or sent
        _, shown = await say(case["text"], chat, user, root)
        shown = shown.replace("处理中", "")  # the working card of a slow answer, patched into the answer
        if problems := door_problems(case, shown):
            wrong.append(f"{case['text']!r}: {'; '.join(problems)} — {shown[:300]}")
    assert not wrong, "\n".join(wrong)
    assert len(cases) >= 35
