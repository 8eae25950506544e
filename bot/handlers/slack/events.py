"""Mentions (``app_mention``) and direct messages (``message`` in an IM): answered in the message's thread,
once.

Slack redelivers an event it thinks was not answered (``X-Slack-Retry-Num``, same ``event_id``), and
a message that mentions the bot arrives twice, as ``app_mention`` and as ``message`` (different
event ids, same channel and ``ts``): both the event id and the ``(channel, ts)`` pair are claimed
(:meth:`bot.claims.Claims.first_delivery`), and only the delivery that takes both answers — in two
steps (:func:`bot.handlers.core.answer_once`): marked answered once the reply was delivered, released
when it failed (Slack's retry is then served) and the person told in one line. The text is cut at
``max_message_chars`` and read in a worker thread; links of hosts other than ``pr_hosts`` are ignored.

A ``message`` event in a channel is treated as a mention when it mentions the bot (an app
subscribed to channel messages gets the same message twice); other channel messages, edits and
bot messages are ignored.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext

from bot.cards.i18n import chat_phrases
from bot.claims import seen_key
from bot.deadline import on_long_wait, once
from bot.delivery import Place, post_reply
from bot.handlers.core import Conversation, answer_once, is_slow
from bot.handlers.intents import parse_intent
from bot.handlers.slack.deps import SlackDeps
from bot.replies import is_public


def register(app: AsyncApp, deps: SlackDeps) -> None:
    """Listen to ``app_mention`` and ``message`` events (acked by bolt at once; answered lazily)."""

    async def on_mention(body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext) -> None:
        await _answer(deps, body, event, context)

    async def on_message(body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext) -> None:
        if _for_bot(event, context.bot_user_id):
            await _answer(deps, body, event, context)

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


async def _answer(deps: SlackDeps, body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext) -> None:
    channel, ts = str(event.get("channel", "")), str(event.get("ts", ""))
    keys = [seen_key("slack", "event", str(body["event_id"]))] if body.get("event_id") else []
    if channel and ts:
        keys.append(seen_key("slack", "msg", f"{channel}:{ts}"))
    mentions = (f"<@{context.bot_user_id}>",) if context.bot_user_id else ()
    settings = deps.core.settings
    text = str(event.get("text", ""))
    intent = await asyncio.to_thread(parse_intent, text, bot_mentions=mentions, hosts=settings.pr_hosts,
                                     max_chars=settings.max_message_chars)
    thread = str(event.get("thread_ts") or ts)
    conversation = Conversation("slack", channel, str(event.get("user", "")), thread=thread or None,
                                locale=str(event["user_locale"]) if event.get("user_locale") else None)
    lang = await deps.core.reply_language(intent, conversation)

    async def rate_limited(seconds: float) -> None:
        text = chat_phrases(lang).rate_limited.format(minutes=max(1, math.ceil(seconds / 60)))
        await deps.deliverer.ephemeral(channel, conversation.user, text, thread=thread)

    async def answer() -> None:
        on_long_wait(once(rate_limited))
        if is_slow(intent):
            await deps.deliverer.ephemeral(channel, conversation.user, chat_phrases(lang).working, thread=thread)
        reply = await deps.core.answer(intent, conversation)
        direct = event.get("channel_type") == "im" or channel.startswith("D")
        if not direct and not is_public(reply) and await deps.deliverer.post_ephemeral(
                channel, conversation.user, deps.deliverer.reply_messages(reply), thread=thread):
            return  # subscriptions, help, questions back and errors: only the asker sees them in a channel
        await post_reply(deps.deliverer, deps.claims, Place(channel, thread=thread), reply)

    async def tell() -> None:
        await deps.deliverer.ephemeral(channel, conversation.user, chat_phrases(lang).failed, thread=thread)

    what = f"slack event {body.get('event_id') or '-'} ({channel}:{ts}, {type(intent).__name__})"
    await answer_once(deps.claims, keys, answer, what=what, tell=tell, deadline_s=settings.answer_deadline_s,
                      attempts=settings.answer_attempts)
