"""Subscription filters: one grammar (chat, slash command, config file), a canonical value, a matcher.

::

    parse_filter("npu rollout -ci")            -> Filter      (grammar.py; errors: FilterError, zh + en)
    parse_subscription("订阅 owner/name npu")    -> SubscriptionCommand(action, repo, filter, language)
    subscription_action("取消我的 npu 订阅")      -> "unsubscribe"   (the verb alone: does a message ask this?)
    describe(flt, "zh")                         -> "npu 或 rollout，排除 ci"   (reads back to flt)
    match(flt, Candidate.of(pr, digest_pr), bots=…, me=…, codeowners=…) -> Match (why, or why not)
    explain(match, "en")                        -> "label npu; path verl/trainer/** (verl/trainer/ppo.py)"

``path:@me`` needs the subscriber's linked GitHub handle (``me``) and the repository's CODEOWNERS
(:func:`bot.codeowners.read_codeowners`).
"""

from __future__ import annotations

from bot.filters.describe import describe, explain, reasons_text
from bot.filters.grammar import (
           RESERVED_WORDS,
           SubscriptionCommand,
           check_labels,
           detect_language,
           opens_with_request,
           parse_filter,
           parse_subscription,
           subscription_action,
)
from bot.filters.match import DEFAULT_BOTS, Candidate, Match, OwnerMap, Reason, is_bot, match
from bot.filters.model import ME, Bound, Filter, Term

__all__ = ["DEFAULT_BOTS", "ME", "RESERVED_WORDS", "Bound", "Candidate", "Filter", "Match", "OwnerMap", "Reason",
           "SubscriptionCommand", "Term", "check_labels", "describe", "detect_language", "explain", "is_bot", "match",
           "opens_with_request", "parse_filter", "parse_subscription", "reasons_text",
           "subscription_action"]
