"""What the chat core answers, before any platform draws it: frozen, platform-neutral replies.

:class:`bot.handlers.core.Core` turns an intent into one of these; the renderers of
:mod:`bot.cards.chat` draw it as Slack Block Kit messages or Feishu cards::

    DigestReply(digest)                       a digest: "本周周报", "/prhub digest 2026-W16"
    PRReply(pr, repo, language, timezone)     one PR's analysis: "PR #6046 值得读吗"
    LabelReply(digest, label, prs)            the label view of a digest: "npu 标签"
    SubscriptionReply(change, subscription)   "订阅 npu -ci" / "退订 npu" / "退订全部" done, nothing to do, or refused
    SubscriptionsReply(subscriptions)         "我的订阅"
    GitHubLinkReply(handle, language)         "我的 GitHub 是 alice"
    PersonalDigestReply(change, language)     "每周给我发我的周报" / "不要再发我的周报"
    MyDigestReply(digests, language)          "我的周报": last week through the person's filters
    CompareReply(comparison)                  "#6046 和 #6029 哪个更值得读": verdicts side by side, which first
    AnswerReply(answer, phrasing, notes)      "哪些 PR 改了 rollout 的配置": the matching PRs with evidence
    MergedReply(digest, focus, notes)         "本月合并了哪些 PR" / "谁贡献最多": a window's PRs or their authors
    EmptyWindowReply(window, repo, …)         a window without merged PRs, naming the latest one that has some
    ClarifyReply(text, language)              a window that could not be read: which dates did you mean?
    HelpReply(language, repo, examples)       anything else (``examples``: the nearest to what was said)
    NoteReply(text, language)                 one friendly line: thanks, greetings, praise
    ErrorReply(message, language)             a :class:`~bot.errors.PrhubError`, in one line for people

``notes`` (digest, label, answer, merged, empty window) are lines above the content, in the reply's
language and unescaped: "我把“上上周”理解为 2026-W14（04-06 – 04-12）。", "…还没有结束", the window used
when none was named.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.digest.ask import Answer, Phrasing
from bot.digest.compare import Comparison
from bot.digest.personal import PersonalDigest
from bot.models import Digest, DigestPR, Language, Window
from bot.subscriptions import Subscription

__all__ = ["AnswerReply", "ClarifyReply", "CompareReply", "DigestReply", "EmptyWindowReply", "ErrorReply",
           "GitHubLinkReply", "HelpReply", "LabelReply", "MergedReply", "MyDigestReply", "NoteReply", "PRReply",
           "PersonalDigestChange", "PersonalDigestReply", "Reply", "SubscriptionChange",
           "SubscriptionReply", "SubscriptionsReply", "is_public"]

SubscriptionChange = Literal["subscribed", "already_subscribed", "unsubscribed", "not_subscribed",
                             "unsubscribed_all", "nothing_to_unsubscribe", "refused"]
PersonalDigestChange = Literal["on", "already_on", "off", "not_on", "refused"]


@dataclass(frozen=True, slots=True)
class DigestReply:
    """A digest. ``whole``: all of it at once (the card, then the full report and label view in its
    thread: the weekly push, a channel configured so); otherwise the card alone, the rest when
    完整报告 is pressed."""

    digest: Digest
    notes: tuple[str, ...] = ()
    whole: bool = False


@dataclass(frozen=True, slots=True)
class PRReply:
    """One PR's analysis; ``notes``: lines above it (what was asked: its risks, where to start)."""

    pr: DigestPR
    repo: str
    language: Language
    timezone: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LabelReply:
    """``prs``: the digest's PRs carrying ``label``, most important first (empty: none this window)."""

    digest: Digest
    label: str
    prs: tuple[DigestPR, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SubscriptionReply:
    """A subscription change, or why none was made.

    ``subscription``: the one added, removed or asked about (``None`` for ``unsubscribed_all``,
    ``nothing_to_unsubscribe`` and most refusals); ``removed``: what ``退订全部`` removed; ``message``:
    why it was ``refused`` (a filter that does not read, not an admin of the channel, no CODEOWNERS,
    no linked GitHub handle), or a note beside a change, in ``language``; ``batch_minutes``: the
    alerts' batch window, said back on a new subscription; ``preview``: on a new subscription, what it would
    have sent in the last four weeks (:meth:`bot.subscriptions.AlertPreview.text`), ``""`` when unknown.
    """

    change: SubscriptionChange
    subscription: Subscription | None
    language: Language
    removed: tuple[Subscription, ...] = ()
    message: str = ""
    batch_minutes: int = 0
    preview: str = ""


@dataclass(frozen=True, slots=True)
class SubscriptionsReply:
    subscriptions: tuple[Subscription, ...]
    language: Language


@dataclass(frozen=True, slots=True)
class GitHubLinkReply:
    """The asker's GitHub handle is linked; ``paths``: the CODEOWNERS patterns it owns in the channel's
    repository (``repo``), when they could be read."""

    handle: str
    language: Language
    repo: str | None = None
    paths: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class PersonalDigestReply:
    """The weekly personal digest turned on or off (or why not: ``message``); ``when`` says the day and
    time (``mon 09:00``), ``filters`` what it will hold (``()``: every PR, no subscription yet)."""

    change: PersonalDigestChange
    language: Language
    when: str = ""
    filters: tuple[Subscription, ...] = ()
    message: str = ""


@dataclass(frozen=True, slots=True)
class MyDigestReply:
    """"我的周报": the person's digest of each repository they follow (in order); ``message`` when there
    is nothing to show."""

    digests: tuple[PersonalDigest, ...]
    language: Language
    message: str = ""


@dataclass(frozen=True, slots=True)
class CompareReply:
    comparison: Comparison


@dataclass(frozen=True, slots=True)
class AnswerReply:
    """A question about a window answered from its PRs; ``phrasing``: the model's cited claims, if any."""

    answer: Answer
    phrasing: Phrasing | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MergedReply:
    """The PRs ``digest``'s window merged (``focus="list"``, most important first) or their authors
    (``"authors"``, most PRs first)."""

    digest: Digest
    focus: str = "list"
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EmptyWindowReply:
    """``window`` of ``repo`` has no merged PR; ``latest`` is the latest week that has some (its last
    merge at ``last_merge``), ``None`` when the source holds none."""

    window: Window
    repo: str
    language: Language
    latest: Window | None = None
    last_merge: datetime | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ClarifyReply:
    """The question back when a window could not be read (``text``: in ``language``, unescaped)."""

    text: str
    language: Language


@dataclass(frozen=True, slots=True)
class HelpReply:
    language: Language
    repo: str | None
    examples: tuple[str, ...] = ()
    """The example phrasings nearest to a message not understood (empty: the whole help)."""


@dataclass(frozen=True, slots=True)
class NoteReply:
    """One line for people (``text``, unescaped): the answer to small talk."""

    text: str
    language: Language


@dataclass(frozen=True, slots=True)
class NoticeReply:
    """Something the channel should know before it can ask anything (``text``: in ``language``, unescaped),
    e.g. that it is bound to no repository yet and how an admin binds one."""

    text: str
    language: Language


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """A request that could not be answered; ``message`` is one line for people."""

    message: str
    language: Language


Reply = (DigestReply | PRReply | LabelReply | CompareReply | AnswerReply | MergedReply | EmptyWindowReply
         | ClarifyReply | SubscriptionReply | SubscriptionsReply | GitHubLinkReply | PersonalDigestReply
         | MyDigestReply | HelpReply | NoteReply | NoticeReply | ErrorReply)


def is_public(reply: Reply) -> bool:
    """Whether ``reply`` is meant for the channel (digests, PR answers, label views) rather than only for
    the asker (subscriptions, help, questions back, errors) where the platform can tell the two apart."""
    return isinstance(reply, DigestReply | PRReply | LabelReply | CompareReply | AnswerReply | MergedReply
                      | EmptyWindowReply | NoticeReply)
