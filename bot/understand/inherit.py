"""A request made in a thread takes what it leaves unsaid from the thread's last request.

:func:`inherit` is applied to every request that is not a follow-up of its own form
(:mod:`bot.understand.followup` reads those): what the message names wins, what it leaves out comes from the
thread (:class:`~bot.understand.followup.Remembered`):

- **the window** — a digest, label view, list, ranking or question without a window of its own is asked of the
  thread's window (``好的，那同样的时间范围里 rollout 标签的情况也麻烦看一下`` after this month's trainer view;
  ``那这些是谁提的最多`` after last month's list);
- **the PR** — after a PR, a question about "it" without a PR of its own is about that PR (``明白了。如果我们把这个
  改动合进内部分支，有没有什么潜在风险``, ``影响 import 吗``, ``那它值得我去看一下吗``): risks, where to start,
  whether it is worth reading, or what it does, as the message asks;
- **the PR compared** — after a PR, another PR asked "what's the difference with" is compared with it
  (``What are the difference with #5997?``).

Pure: no I/O; the caller keeps the thread (:class:`bot.handlers.threads.ThreadMemory`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from bot.errors import FilterError
from bot.filters import parse_subscription
from bot.understand import followup as fu
from bot.understand.followup import Remembered
from bot.understand.intents import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    HelpIntent,
    Intent,
    LabelIntent,
    MergedIntent,
    PRIntent,
    PRQuestion,
    QuestionIntent,
    SubscribeIntent,
    UnsubscribeIntent,
)

__all__ = ["inherit"]

_ABOUT_IT = re.compile(r"它|这个改动|这个修改|这个改|这个pr|这改动|该改动|这次改动|这个变更|这个提交|"
                       r"(?<![A-Za-z])(?:it|this\s+(?:one|pr|change|fix)|that\s+(?:one|pr|change))(?![A-Za-z])",
                       re.IGNORECASE)
_IMPACT = re.compile(r"影响|兼容|冲突|踩坑|(?<![A-Za-z])(?:impact|affect|break|conflict)s?(?![A-Za-z])",
                     re.IGNORECASE)
_DIFFERENCE = re.compile(r"区别|差别|差异|不同|有何不同|比(?:一下|较)?|"
                         r"(?<![A-Za-z])(?:difference|differ|diff|compare[ds]?|"
                         r"versus|vs)(?![A-Za-z])", re.IGNORECASE)


_POINTED = re.compile(r"这个|這個|那个|那個|它|(?<![A-Za-z])(?:this|that|it)(?![A-Za-z])", re.IGNORECASE)
"""A subscription that points at what the thread was about (``这个标签帮我订一下``, ``subscribe me to that``)."""
_CJK_VALUE = re.compile(r"[\u3400-\u9fff]")
"""A "value" of Chinese words (``也帮我``) is the request's own words read as a label, never a label of the data."""
_POINTING_VALUES = frozenset({"this", "that", "it", "它", "这个", "那个", "這個", "那個"})


def _named_values(text: str) -> bool:
    """Whether a subscription request names values of its own (a label, path or author), pointing words aside."""
    try:
        found = parse_subscription(text)
    except FilterError:
        return False
    flt = found.filter
    return flt is not None and any(t.value.lower() not in _POINTING_VALUES and re.search(r"[A-Za-z0-9]", t.value)
                                   and not _CJK_VALUE.search(t.value) for t in (*flt.include, *flt.exclude))


def _question(text: str) -> PRQuestion | None:
    """What ``text`` asks of a PR it does not name, else ``None``."""
    asked = fu.question_of(text)
    if asked is not None:
        return asked
    if _IMPACT.search(text):
        return "risks"
    return None


_THAT_WINDOW = re.compile(r"(?:that|the\s+same)\s+(?:week|month|window|period)|那周|那一周|那个星期|那个月|同一周",
                          re.IGNORECASE)
"""The window of the thread named as such ("that week", 那周)."""


def _about_pr(intent: HelpIntent | QuestionIntent, previous: Remembered) -> Intent | None:
    """``intent`` read as a question about the thread's PR, when it is one (see the module docstring)."""
    text = intent.said if isinstance(intent, HelpIntent) else intent.text
    if not text or previous.number is None:
        return None
    if isinstance(intent, QuestionIntent) and (intent.window is not None or intent.label is not None):
        return None
    asked = _question(text)
    if asked is None and not _ABOUT_IT.search(text):
        return None
    return PRIntent(previous.number, repo=previous.repo, language=intent.language, question=asked or "what")


def inherit(intent: Intent, previous: Remembered | None) -> Intent:
    """``intent`` with what it leaves unsaid taken from ``previous`` (the thread's last request; ``None``: no
    thread)."""
    if previous is None:
        return intent
    if previous.kind == "pr" and isinstance(intent, HelpIntent | QuestionIntent) and not (
            isinstance(intent, HelpIntent) and intent.asked):
        about = _about_pr(intent, previous)
        if about is not None:
            return about
    if (isinstance(intent, PRIntent) and previous.kind == "pr" and previous.number not in (None, intent.number)
            and _DIFFERENCE.search(intent.text)):
        assert previous.number is not None
        return CompareIntent((previous.number, intent.number), repo=intent.repo or previous.repo,
                             language=intent.language)
    if isinstance(intent, ClarifyIntent) and intent.problem == "unknown_ref" and (
            previous.window is not None or (previous.kind in ("digest", "label", "merged", "authors", "question")
                                            and _THAT_WINDOW.fullmatch(intent.said.strip()))):
        # "that week": the thread's window (its default week too, when the thread asked for one)
        if intent.wanted == "merged":
            return MergedIntent(previous.window, repo=previous.repo, language=intent.language)
        return DigestIntent(week=previous.window, repo=previous.repo, language=intent.language)
    if isinstance(intent, SubscribeIntent | UnsubscribeIntent) and previous.label and intent.text \
            and _POINTED.search(intent.text) and not _named_values(intent.text):
        # "这个标签帮我订一下" after fully_async's view: that label
        return replace(intent, label=previous.label, text="")
    if previous.window is None:
        return intent
    if isinstance(intent, DigestIntent) and intent.week is None:
        return replace(intent, week=previous.window)
    if isinstance(intent, LabelIntent | MergedIntent | QuestionIntent) and intent.window is None:
        return replace(intent, window=previous.window)
    return intent
