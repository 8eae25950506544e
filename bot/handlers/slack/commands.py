"""``/prhub …``: ack at once (a "生成中…" note where the work is slow), then answer through the
command's ``response_url`` (see :mod:`bot.handlers.slack.delivery`)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.cards.chat import chat_phrases
from bot.handlers.core import Conversation, DigestReply, is_slow
from bot.handlers.intents import parse_command
from bot.handlers.slack.deps import SlackDeps, full_report_key
from bot.handlers.slack.render import slack_messages

COMMAND = "/prhub"


def register(app: AsyncApp, deps: SlackDeps) -> None:
    """Listen to ``/prhub``: the ack runs within Slack's 3 seconds, the answer as a lazy listener."""

    async def ack_command(ack: AsyncAck, command: dict[str, Any]) -> None:
        intent = parse_command(command.get("text", ""))
        if is_slow(intent):
            await ack(text=chat_phrases(deps.core.language(intent, _conversation(command))).working)
        else:
            await ack()

    async def answer_command(command: dict[str, Any]) -> None:
        intent = parse_command(command.get("text", ""))
        conversation = _conversation(command)
        reply = await deps.core.answer(intent, conversation)
        messages, public = slack_messages(reply)
        root = await deps.delivery.respond(
            command["response_url"], messages, channel=conversation.channel, public=public,
            language=deps.core.language(intent, conversation),
        )
        if root is not None and isinstance(reply, DigestReply):
            await deps.dedup.once(full_report_key(conversation.channel, root, reply.digest.window.name))

    app.command(COMMAND)(ack=ack_command, lazy=[answer_command])


def _conversation(command: dict[str, Any]) -> Conversation:
    return Conversation("slack", command.get("channel_id", ""), command.get("user_id", ""))
