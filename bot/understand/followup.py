"""Follow-ups: messages read against the thread's last request ("那上周呢", "and #6029?", "有啥风险").

Two halves, both pure:

- :func:`follow_up` reads a message that leans on what came before into a
  :class:`~bot.understand.intents.FollowUpIntent`: a window alone after ``那``/``and``/``what about`` or
  before ``呢`` (``那上上周呢``, ``3月的呢``, ``same for last month?``), ``the week before that`` /
  ``再往前一周``, a PR number alone (``and #6029?``, ``跟 5939 比呢``), a label alone (``那 npu 的呢``,
  ``and megatron?``, ``只看 npu 的``), a PR question without its PR (``有啥风险``, ``risks?``,
  ``where do I start``, ``从哪开始看``, ``值得细看吗``, ``第二个有啥风险``), ``english pls`` / ``用中文``.
- :func:`resolve` turns it into a whole intent with the thread's last request (:class:`Remembered`,
  kept by :class:`bot.threads.ThreadMemory`), or, without one, into what it says alone (a window is a
  digest, a number is that PR) or a question back (``有啥风险`` with no PR before it).

Every pattern is bounded and anchored; a message longer than :data:`MAX_FOLLOW_UP` is never a follow-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal

from bot.digest.window import window_from_spec, zone
from bot.errors import WindowError
from bot.models import Language
from bot.understand.intents import (
    ClarifyIntent,
    CompareIntent,
    DigestIntent,
    FollowUpIntent,
    Intent,
    LabelIntent,
    MergedIntent,
    PRIntent,
    PRQuestion,
    QuestionIntent,
)

__all__ = ["MAX_FOLLOW_UP", "Remembered", "follow_up_words", "names_one_pr", "remembered", "resolve"]

_WEEK_NAME = re.compile(r"[0-9]{4}-W[0-9]{2}")
MAX_FOLLOW_UP = 80
"""Characters: a longer message says enough by itself."""

Kind = Literal["digest", "pr", "compare", "label", "merged", "authors", "question"]

LEAD = re.compile(r"^(?:那么?(?![个個些])|那再|再|还有|還有|跟|和|与|换成|换到|改成|改看|换个|换一下|换下|"
                  r"and|what\s+about|how\s+about|(?:the\s+)?same\s+(?:thing\s+)?(?:but\s+)?(?:for|with)|"
                  r"switch\s+to|now\s+for|also|ok\s+and|now|then)(?![A-Za-z])\s*", re.IGNORECASE)
TRAIL = re.compile(r"(?:的)?\s*(?:呢|咧|嘞)\s*[?？!！。.~～]*$|\s*[?？]+$")
RISKS = re.compile(r"风险|隐患|(?:啥|什么|哪些)影响|安全吗|稳不稳|稳吗|会不会出事|出问题|翻车|踩雷|"
                   r"(?<![A-Za-z])(?:red\s+flags?|caveats?|watch\s+out|regressions?|gotchas?|danger)(?![A-Za-z])|"
                   r"(?<![A-Za-z])(?:is\s+it\s+|it['’]?s\s+)?safe\s+to(?![A-Za-z])|(?:有|啥|什么|哪些|大|多|踩)坑|坑(?:吗|多|大|不)|"
                   r"会不会(?:炸|挂|出问题|有问题|影响)|有没有影响|影响大|"
                   r"副作用|(?<![A-Za-z])(?:risks?|risky|what\s+(?:could|might|would|will|can)\s+(?:break|go\s+wrong)|any\s+gotchas|dangerous|break\s+anything|"
                   r"downsides?|drawbacks?|pitfalls?|side[\s-]effects?|concerns?)(?![A-Za-z])",
                   re.IGNORECASE)
START = re.compile(r"从哪(?:里|儿)?(?:个|些)?(?:文件|模块|部分|块|地方|函数|类)?\s?(?:开始|入手|看起|读起|下手|看|读)|"
                   r"先(?:看|读)(?:哪|什么)|入口|切入点|重点看哪|哪(?:个|些)(?:文件|模块|部分|块|函数)[^。？?]{0,6}(?:先|开始|入手)|"
                   r"(?<![A-Za-z])(?:where\s+(?:do|should|can)?\s*(?:i|we)\s+(?:should\s+)?(?:start|begin)|"
                   r"where\s+to\s+(?:start|begin)|start(?:ing)?\s+point|entry\s+point|"
                   r"which\s+(?:file|module|part|function)s?\s+(?:first|should|do|to)|begin\s+to\s+read|"
                   r"(?:read|look\s+at)\s+first)(?![A-Za-z])", re.IGNORECASE)
WORTH = re.compile(r"值得|值不值|要不要(?:看|读|仔细)|重要吗|关键吗|有没有必要|"
                   r"(?<![A-Za-z])(?:worth|should\s+i\s+(?:read|bother|care)|"
                   r"(?:need|have)\s+to\s+care|care\s+about)(?![A-Za-z])",
                   re.IGNORECASE)
WHAT = re.compile(r"讲了?(?:什么|啥)|是干(?:嘛|啥|什么)|做了?(?:什么|啥)|啥意思|什么意思|目的是|"
                  r"(?<![A-Za-z])(?:what\s+does\s+it\s+do|tl;?dr|purpose|gist|"
                  r"explain)(?![A-Za-z])", re.IGNORECASE)
BEFORE = re.compile(r"(?<![A-Za-z])(?:the\s+)?(?:week|month|one)\s+before(?:\s+that)?(?![A-Za-z])(?!\s+last)|"
                    r"再?往前(?:推|挪|倒)?(?:一|1)?(?:周|週|"
                    r"个星期)|"
                    r"前一(?:周|週)|前面(?:那|一|的那)(?:周|週)|再上一?(?:周|週)|更早一(?:周|週)|(?<![A-Za-z])previous\s+one(?![A-Za-z])|再前一周|再?早一(?:周|週|个星期)|"
                    r"(?<![A-Za-z])(?:an?\s+)?(?:earlier|prior)\s+(?:week|one)(?![A-Za-z])", re.IGNORECASE)
AFTER = re.compile(r"(?<![A-Za-z])(?:the\s+)?(?:week|month|one)\s+after(?:\s+that)?(?![A-Za-z])|"
                   r"再?往后(?:推|挪)?(?:一|1)?(?:周|週)|"
                   r"后一(?:周|週)|"
                   r"(?<![A-Za-z])next\s+one(?![A-Za-z])", re.IGNORECASE)
ENGLISH = re.compile(r"^(?:(?:in\s+)?english(?:\s+(?:pls|please|plz))?|(?:pls|"
                     r"please)\s+(?:reply\s+)?in\s+english|用英文|英文版?|"
                     r"说英文|英文回复)\s*[.!！。]?$", re.IGNORECASE)
CHINESE = re.compile(r"^(?:(?:in\s+)?chinese(?:\s+(?:pls|please))?|用中文|中文版?|说中文|"
                     r"中文回复)\s*[.!！。]?$", re.IGNORECASE)
NTH = re.compile(r"第(?P<zh>[一二两三四五六1-6])(?:个|個)|(?P<late>后面那个|后面的那个|后一个|后者|最后那个|最后一个|"
                 r"(?<![A-Za-z])(?:the\s+)?latter(?![A-Za-z]))|(?P<early>前面那个|前面的那个|前一个|前者|"
                 r"(?<![A-Za-z])(?:the\s+)?former(?![A-Za-z]))|"
                 r"(?<![A-Za-z])(?:the\s+)?(?P<en>first|second|third|fourth|last)\s+one(?![A-Za-z])", re.IGNORECASE)
ONLY = re.compile(r"^(?:只看|只要|只关心|仅看|only(?:\s+(?:show|the))?|just(?:\s+the)?)\s*", re.IGNORECASE)
COMPARE = re.compile(r"比(?:一下|一比)?\s*(?:呢)?|对比|(?<![A-Za-z])(?:compare(?:d)?(?:\s+(?:with|to))?|"
                     r"vs\.?)(?![A-Za-z])",
                     re.IGNORECASE)
_NTH = {"一": 1, "1": 1, "二": 2, "两": 2, "2": 2, "三": 3, "3": 3, "四": 4, "4": 4, "五": 5, "5": 5, "六": 6, "6": 6,
        "first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1}


def follow_up_words() -> tuple[re.Pattern[str], ...]:
    """The patterns that mark a follow-up (the parser blanks them before reading what is left)."""
    return (LEAD, TRAIL, RISKS, START, WORTH, WHAT, BEFORE, AFTER, NTH, ONLY, COMPARE)


def nth_of(text: str) -> int | None:
    """``第二个`` → 2, ``the last one`` → -1, else ``None``."""
    m = NTH.search(text)
    if m is None:
        return None
    if m["late"] or m["early"]:
        return -1 if m["late"] else 1
    return _NTH.get((m["zh"] or m["en"] or "").lower())


_ONE_PR = re.compile(r"(?:那个|那個|这个|這個)(?!\s?(?:啥|什么|什麼))[^,，。?？!！]{1,40}?的\s?pr(?![A-Za-z])",
                     re.IGNORECASE)
"""One PR named by what it is about (``看下那个fully async的PR``): which one the words pick."""
_MANY = re.compile(r"哪些|哪几|几个|那些|这些|所有|全部|都|有没有|列表|搜|有关的|相关的|(?<![A-Za-z])prs(?![A-Za-z])",
                   re.IGNORECASE)
"""Words that ask for several PRs or a search (``那个 npu 的 PR 都有哪些``, ``搜下跟 X 有关的 PR``): not one PR."""


def names_one_pr(text: str) -> bool:
    """Whether ``text`` names one PR by what it is about (``看下那个fully async的PR``), not several or a search."""
    return bool(_ONE_PR.search(text)) and not _MANY.search(text)


def question_of(text: str) -> PRQuestion | None:
    """The PR question ``text`` asks without naming a PR (risks, start, worth, what), else ``None``."""
    if RISKS.search(text):
        return "risks"
    if START.search(text):
        return "start"
    if WORTH.search(text):
        return "worth"
    if WHAT.search(text):
        return "what"
    return None


@dataclass(frozen=True, slots=True)
class Remembered:
    """The last request answered in a thread: its kind and what it named (kept as JSON in the store)."""

    kind: Kind
    window: str | None = None
    number: int | None = None
    numbers: tuple[int, ...] = ()
    label: str | None = None
    question: PRQuestion = "worth"
    terms: tuple[str, ...] = ()
    repo: str | None = None
    language: Language | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (:meth:`from_json` reads it back)."""
        return {"kind": self.kind, "window": self.window, "number": self.number, "numbers": list(self.numbers),
                "label": self.label, "question": self.question, "terms": list(self.terms), "repo": self.repo,
                "language": self.language}

    @classmethod
    def from_json(cls, data: Any) -> Remembered | None:
        """The record ``data`` holds, or ``None`` when it is not one (an old or foreign value)."""
        if not isinstance(data, dict) or data.get("kind") not in ("digest", "pr", "compare", "label", "merged",
                                                                  "authors", "question"):
            return None
        try:
            return cls(kind=data["kind"], window=data.get("window"), number=data.get("number"),
                       numbers=tuple(int(n) for n in data.get("numbers") or ()), label=data.get("label"),
                       question=data.get("question") or "worth", terms=tuple(data.get("terms") or ()),
                       repo=data.get("repo"), language=data.get("language"))
        except (TypeError, ValueError):
            return None


