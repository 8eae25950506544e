"""What a person asks the bot, as the doors read it: :mod:`bot.understand` with the doors' names.

The understanding lives in :mod:`bot.understand` (core code: intents, rules, window
phrases, example phrasings). This module keeps the names the doors import:

- the intent classes (the same classes, re-exported) and ``Intent``, their union;
- :func:`parse_intent` / :func:`parse_command` — :func:`bot.understand.understand` /
  :func:`bot.understand.understand_command`;
- :func:`normalize`, :func:`detect_language`.

Language: an intent carries the language of the asker's sentence (``zh`` with Chinese, ``en``
with English words beyond commands, labels, numbers and names), or ``None`` when the message holds
nothing but a label, a number or a command (``PR 6046``, ``label npu``, ``/prhub subscribe npu``):
the core then answers in the channel's language (:meth:`bot.handlers.core.Core.language`).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.understand import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    LinkGitHubIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PersonalDigestIntent,
    PRIntent,
    QuestionIntent,
    SubscribeIntent,
    UnsubscribeIntent,
    detect_language,
    normalize,
    understand,
    understand_command,
)

__all__ = [
    "ClarifyIntent",
    "CompareIntent",
    "DigestIntent",
    "HelpIntent",
    "Intent",
    "LabelIntent",
    "LinkGitHubIntent",
    "ListSubscriptionsIntent",
    "MergedIntent",
    "PRIntent",
    "PersonalDigestIntent",
    "QuestionIntent",
    "SubscribeIntent",
    "UnsubscribeIntent",
    "detect_language",
    "normalize",
    "parse_command",
    "parse_intent",
]


def parse_intent(text: str, *, bot_mentions: Sequence[str] = ()) -> Intent:
    """Understand one chat message (:func:`bot.understand.understand`).

    Args:
        text: the message as received (may hold mentions, full-width characters).
        bot_mentions: the bot's own mention tokens to remove.

    Returns:
        An intent; :class:`HelpIntent` (with the text) when nothing matches. Never raises.
    """
    return understand(text, bot_mentions=bot_mentions)


def parse_command(args: str) -> Intent:
    """Understand the text after a slash command (``/prhub <args>``; see
    :func:`bot.understand.understand_command` for the forms)."""
    return understand_command(args)
