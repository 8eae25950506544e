"""``/prhub …``: ack at once (a "生成中…" note where the work is slow), then answer through the
command's ``response_url`` (see :meth:`bot.delivery.slack.SlackDeliverer.respond`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.cards.i18n import chat_phrases
from bot.delivery import Place, mark_full_report, reply_extras
from bot.handlers.core import ANSWER_FAILURES, Conversation, answer_failed, is_slow
from bot.handlers.intents import Intent, parse_command
from bot.handlers.slack.deps import SlackDeps
from bot.replies import DigestReply, is_public

COMMAND = "/prhub"

log = logging.getLogger(__name__)


def register(app: AsyncApp, deps: SlackDeps) -> None:
    """Listen to ``/prhub``: the ack runs within Slack's 3 seconds, the answer as a lazy listener."""

    settings = deps.core.settings

    def read(command: dict[str, Any]) -> Intent:
        return parse_command(str(command.get("text", "")), hosts=settings.pr_hosts,
                             max_chars=settings.max_message_chars)

    async def ack_command(ack: AsyncAck, command: dict[str, Any]) -> None:
        intent = read(command)
        if is_slow(intent):
            await ack(text=chat_phrases(await deps.core.reply_language(intent, _conversation(command))).working)
        else:
            await ack()

    async def answer_command(command: dict[str, Any]) -> None:
        intent = read(command)
        conversation = _conversation(command)
        what = f"slack /prhub in {conversation.channel} by {conversation.user} ({type(intent).__name__})"

        async def tell() -> None:
            await deps.deliverer.note(command["response_url"],
                                      chat_phrases(await deps.core.reply_language(intent, conversation)).failed)

        try:
            await asyncio.wait_for(answer(command, intent, conversation), settings.answer_deadline_s)
        except ANSWER_FAILURES as exc:
            await answer_failed(exc, what=what, tell=tell)
        else:
            log.info("%s: answered", what)

    async def answer(command: dict[str, Any], intent: Intent, conversation: Conversation) -> None:
        reply = await deps.core.answer(intent, conversation)
        extras = await reply_extras(deps.deliverer, Place(conversation.channel), reply)
        messages = deps.deliverer.reply_messages(reply, extras)
        root = await deps.deliverer.respond(
            command["response_url"], messages, channel=conversation.channel, public=is_public(reply),
            language=await deps.core.reply_language(intent, conversation),
        )
        if isinstance(reply, DigestReply) and len(messages) > 1:
            await mark_full_report(deps.claims, "slack", conversation.channel, root, reply.digest.window.name)

    app.command(COMMAND)(ack=ack_command, lazy=[answer_command])


def _conversation(command: dict[str, Any]) -> Conversation:
    return Conversation("slack", command.get("channel_id", ""), command.get("user_id", ""))