def remembered(intent: Intent, language: Language | None = None) -> Remembered | None:
    """What to keep of ``intent`` for the thread's follow-ups (``None``: nothing to follow up on)."""
    lang = language or getattr(intent, "language", None)
    match intent:
        case DigestIntent():
            return Remembered("digest", window=intent.week, repo=intent.repo, language=lang)
        case PRIntent():
            return Remembered("pr", number=intent.number, question=intent.question, repo=intent.repo, language=lang)
        case CompareIntent():
            return Remembered("compare", numbers=intent.numbers, repo=intent.repo, language=lang)
        case LabelIntent():
            return Remembered("label", window=intent.window, label=intent.label, repo=intent.repo, language=lang)
        case MergedIntent():
            return Remembered("authors" if intent.focus == "authors" else "merged", window=intent.window,
                              repo=intent.repo, language=lang)
        case QuestionIntent():
            return Remembered("question", window=intent.window, label=intent.label, terms=intent.terms,
                              repo=intent.repo, language=lang)
    return None


def shifted(spec: str | None, step: int, *, tz: str, now: datetime) -> str | None:
    """The window one step (a week, a month, the same length) before (``-1``) or after (``1``) ``spec``'s
    (``None``: last week's), as a spec; ``None`` when it cannot be laid out."""
    try:
        window = window_from_spec(spec or "last", tz=tz, now=now)
    except WindowError:
        return None
    if _WEEK_NAME.fullmatch(window.name):
        start = window.start.astimezone(zone(tz)).date() + timedelta(weeks=step)
        year, week, _ = start.isocalendar()
        return f"{year:04d}-W{week:02d}"
    first = window.start.astimezone(zone(tz)).date()
    last = window.end.astimezone(zone(tz)).date() - timedelta(days=1)
    if first.day == 1 and (last + timedelta(days=1)).day == 1 and first.month == last.month:
        month = first.month + step
        year = first.year + (month - 1) // 12
        return f"{year:04d}-{(month - 1) % 12 + 1:02d}"
    span = (last - first).days + 1
    a, b = first + timedelta(days=step * span), last + timedelta(days=step * span)
    return f"{a.isoformat()}..{b.isoformat()}"


