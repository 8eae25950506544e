"""Subscribing to a label the repository does not use is accepted with a warning that lists the known ones."""

from __future__ import annotations

from datetime import UTC, datetime

from conftest import EXAMPLE

from bot.app import build_services
from bot.cards.chat import render_reply_feishu, render_reply_slack, unknown_label_note
from bot.config import Settings
from bot.handlers.core import Conversation, Core
from bot.handlers.intents import SubscribeIntent
from bot.replies import SubscriptionReply
from bot.store import MemoryStore

HERE = Conversation(platform="slack", channel="C1", user="U1")


def _core(settings: Settings) -> Core:
    bound = settings.model_copy(update={"default_source": f"jsonl:{EXAMPLE}", "default_repo": "verl-project/verl"})
    return build_services(bound, MemoryStore(), clock=lambda: datetime(2026, 4, 21, tzinfo=UTC)).core


async def test_known_label_has_no_warning(verl_settings: Settings) -> None:
    reply = await _core(verl_settings).answer(SubscribeIntent(label="npu", language="zh"), HERE)
    assert isinstance(reply, SubscriptionReply)
    assert reply.change == "subscribed"
    assert reply.known_labels is None
    assert unknown_label_note(reply) is None


async def test_unknown_label_is_kept_with_a_warning(verl_settings: Settings) -> None:
    core = _core(verl_settings)
    reply = await core.answer(SubscribeIntent(label="quantum", language="zh"), HERE)
    assert isinstance(reply, SubscriptionReply)
    assert reply.change == "subscribed"
    assert reply.known_labels is not None
    assert {"npu", "trainer", "fully_async"} <= set(reply.known_labels)
    assert [s.label for s in await core.subscriptions(HERE)] == ["quantum"]
    note = unknown_label_note(reply)
    assert note is not None
    assert "quantum" in note
    assert "npu" in note
    slack_text = str(render_reply_slack(reply))
    assert "quantum" in slack_text
    assert "已知标签" in slack_text
    assert "已知标签" in str(render_reply_feishu(reply))
