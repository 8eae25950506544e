"""What a person asks the bot, for the chat core of today: the legacy face of :mod:`bot.understand`.

The understanding lives in :mod:`bot.understand` (core code: intents, rules, window
phrases, example phrasings). This module keeps the names the doors import:

- the intent classes (the same classes, re-exported);
- :func:`parse_intent` / :func:`parse_command` — :func:`bot.understand.understand` /
  :func:`bot.understand.understand_command` mapped by :func:`bot.understand.to_legacy`
  to the intents :class:`bot.handlers.core.Core` answers today (a comparison becomes its
  first PR, a merged-PRs request a digest of that window, a question or an unreadable
  window the help);
- :func:`normalize`, :func:`detect_language`, :func:`legacy_language` (the language rule of
  today, which these two functions keep until the doors answer the newer intents);
- ``Intent`` — the union of the legacy intents (the core's ``match`` covers exactly these).

A door that answers the newer intents calls :func:`bot.understand.understand` directly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from bot.models import Language
from bot.understand import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    LabelIntent,
    LegacyIntent,
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
    to_legacy,
    understand,
    understand_command,
)

Intent = LegacyIntent
"""The intents the chat core of today answers (the full set is :data:`bot.understand.Intent`)."""

__all__ = [
    "MAX_MESSAGE_CHARS",
    "ClarifyIntent",
    "CompareIntent",
    "DigestIntent",
    "HelpIntent",
    "Intent",
    "LabelIntent",
    "LegacyIntent",
    "LinkGitHubIntent",
    "ListSubscriptionsIntent",
    "MergedIntent",
    "PRIntent",
    "PersonalDigestIntent",
    "QuestionIntent",
    "SubscribeIntent",
    "UnsubscribeIntent",
    "bounded",
    "detect_language",
    "legacy_language",
    "normalize",
    "parse_command",
    "parse_intent",
]


MAX_MESSAGE_CHARS = 4_000
"""Characters of a message kept before anything reads it (``max_message_chars``)."""
_ANY_URL = re.compile(r"https?://([^\s/<>|]{1,253})[^\s<>|]{0,2000}")


def bounded(text: str, *, max_chars: int = MAX_MESSAGE_CHARS, hosts: Sequence[str] = ()) -> str:
    """``text`` cut at ``max_chars`` characters, without the links of hosts other than ``hosts`` (when given):
    a PR link of another host is not read as a PR of that repository."""
    text = text[:max_chars]
    if not hosts:
        return text
    allowed = {h.lower() for h in hosts}

    def keep(found: re.Match[str]) -> str:
        host = found.group(1).lower().rsplit("@", 1)[-1].split(":", 1)[0]
        return found.group(0) if host in allowed else " "

    return _ANY_URL.sub(keep, text)


def parse_intent(text: str, *, bot_mentions: Sequence[str] = (), hosts: Sequence[str] = (),
                 max_chars: int = MAX_MESSAGE_CHARS) -> LegacyIntent:
    """Understand one chat message, as one of the intents the core of today answers.

    Args:
        text: the message as received (may hold mentions, full-width characters).
        bot_mentions: the bot's own mention tokens to remove.
        hosts: the hosts whose links are read (``pr_hosts``); empty: any.
        max_chars: characters read (:func:`bounded`).

    Returns:
        A :data:`~bot.understand.LegacyIntent`, with the language as the doors of today
        expect it (:func:`legacy_language`); :class:`HelpIntent` when nothing matches.
        Never raises.
    """
    text = bounded(text, max_chars=max_chars, hosts=hosts)
    intent = to_legacy(understand(text, bot_mentions=bot_mentions))
    return _with_language(intent, legacy_language(normalize(text, bot_mentions)))


def parse_command(args: str, *, hosts: Sequence[str] = (), max_chars: int = MAX_MESSAGE_CHARS) -> LegacyIntent:
    """Understand the text after a slash command (``/prhub <args>``), as a legacy intent
    (see :func:`bot.understand.understand_command` for the forms; ``hosts``, ``max_chars`` as
    :func:`parse_intent`)."""
    args = bounded(args, max_chars=max_chars, hosts=hosts)
    clean = normalize(args)
    head, _, rest = clean.partition(" ")
    known = head.lower() in _LEGACY_COMMANDS
    return _with_language(to_legacy(understand_command(args)), legacy_language(rest if known else clean))


_LEGACY_COMMANDS = frozenset({"digest", "pr", "label", "subscribe", "unsubscribe", "subscriptions", "help"})
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_LEGACY_STRIP = re.compile(r"https?://\S{1,2000}|[A-Za-z0-9][\w.-]{0,99}/[\w.-]{0,99}[A-Za-z0-9_](?:#[0-9]{1,7})?|"
                           r"(?<![A-Za-z0-9])[0-9]{4}\s?-?\s?[Ww]\s?[0-9]{1,2}(?![0-9])")


def legacy_language(text: str) -> Language | None:
    """The language as the doors of today read it: ``zh`` with Chinese, ``en`` with any Latin word
    outside URLs, repository names and ISO week names (``label npu`` is ``en``), else ``None``.

    :func:`bot.understand.detect_language` is the rule the understanding uses (``label npu``,
    ``PR 6046`` and ``/prhub subscribe npu`` have no language of their own there); the doors
    switch to it together with the newer intents.
    """
    if re.search(r"[\u3400-\u9fff]", text):
        return "zh"
    return "en" if _LATIN_WORD.search(_LEGACY_STRIP.sub(" ", text)) else None


def _with_language(intent: LegacyIntent, language: Language | None) -> LegacyIntent:
    return replace(intent, language=language)
