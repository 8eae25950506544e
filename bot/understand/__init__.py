"""Understanding what people ask, in Chinese and English: the intents, the rules that read them,
the window phrases, the example phrasings the help suggests.

Core code (no platform, no I/O): the chat doors call :func:`understand` /
:func:`understand_command`; the LLM fallback (:mod:`bot.understand.reader`) maps a
message to the same intents.
"""

from __future__ import annotations

from bot.understand.intents import (
    MAX_COMPARED,
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
)
from bot.understand.lexicon import MAX_CHARS, detect_language, normalize
from bot.understand.parse import understand, understand_command

__all__ = [
    "MAX_CHARS",
    "MAX_COMPARED",
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
    "detect_language",
    "normalize",
    "understand",
    "understand_command",
]
