"""``im.message.receive_v1``: what a person wrote to the bot, as plain text.

Payload shape (event schema 2.0; the fields the bot reads)::

    {"schema": "2.0",
     "header": {"event_id": "5e3…", "event_type": "im.message.receive_v1", "token": "…", …},
     "event": {
        "sender": {"sender_id": {"open_id": "ou_…"}, "sender_type": "user"},
        "message": {"message_id": "om_…", "root_id": "om_…"?, "chat_id": "oc_…",
                    "chat_type": "group" | "p2p", "message_type": "text" | "post" | …,
                    "content": "<JSON string>",
                    "mentions": [{"key": "@_user_1", "id": {"open_id": "ou_…"}, "name": "prhub"}]}}}

``content`` is itself JSON: ``{"text": "@_user_1 本周周报"}`` for ``text``;
for ``post`` either ``{"title": …, "content": [[{"tag": "at", "user_id": "@_user_1"},
{"tag": "text", "text": …}], …]}`` or the same wrapped in a locale key
(``{"zh_cn": {…}}``). Mentions appear in the text as ``@_user_N`` placeholders
that :func:`read_message` resolves through ``mentions``: the bot's own mention is
removed, any other becomes ``@name`` (it may be the subject of the question).

A group message is for the bot only when it mentions the bot; a direct (``p2p``)
message always is. Messages sent by apps (other bots) are ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypedDict, cast

__all__ = ["IncomingMessage", "MessageReceived", "read_message"]


class UserIds(TypedDict, total=False):
    open_id: str
    user_id: str
    union_id: str


class Mention(TypedDict, total=False):
    key: str
    id: UserIds
    name: str


class Message(TypedDict, total=False):
    message_id: str
    root_id: str
    parent_id: str
    thread_id: str
    chat_id: str
    chat_type: str
    message_type: str
    content: str
    mentions: list[Mention]


class Sender(TypedDict, total=False):
    sender_id: UserIds
    sender_type: str


class MessageEvent(TypedDict, total=False):
    sender: Sender
    message: Message


class Header(TypedDict, total=False):
    event_id: str
    event_type: str
    token: str
    create_time: str
    app_id: str
    tenant_key: str


class MessageReceived(TypedDict, total=False):
    """The whole ``im.message.receive_v1`` event (see the module docstring)."""

    schema: str
    header: Header
    event: MessageEvent


@dataclass(frozen=True)
class IncomingMessage:
    """A message addressed to the bot.

    Attributes:
        event_id: the delivery's ``header.event_id`` (may change on redelivery).
        message_id: ``om_…``, stable across redeliveries; replies go under it.
        chat_id: ``oc_…``.
        chat_type: ``group`` or ``p2p``.
        sender_open_id: ``ou_…`` of the person (subscriptions belong to them).
        text: the words, mentions resolved and the bot's own mention removed.
        thread_id: ``root_id`` of the thread it replies in, else its own ``message_id``.
    """

    event_id: str
    message_id: str
    chat_id: str
    chat_type: str
    sender_open_id: str
    text: str
    thread_id: str = ""
    """The thread the message is in: its ``root_id``, or its own id when it starts one."""


def read_message(payload: MessageReceived, *, bot_open_id: str) -> IncomingMessage | None:
    """The message in ``payload`` if it is for the bot, else ``None``.

    Args:
        payload: the event as a dict (a fixture, or the SDK object marshalled back to JSON).
        bot_open_id: the bot's own ``open_id`` (from the bot-info API).

    Returns:
        ``None`` for a group message that does not mention the bot, a message from
        an app, or a kind the bot cannot read (images, files, stickers).
    """
    event = payload.get("event", {})
    message = event.get("message", {})
    sender = event.get("sender", {})
    if sender.get("sender_type", "user") != "user":
        return None
    raw = _raw_text(message.get("message_type", ""), message.get("content", ""))
    if raw is None:
        return None
    mentions = message.get("mentions", [])
    mentioned = any(m.get("id", {}).get("open_id") == bot_open_id for m in mentions)
    chat_type = message.get("chat_type", "")
    if chat_type != "p2p" and not mentioned:
        return None
    return IncomingMessage(
        event_id=payload.get("header", {}).get("event_id", ""),
        message_id=message.get("message_id", ""),
        chat_id=message.get("chat_id", ""),
        chat_type=chat_type,
        sender_open_id=sender.get("sender_id", {}).get("open_id", ""),
        text=resolve_mentions(raw, mentions, bot_open_id=bot_open_id),
        thread_id=message.get("root_id") or message.get("message_id", ""),
    )


def resolve_mentions(text: str, mentions: list[Mention], *, bot_open_id: str) -> str:
    """Replace each ``@_user_N`` placeholder: the bot's by a space, anyone else's by ``@name``.

    Longer keys go first, so ``@_user_1`` never eats the start of ``@_user_10``.
    """
    for mention in sorted(mentions, key=lambda m: len(m.get("key", "")), reverse=True):
        key = mention.get("key", "")
        if not key:
            continue
        own = mention.get("id", {}).get("open_id") == bot_open_id
        text = text.replace(key, " " if own else f"@{mention.get('name', '')}")
    return " ".join(text.split())


def _raw_text(message_type: str, content: str) -> str | None:
    """The text of a ``text`` or ``post`` message with placeholders still in, else ``None``."""
    try:
        body = json.loads(content) if content else {}
    except json.JSONDecodeError:
        return None
    if not isinstance(body, dict):
        return None
    if message_type == "text":
        text = body.get("text")
        return text if isinstance(text, str) else None
    if message_type == "post":
        return _post_text(cast("dict[str, Any]", body))
    return None


def _post_text(body: dict[str, Any]) -> str:
    """A rich-text post as lines of text: title first, then each paragraph's inline elements."""
    if "content" not in body:  # wrapped in a locale key: {"zh_cn": {...}}
        inner = next((v for v in body.values() if isinstance(v, dict) and "content" in v), {})
        body = cast("dict[str, Any]", inner)
    lines = [str(body["title"])] if body.get("title") else []
    for paragraph in body.get("content") or []:
        parts: list[str] = []
        for node in paragraph if isinstance(paragraph, list) else []:
            if not isinstance(node, dict):
                continue
            tag = node.get("tag")
            if tag == "at":
                parts.append(f" {node.get('user_id', '')} ")
            elif tag == "a":
                parts.append(f"{node.get('text', '')} {node.get('href', '')}")
            elif tag in ("text", "md", "code_block"):
                parts.append(str(node.get("text", "")))
        lines.append("".join(parts))
    return "\n".join(lines)
