"""The subscription phrasing of today, kept apart: one function for chat, one for the slash command.

The subscription grammar belongs to the subscription-filters issue, which
replaces this module (several labels, exclusions, ``退订全部``); until then it
reads exactly what the bot read before: ``订阅 npu``, ``订阅 verl-project/verl 的 npu``,
``取消订阅 npu``, ``退订 npu``, ``我的订阅``, ``subscribe npu``, ``subscribe to npu``,
``subscribe npu in owner/name``, ``unsubscribe npu``, ``my subscriptions``. The only
change is that every repetition is bounded (a label or repository name is at
most 100 characters), so no message makes the scan quadratic.
"""

from __future__ import annotations

import re

from bot.models import Language
from bot.understand.intents import (
    HelpIntent,
    Intent,
    ListSubscriptionsIntent,
    SubscribeIntent,
    UnsubscribeIntent,
)

REPO = r"[A-Za-z0-9][\w.-]{0,99}/[\w.-]{0,99}[A-Za-z0-9_]"
LABEL = r"[A-Za-z0-9][\w.+-]{0,99}"

_LIST_SUBS = re.compile(r"我的订阅|订阅列表|查看订阅|(?:my|list|show)\s+subscriptions?|^\s*subscriptions?\s*$",
                        re.IGNORECASE)
_UNSUB_ZH = re.compile(rf"(?:取消订阅|退订)\s*(?:(?P<repo>{REPO})\s*(?:的)?\s*)?(?P<label>{LABEL})")
_SUB_ZH = re.compile(rf"订阅\s*(?:(?P<repo>{REPO})\s*(?:的)?\s*)?(?P<label>{LABEL})")
_UNSUB_EN = re.compile(rf"\bunsubscribe\s+(?:from\s+)?(?P<label>{LABEL})(?:\s+(?:in|on|for|of)\s+(?P<repo>{REPO}))?",
                       re.IGNORECASE)
_SUB_EN = re.compile(rf"\bsubscribe\s+(?:to\s+)?(?P<label>{LABEL})(?:\s+(?:in|on|for|of)\s+(?P<repo>{REPO}))?",
                     re.IGNORECASE)


def subscription_intent(text: str, language: Language | None) -> Intent | None:
    """The subscription change or listing ``text`` (a normalised chat message) asks for, else ``None``."""
    if _LIST_SUBS.search(text):
        return ListSubscriptionsIntent(language=language)
    for pattern, kind in ((_UNSUB_ZH, UnsubscribeIntent), (_UNSUB_EN, UnsubscribeIntent),
                          (_SUB_ZH, SubscribeIntent), (_SUB_EN, SubscribeIntent)):
        if m := pattern.search(text):
            return kind(label=m["label"].lower(), repo=m["repo"], language=language)
    return None


def subscription_command(command: str, words: list[str], repo: str | None, language: Language | None) -> Intent:
    """``/prhub subscribe L [owner/name]``, ``unsubscribe L [owner/name]``, ``subscriptions``.

    Args:
        command: ``subscribe``, ``unsubscribe`` or ``subscriptions``.
        words: the arguments without the repository.
        repo: the repository named in the arguments, if any.
        language: the language of the arguments.
    """
    if command == "subscriptions":
        return ListSubscriptionsIntent(language=language)
    if not words:
        return HelpIntent(language=language)
    kind = SubscribeIntent if command == "subscribe" else UnsubscribeIntent
    return kind(label=words[0].lower(), repo=repo, language=language)
