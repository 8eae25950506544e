"""The cards' buttons (action ids of :mod:`bot.cards.actions`):

- ``prhub_full_report`` (value ``repo|window``) — posts the rest of the digest in the
  card's thread, once per thread (a second press, whenever it comes, says it is already there);
- ``prhub_analyze_pr`` (value ``repo#number``) — posts that PR's analysis in the
  card's thread, once per thread and PR;
- ``prhub_subscribe_label`` (a select; option value = label) — subscribes the
  conversation to the label of the card's repository; the confirmation is ephemeral;
- ``prhub_open_window`` (value ``repo|window``) — the digest card of that window (the latest with merged
  PRs, from an empty window's answer) in the card's thread, once per thread and window;
- ``prhub_open_page`` — 完整报告 as a link to the digest's page: the browser opens it, Slack still
  reports the press, which is only acknowledged.

Each is acked at once and answered by a lazy listener. A press whose work fails gives its
claim back (:meth:`bot.claims.Claims.release`), so a later press tries again.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.cards.actions import (
    ACTION_ANALYZE_PR,
    ACTION_FULL_REPORT,
    ACTION_KEEP_SUBSCRIPTION,
    ACTION_OPEN_PAGE,
    ACTION_OPEN_WINDOW,
    ACTION_SUBSCRIBE_LABEL,
    ACTION_UNDO_SUBSCRIPTION,
)
from bot.cards.escape import slack_text
from bot.cards.i18n import ask_phrases, chat_phrases, error_text
from bot.claims import full_report_key, pr_answer_key
from bot.delivery import Place, reply_extras
from bot.errors import PrhubError
from bot.handlers.core import Conversation
from bot.handlers.intents import DigestIntent, PRIntent, SubscribeIntent, UnsubscribeIntent
from bot.handlers.slack.deps import SlackDeps
from bot.replies import ErrorReply, PRReply


def register(app: AsyncApp, deps: SlackDeps) -> None:
    """Listen to the three card actions."""
    deliverer = deps.deliverer

    async def full_report(body: dict[str, Any]) -> None:
        conversation, root = _where(body)
        repo, _, window = _value(body).partition("|")
        language = deps.core.language(None, conversation)
        words = chat_phrases(language)
        key = full_report_key("slack", conversation.channel, root, window)
        if not await deps.claims.take(key):
            await deliverer.note(body["response_url"], words.full_report_in_thread)
            return
        done = False
        try:
            digest = await deps.core.digest(repo, window, conversation, language)
            rest = deliverer.digest_messages(digest)[1:]
            if rest:
                await deliverer.post(Place(conversation.channel, thread=root), rest)
            else:
                await deliverer.note(body["response_url"], words.no_more)
            done = True
        except PrhubError as exc:
            text = error_text(exc, language, repo=repo or None, window=window)
            await deliverer.note(body["response_url"], words.error.format(message=slack_text(text)))
        finally:
            if not done:  # failed: the next press may try again
                await deps.claims.release(key)

    async def analyze(body: dict[str, Any]) -> None:
        conversation, root = _where(body)
        repo, _, number = _value(body).rpartition("#")
        language = deps.core.language(None, conversation)
        key = pr_answer_key("slack", conversation.channel, root, repo, int(number) if number.isdigit() else 0)
        if not await deps.claims.take(key):
            await deliverer.note(body["response_url"], chat_phrases(language).already_in_thread)
            return
        done = False
        try:
            reply = await deps.core.answer(PRIntent(int(number), repo or None), conversation)
            messages = deliverer.reply_messages(reply)
            if isinstance(reply, PRReply):
                await deliverer.post(Place(conversation.channel, thread=root), messages)
                done = True
            else:
                await deliverer.respond(body["response_url"], messages, channel=conversation.channel,
                                        public=False, language=language)
        finally:
            if not done:
                await deps.claims.release(key)

    async def open_window(body: dict[str, Any]) -> None:
        conversation, root = _where(body)
        repo, _, window = _value(body).partition("|")
        language = deps.core.language(None, conversation)
        key = full_report_key("slack", conversation.channel, root, "open:" + window)
        if not await deps.claims.take(key):
            await deliverer.note(body["response_url"], ask_phrases(language).window_in_thread)
            return
        done = False
        try:
            reply = await deps.core.answer(DigestIntent(week=window, repo=repo or None, language=language),
                                           conversation)
            place = Place(conversation.channel, thread=root)
            await deliverer.post(place, deliverer.reply_messages(reply, await reply_extras(deliverer, place, reply)))
            done = True
        finally:
            if not done:
                await deps.claims.release(key)

    async def subscribe(body: dict[str, Any]) -> None:
        conversation, _ = _where(body)
        label = str(body["actions"][0].get("selected_option", {}).get("value", ""))
        reply = await deps.core.answer(SubscribeIntent(label, _card_repo(body)), conversation)
        language = reply.language if isinstance(reply, ErrorReply) else deps.core.language(None, conversation)
        await deliverer.respond(body["response_url"], deliverer.reply_messages(reply), channel=conversation.channel,
                                public=False, language=language)

    async def keep(body: dict[str, Any]) -> None:
        conversation, _ = _where(body)
        language = deps.core.language(None, conversation)
        await deliverer.note(body["response_url"], chat_phrases(language).preview_kept)

    async def undo(body: dict[str, Any]) -> None:
        """撤销 under a new subscription's preview: the same filter unsubscribed (who may is checked as ever)."""
        conversation, _ = _where(body)
        repo, _, flt = _value(body).partition("|")
        reply = await deps.core.answer(UnsubscribeIntent(repo=repo or None, text=f"unsubscribe {flt}"), conversation)
        language = reply.language if isinstance(reply, ErrorReply) else deps.core.language(None, conversation)
        await deliverer.respond(body["response_url"], deliverer.reply_messages(reply), channel=conversation.channel,
                                public=False, language=language)

    app.action(ACTION_FULL_REPORT)(ack=_ack, lazy=[full_report])
    app.action(ACTION_ANALYZE_PR)(ack=_ack, lazy=[analyze])
    app.action(ACTION_SUBSCRIBE_LABEL)(ack=_ack, lazy=[subscribe])
    app.action(ACTION_OPEN_WINDOW)(ack=_ack, lazy=[open_window])
    app.action(ACTION_KEEP_SUBSCRIPTION)(ack=_ack, lazy=[keep])
    app.action(ACTION_UNDO_SUBSCRIPTION)(ack=_ack, lazy=[undo])
    app.action(ACTION_OPEN_PAGE)(_ack)  # a URL button: the page opens in the browser, nothing else to do


async def _ack(ack: AsyncAck) -> None:
    await ack()


def _value(body: dict[str, Any]) -> str:
    return str(body["actions"][0].get("value", ""))


def _where(body: dict[str, Any]) -> tuple[Conversation, str]:
    """The conversation of a block action and the ``ts`` of the thread its message belongs to."""
    message = body.get("message") or {}
    container = body.get("container") or {}
    channel = str((body.get("channel") or {}).get("id") or container.get("channel_id", ""))
    root = str(message.get("thread_ts") or message.get("ts") or container.get("message_ts", ""))
    return Conversation("slack", channel, str((body.get("user") or {}).get("id", ""))), root


def _card_repo(body: dict[str, Any]) -> str | None:
    """The repository of the digest card holding the action (its full-report button's value)."""
    for block in (body.get("message") or {}).get("blocks", []):
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element.get("action_id") in (ACTION_FULL_REPORT, ACTION_OPEN_PAGE):
                return str(element.get("value", "")).partition("|")[0] or None
    return None
