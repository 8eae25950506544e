"""What a person asks the bot, as the doors read it: :mod:`bot.understand` with the doors' names.

The understanding lives in :mod:`bot.understand` (core code: intents, rules, window
phrases, example phrasings). This module keeps the names the doors import:

- the intent classes (the same classes, re-exported) and ``Intent``, their union;
- :func:`parse_intent` / :func:`parse_command` — :func:`bot.understand.understand` /
  :func:`bot.understand.understand_command`;
- :func:`normalize`, :func:`detect_language`;
- :func:`bounded` — what the doors do before reading: the text cut at ``max_chars`` and the links of
  hosts other than ``pr_hosts`` taken out (a PR link of another host is not read as a PR of that repository).

Language: an intent carries the language of the asker's sentence (``zh`` with Chinese, ``en``
with English words beyond commands, labels, numbers and names), or ``None`` when the message holds
nothing but a label, a number or a command (``PR 6046``, ``label npu``, ``/prhub subscribe npu``):
the core then answers in the channel's language (:meth:`bot.handlers.core.Core.language`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.understand import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    FollowUpIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    LinkGitHubIntent,
    ListSubscriptionsIntent,
    MergedIntent,
    PersonalDigestIntent,
    PRIntent,
    QuestionIntent,
    SmallTalkIntent,
    SubscribeIntent,
    UnsubscribeIntent,
    detect_language,
    normalize,
    understand,
    understand_command,
)

__all__ = [
    "MAX_MESSAGE_CHARS",
    "ClarifyIntent",
    "CompareIntent",
    "DigestIntent",
    "FollowUpIntent",
    "HelpIntent",
    "Intent",
    "LabelIntent",
    "LinkGitHubIntent",
    "ListSubscriptionsIntent",
    "MergedIntent",
    "PRIntent",
    "PersonalDigestIntent",
    "QuestionIntent",
    "SmallTalkIntent",
    "SubscribeIntent",
    "UnsubscribeIntent",
    "bounded",
    "detect_language",
    "normalize",
    "parse_command",
    "parse_intent",
]


MAX_MESSAGE_CHARS = 4_000
"""Characters of a message kept before anything reads it (``max_message_chars``)."""
_ANY_URL = re.compile(r"https?://([^\s/<>|]{1,253})[^\s<>|]{0,2000}")


def bounded(text: str, *, max_chars: int = MAX_MESSAGE_CHARS, hosts: Sequence[str] = ()) -> str:
    """``text`` cut at ``max_chars`` characters, without the links of hosts other than ``hosts`` (when given)."""
    text = text[:max_chars]
    if not hosts:
        return text
    allowed = {h.lower() for h in hosts}

    def keep(found: re.Match[str]) -> str:
        host = found.group(1).lower().rsplit("@", 1)[-1].split(":", 1)[0]
        return found.group(0) if host in allowed else " "

    return _ANY_URL.sub(keep, text)


def parse_intent(text: str, *, bot_mentions: Sequence[str] = (), hosts: Sequence[str] = (),
                 max_chars: int = MAX_MESSAGE_CHARS) -> Intent:
    """Understand one chat message (:func:`bot.understand.understand`).

    Args:
        text: the message as received (may hold mentions, full-width characters).
        bot_mentions: the bot's own mention tokens to remove.
        hosts: the hosts whose links are read (``pr_hosts``); empty: any.
        max_chars: characters read (:func:`bounded`).

    Returns:
        An intent; :class:`HelpIntent` (with the text) when nothing matches. Never raises.
    """
    return understand(bounded(text, max_chars=max_chars, hosts=hosts), bot_mentions=bot_mentions)


def parse_command(args: str, *, hosts: Sequence[str] = (), max_chars: int = MAX_MESSAGE_CHARS) -> Intent:
    """Understand the text after a slash command (``/prhub <args>``; see
    :func:`bot.understand.understand_command` for the forms; ``hosts``, ``max_chars`` as :func:`parse_intent`)."""
    return understand_command(bounded(args, max_chars=max_chars, hosts=hosts))
