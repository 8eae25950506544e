"""Mentions (``app_mention``) and direct messages (``message`` in an IM): answered in the
message's thread, once (see :mod:`bot.handlers.slack.dedup`).

A ``message`` event in a channel is treated as a mention when it mentions the bot
(an app subscribed to channel messages gets the same message twice); other
channel messages, edits and bot messages are ignored.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.cards.chat import chat_phrases
from bot.handlers.core import Conversation, DigestReply, is_slow
from bot.handlers.intents import parse_intent
from bot.handlers.slack.deps import SlackDeps, full_report_key
from bot.handlers.slack.render import slack_messages

log = logging.getLogger(__name__)


def register(app: AsyncApp, deps: SlackDeps) -> None:
    """Listen to ``app_mention`` and ``message`` events (acked by bolt at once; answered lazily)."""

    async def on_mention(body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext,
                         client: AsyncWebClient) -> None:
        await _answer(deps, body, event, context, client)

    async def on_message(body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext,
                         client: AsyncWebClient) -> None:
        if _for_bot(event, context.bot_user_id):
            await _answer(deps, body, event, context, client)

    app.event("app_mention")(ack=_ack, lazy=[on_mention])
    app.event("message")(ack=_ack, lazy=[on_message])


async def _ack() -> None:
    """Events are acknowledged by bolt itself; the work is the lazy listener's."""


def _for_bot(event: dict[str, Any], bot_user_id: str | None) -> bool:
    """A person's new message in a DM, or in a channel naming the bot."""
    if event.get("subtype") or event.get("bot_id"):
        return False
    if event.get("channel_type") == "im":
        return True
    return bool(bot_user_id) and f"<@{bot_user_id}>" in str(event.get("text", ""))


async def _answer(deps: SlackDeps, body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext,
                  client: AsyncWebClient) -> None:
    channel, ts = str(event.get("channel", "")), str(event.get("ts", ""))
    if not await deps.dedup.first_time(event_id=body.get("event_id"), channel=channel, ts=ts):
        return
    mentions = (f"<@{context.bot_user_id}>",) if context.bot_user_id else ()
    intent = parse_intent(str(event.get("text", "")), bot_mentions=mentions)
    conversation = Conversation("slack", channel, str(event.get("user", "")))
    thread = str(event.get("thread_ts") or ts)
    if is_slow(intent):
        await _working(client, conversation, thread, chat_phrases(deps.core.language(intent, conversation)).working)
    reply = await deps.core.answer(intent, conversation)
    messages, _ = slack_messages(reply)
    await deps.delivery.post(channel, messages, thread_ts=thread)
    if isinstance(reply, DigestReply) and len(messages) > 1:
        await deps.dedup.once(full_report_key(channel, thread, reply.digest.window.name))


async def _working(client: AsyncWebClient, conversation: Conversation, thread: str, text: str) -> None:
    """The "生成中…" note, visible to the asker only; a refusal does not stop the answer."""
    try:
        await client.chat_postEphemeral(channel=conversation.channel, user=conversation.user, text=text,
                                        thread_ts=thread)
    except SlackApiError as exc:
        log.info("no working note in %s: %s", conversation.channel, exc.response.get("error"))
