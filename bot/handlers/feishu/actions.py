"""``card.action.trigger``: the buttons on the bot's cards.

Payload shape (the fields read)::

    {"schema": "2.0",
     "header": {"event_id": "…", "event_type": "card.action.trigger", "token": "…"},
     "event": {"operator": {"open_id": "ou_…"},
               "action": {"tag": "button", "value": {"action": "prhub_full_report", …}},
               "context": {"open_message_id": "om_…", "open_chat_id": "oc_…"}}}

The answer must come within 3 seconds and is ``{"toast": {"type", "content"}}``
(optionally with ``"card"``): so the quick part (the subscription write) is done
before answering and the slow part (building and sending cards under the
clicked card's message, in its thread) is handed back as ``follow_up``.

- 完整报告 (``prhub_full_report``) — the digest's remaining cards, in the thread;
- 订阅此标签 (``prhub_subscribe_label``) — subscribes the clicker, toast says so;
- 分析此 PR (``prhub_analyze_pr``) — the PR's analysis card, in the thread;
- 查看 2026-W34 (``prhub_open_window``) — that window's digest card, in the thread.

A second press of 完整报告, 分析此 PR or 查看 on the same card posts nothing new (claimed by
:class:`~bot.handlers.feishu.app.FeishuBot`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from bot.cards.actions import (
    ACTION_ANALYZE_PR,
    ACTION_FULL_REPORT,
    ACTION_KEEP_SUBSCRIPTION,
    ACTION_OPEN_WINDOW,
    ACTION_SUBSCRIBE_LABEL,
    ACTION_UNDO_SUBSCRIPTION,
)
from bot.cards.chat import render_full_report_feishu, render_reply_feishu, subscription_text
from bot.cards.i18n import chat_phrases
from bot.handlers.core import Conversation, Core
from bot.handlers.intents import DigestIntent, PRIntent, SubscribeIntent, UnsubscribeIntent
from bot.models import Language
from bot.replies import ErrorReply, SubscriptionReply

__all__ = ["ActionReply", "CardAction", "Toast", "read_action", "respond"]


class Toast(TypedDict):
    type: Literal["info", "success", "error", "warning"]
    content: str


@dataclass(frozen=True)
class CardAction:
    """A button press: who, which button value, and the message the card is in."""

    event_id: str
    open_id: str
    message_id: str
    chat_id: str
    value: dict[str, str]


Send = Callable[[list[dict[str, Any]]], Awaitable[None]]
"""Sends cards under the clicked card's message (in its thread)."""


@dataclass(frozen=True)
class ActionReply:
    """The callback's answer (``toast``) and the slow work to run after it (``follow_up``)."""

    toast: Toast
    follow_up: Callable[[Send], Coroutine[Any, Any, None]] | None = field(default=None)

    def response(self) -> dict[str, Any]:
        """The JSON body of the callback response."""
        return {"toast": dict(self.toast)}


def read_action(payload: dict[str, Any]) -> CardAction | None:
    """The button press in a ``card.action.trigger`` payload, or ``None`` when it carries no value."""
    event = payload.get("event") or {}
    value = (event.get("action") or {}).get("value")
    if not isinstance(value, dict):
        return None
    context = event.get("context") or {}
    return CardAction(
        event_id=str((payload.get("header") or {}).get("event_id", "")),
        open_id=str((event.get("operator") or {}).get("open_id", "")),
        message_id=str(context.get("open_message_id", "")),
        chat_id=str(context.get("open_chat_id", "")),
        value={str(k): str(v) for k, v in value.items()},
    )


def conversation_of(action: CardAction) -> Conversation:
    """The conversation the clicked card is in."""
    return Conversation(platform="feishu", channel=action.chat_id, user=action.open_id)


async def respond(action: CardAction, core: Core, *, language: Language) -> ActionReply:
    """Do the quick part of ``action`` and describe the rest.

    Returns:
        The toast to show and, for 完整报告 and 分析此 PR, the follow-up that
        builds and sends the cards. An unknown or incomplete value gets a
        warning toast and nothing else.
    """
    words = chat_phrases(language)
    kind = action.value.get("action")
    repo = action.value.get("repo") or None
    conversation = conversation_of(action)
    if kind == ACTION_FULL_REPORT:
        window = action.value.get("window") or None

        async def full(send: Send) -> None:
            digest = await core.digest(repo, window, conversation, language)
            await send(render_full_report_feishu(digest))

        return ActionReply(toast=Toast(type="info", content=words.toast_full_report), follow_up=full)
    if kind == ACTION_SUBSCRIBE_LABEL and action.value.get("label"):
        intent = SubscribeIntent(label=action.value["label"], repo=repo, language=language)
        reply = await core.answer(intent, conversation)
        if isinstance(reply, SubscriptionReply):
            done: Literal["success", "error"] = "error" if reply.change == "refused" else "success"
            return ActionReply(toast=Toast(type=done, content=subscription_text(reply)))
        message = reply.message if isinstance(reply, ErrorReply) else words.toast_unknown
        return ActionReply(toast=Toast(type="error", content=message))
    if kind == ACTION_KEEP_SUBSCRIPTION:
        return ActionReply(toast=Toast(type="success", content=words.preview_kept))
    if kind == ACTION_UNDO_SUBSCRIPTION and action.value.get("filter"):
        removal = UnsubscribeIntent(repo=repo, text=f"unsubscribe {action.value['filter']}", language=language)
        undone = await core.answer(removal, conversation)
        if isinstance(undone, SubscriptionReply):
            how: Literal["success", "error"] = "error" if undone.change == "refused" else "success"
            return ActionReply(toast=Toast(type=how, content=subscription_text(undone)))
        return ActionReply(toast=Toast(type="error", content=undone.message if isinstance(undone, ErrorReply)
                                       else words.toast_unknown))
    if kind == ACTION_ANALYZE_PR and action.value.get("number", "").isdigit():
        number = int(action.value["number"])

        async def analyse(send: Send) -> None:
            await send(render_reply_feishu(await core.answer(PRIntent(number=number, repo=repo, language=language),
                                                             conversation)))

        return ActionReply(toast=Toast(type="info", content=words.toast_analyze.format(number=number)),
                           follow_up=analyse)
    if kind == ACTION_OPEN_WINDOW and action.value.get("window"):
        window = action.value["window"]

        async def open_window(send: Send) -> None:
            intent = DigestIntent(week=window, repo=repo, language=language)
            await send(render_reply_feishu(await core.answer(intent, conversation)))

        return ActionReply(toast=Toast(type="info", content=words.toast_full_report), follow_up=open_window)
    return ActionReply(toast=Toast(type="warning", content=words.toast_unknown))