def resolve(follow: FollowUpIntent, previous: Remembered | None, *, tz: str, now: datetime) -> Intent:
    """The whole intent of ``follow`` after ``previous`` (the thread's last request, or ``None``).

    A window replaces the previous window (``shift`` moves it); a number the previous PR (same question),
    or joins it in a comparison; a label replaces the label of a label view or question (``narrow``: it
    narrows a question); a PR question asks about the previous PR (the ``nth`` of a comparison) or, after
    a window, searches that window's risks; ``language`` alone repeats the previous request in it.
    """
    lang = follow.language
    prev = previous
    window = follow.window
    if follow.shift is not None:
        window = shifted(prev.window if prev else None, follow.shift, tz=tz, now=now)
    repo = prev.repo if prev else None
    if follow.number is not None:
        if follow.compare and prev is not None and prev.kind == "pr" and prev.number:  # 跟 5939 比呢
            return CompareIntent((prev.number, follow.number), repo=repo, language=lang)
        question = follow.question or (prev.question if prev is not None and prev.kind == "pr" else "worth")
        return PRIntent(follow.number, repo=repo, language=lang, question=question)
    if follow.compare and follow.number is None:  # compare them
        if prev is not None and prev.kind == "compare":
            return CompareIntent(prev.numbers, repo=repo, language=lang)
        return ClarifyIntent(follow.text, "no_pr", "pr", language=lang)
    if follow.question is not None and (prev is None or prev.kind in ("pr", "compare")):
        number = _pr_of(prev, follow.nth)
        if number is None:
            return ClarifyIntent(follow.text, "no_pr", "pr", language=lang)
        return PRIntent(number, repo=repo, language=lang, question=follow.question)
    if prev is None:
        if follow.label is not None:
            return LabelIntent(follow.label, language=lang, window=window, said=follow.said)
        if window is not None:
            return DigestIntent(week=window, language=lang, said=follow.said)
        return ClarifyIntent(follow.text, "no_context", "digest", language=lang)
    window = window if (window is not None or follow.shift is not None) else prev.window
    said = follow.said if follow.window is not None else None
    label = follow.label or prev.label
    if follow.question is not None:  # 有啥风险 after a window: the window's risky PRs
        if follow.question == "risks":
            return QuestionIntent(("风险",), window=window, label=label, repo=repo, language=lang, said=said,
                                  text=follow.text)
        if label:
            return LabelIntent(label, repo=repo, language=lang, window=window, said=said)
        return DigestIntent(week=window, repo=repo, language=lang, said=said)
    match prev.kind:
        case "digest" if follow.label is not None:
            return LabelIntent(follow.label, repo=repo, language=lang, window=window, said=said)
        case "digest":
            return DigestIntent(week=window, repo=repo, language=lang, said=said)
        case "label":
            return LabelIntent(label or "", repo=repo, language=lang, window=window, said=said)
        case "merged" | "authors" if follow.label is not None:
            return LabelIntent(follow.label, repo=repo, language=lang, window=window, said=said)
        case "merged" | "authors":
            return MergedIntent(window, repo=repo, language=lang, said=said,
                                focus="authors" if prev.kind == "authors" else "list")
        case "question" if follow.label is not None and not follow.narrow and not prev.label and prev.terms:
            # "sglang 的呢" after "哪些 PR 动了 vllm rollout": the first word swapped, the others kept
            terms = (follow.label, *prev.terms[1:]) if follow.label not in prev.terms else prev.terms
            return QuestionIntent(terms, window=window, repo=repo, language=lang, said=said, text=follow.text)
        case "question":
            return QuestionIntent(prev.terms, window=window, label=label, repo=repo, language=lang, said=said,
                                  text=follow.text)
        case "pr" | "compare" if follow.label is not None:
            return LabelIntent(follow.label, repo=repo, language=lang, window=window, said=said)
    if window is not None:
        return DigestIntent(week=window, repo=repo, language=lang, said=said)
    return _again(prev, lang)


