"""A core reply as Slack messages: which renderer, and whether the channel may see it."""

from __future__ import annotations

from typing import Any

from bot.cards.chat import (
    chat_phrases,
    render_help_slack,
    render_label_slack,
    render_note_slack,
    render_subscriptions_slack,
)
from bot.cards.escape import slack_text
from bot.cards.pr import render_pr_slack
from bot.cards.slack import render_slack
from bot.handlers.core import (
    DigestReply,
    ErrorReply,
    HelpReply,
    LabelReply,
    PRReply,
    Reply,
    SubscriptionReply,
    SubscriptionsReply,
)


def slack_messages(reply: Reply) -> tuple[list[dict[str, Any]], bool]:
    """``(messages, public)``: the Block Kit messages of ``reply`` (first = card, rest = its thread)
    and whether they are meant for the channel (digests, PR answers, label views) or only
    for the asker (subscriptions, help, errors)."""
    match reply:
        case DigestReply(digest):
            return render_slack(digest), True
        case PRReply(pr, repo, language, timezone):
            return [render_pr_slack(pr, repo=repo, language=language, timezone=timezone)], True
        case LabelReply(digest, label, prs):
            return render_label_slack(digest, label, prs), True
        case SubscriptionReply(change, sub, language):
            template = getattr(chat_phrases(language), change)
            text = template.format(label=slack_text(sub.label), repo=slack_text(sub.repo))
            if (note := reply.unknown_label_note()) is not None:
                text = f"{text}\n{slack_text(note)}"
            return [render_note_slack(text)], False
        case SubscriptionsReply(subs, language):
            return [render_subscriptions_slack([(s.repo, s.label) for s in subs], language)], False
        case HelpReply(language, repo):
            return [render_help_slack(language, repo)], False
        case ErrorReply(message, language):
            return [render_note_slack(chat_phrases(language).error.format(message=slack_text(message)))], False
