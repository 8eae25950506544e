"""What the chat core answers, before any platform draws it: frozen, platform-neutral replies.

:class:`bot.handlers.core.Core` turns an intent into one of these; the renderers of
:mod:`bot.cards.chat` draw it as Slack Block Kit messages or Feishu cards::

    DigestReply(digest)                       a digest: "本周周报", "/prhub digest 2026-W16"
    PRReply(pr, repo, language, timezone)     one PR's analysis: "PR #6046 值得读吗"
    LabelReply(digest, label, prs)            the label view of a digest: "npu 标签"
    SubscriptionReply(change, subscription)   "订阅 npu" / "取消订阅 npu" done (or nothing to do)
    SubscriptionsReply(subscriptions)         "我的订阅"
    HelpReply(language, repo)                 anything else
    ErrorReply(message, language)             a :class:`~bot.errors.PrhubError`, in one line
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.models import Digest, DigestPR, Language
from bot.subscriptions import KNOWN_LABEL_WEEKS, Subscription

__all__ = ["DigestReply", "ErrorReply", "HelpReply", "LabelReply", "PRReply", "Reply", "SubscriptionChange",
           "SubscriptionReply", "SubscriptionsReply", "is_public"]

SubscriptionChange = Literal["subscribed", "already_subscribed", "unsubscribed", "not_subscribed"]


@dataclass(frozen=True, slots=True)
class DigestReply:
    digest: Digest


@dataclass(frozen=True, slots=True)
class PRReply:
    pr: DigestPR
    repo: str
    language: Language
    timezone: str


@dataclass(frozen=True, slots=True)
class LabelReply:
    """``prs``: the digest's PRs carrying ``label``, most important first (empty: none this window)."""

    digest: Digest
    label: str
    prs: tuple[DigestPR, ...]


@dataclass(frozen=True, slots=True)
class SubscriptionReply:
    change: SubscriptionChange
    subscription: Subscription
    language: Language
    known_labels: tuple[str, ...] | None = None
    """Set when the label was not seen in the last ``known_weeks`` weeks: the labels the repository
    does use (the subscription is kept all the same; a new label may appear later)."""
    known_weeks: int = KNOWN_LABEL_WEEKS


@dataclass(frozen=True, slots=True)
class SubscriptionsReply:
    subscriptions: tuple[Subscription, ...]
    language: Language


@dataclass(frozen=True, slots=True)
class HelpReply:
    language: Language
    repo: str | None


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """A request that could not be answered; ``message`` is one line for people."""

    message: str
    language: Language


Reply = DigestReply | PRReply | LabelReply | SubscriptionReply | SubscriptionsReply | HelpReply | ErrorReply


def is_public(reply: Reply) -> bool:
    """Whether ``reply`` is meant for the channel (digests, PR answers, label views) rather than only for
    the asker (subscriptions, help, errors) where the platform can tell the two apart."""
    return isinstance(reply, DigestReply | PRReply | LabelReply)