def _pr_of(prev: Remembered | None, nth: int | None) -> int | None:
    if prev is None:
        return None
    if prev.kind == "pr":
        return prev.number
    if prev.kind == "compare" and prev.numbers:
        if nth is None:
            return prev.numbers[0]
        index = nth - 1 if nth > 0 else len(prev.numbers) - 1
        return prev.numbers[index] if 0 <= index < len(prev.numbers) else None
    return None


def _again(prev: Remembered, lang: Language | None) -> Intent:
    """The previous request asked again (``english pls``)."""
    match prev.kind:
        case "pr":
            return PRIntent(prev.number or 0, repo=prev.repo, language=lang, question=prev.question)
        case "compare":
            return CompareIntent(prev.numbers, repo=prev.repo, language=lang)
        case "label":
            return LabelIntent(prev.label or "", repo=prev.repo, language=lang, window=prev.window)
        case "merged" | "authors":
            return MergedIntent(prev.window, repo=prev.repo, language=lang,
                                focus="authors" if prev.kind == "authors" else "list")
        case "question":
            return QuestionIntent(prev.terms, window=prev.window, label=prev.label, repo=prev.repo, language=lang)
    return DigestIntent(week=prev.window, repo=prev.repo, language=lang)


def with_language(intent: Intent, language: Language | None) -> Intent:
    """``intent`` answered in ``language`` when it has none of its own."""
    if language is None or getattr(intent, "language", None) is not None:
        return intent
    return replace(intent, language=language)
