"""Time windows as people write them, in Chinese and English, read into window specs.

:func:`read_window` finds the words of a message that name a time window and
returns a :class:`WindowReading`: the window spec (the grammar of
:data:`bot.digest.window.SPEC_FORMS`, laid out against a clock later by
:func:`bot.digest.window.window_from_spec`), the words as written (for the
reply's "I read 上上周 as 2026-W14 (04-06 – 04-12)") and their span, so the
rest of the message can be read without them. A window that is recognisable
but impossible (``第60周``, ``13月``, ``4月31日``, two different windows in one
message, a range of weeks) carries a ``problem`` instead of a spec: the reply
asks, never silently answers for another week.

Forms read (examples; full-width characters are folded by the caller's NFKC):

=================  ===========================================================  ==================
kind               examples                                                     spec
=================  ===========================================================  ==================
ISO week           ``2026-W16`` ``2026w16`` ``2026年第16周`` ``week 16 of 2026``  ``2026-W16``
week number        ``W16`` ``w16`` ``wk16`` ``第16周`` ``16周`` ``week 16``        ``*-W16``
this / last week   ``本周`` ``这周`` ``this week`` / ``上周`` ``last week``         ``this`` / ``last``
weeks ago          ``上上周`` ``两周前`` ``the week before last`` ``2 weeks ago``    ``week-2``
                   (one week per 上: ``上上上周`` is ``week-3``; ``上上上个月`` ``month-3``)
previous N weeks   ``前两周`` ``previous two weeks``                              ``weeks-2``
recent days        ``最近两周`` ``近7天`` ``past two weeks`` ``last 7 days``         ``days-14``
                   ``the past fortnight`` ``最近半个月`` (15 days)                  ``days-14`` ``days-15``
months             ``本月`` ``上个月`` ``4月`` ``2026年4月`` ``this month`` ``April``  ``month-0`` ``*-04``
days and ranges    ``4月13日到19日`` ``4/13-4/19`` ``2026-04-13..2026-04-19``       ``*-04-13..*-04-19``
since              ``since Monday`` ``周一以来`` ``4月13日以来`` ``since April 13``    ``mon..`` ``*-04-13..``
week commencing   ``w/c Apr 13`` ``w/b 13 April`` ``week starting 2026-04-13``         ``*-04-13..*-04-19``
since a month      ``since March`` ``3月以来`` ``从3月开始`` (``from March`` is March)      ``*-03-01..``
since a past week  ``上周三以来`` ``从上上周一开始`` ``since Wednesday last week``      ``wed-1..`` ``mon-2..``
since last …       ``since last Wednesday``                                      ``last-wed..``
days               ``今天`` ``昨天`` ``today`` ``yesterday``                        ``day-0`` ``day-1``
quarters           ``本季度`` ``上个季度`` ``this quarter`` ``2026Q1``                   (asks: ``week_range``)
week of a day      ``the week of Apr 6`` ``4月13日那周``                             (asks: ``week_range``)
years              ``今年`` ``2026年`` ``this year``                               ``year-0`` ``2026``
=================  ===========================================================  ==================

A weekday "since" is read as people mean it in each language. ``周三以来`` and ``since
Wednesday`` start on the latest Wednesday (today, on a Wednesday). ``上周三以来`` names the
Wednesday *of last week* (each ``上`` one week further back): on Wednesday 2026-04-22 ``上周一以来``
starts on 04-13, never on 04-20. English "since last Wednesday" names the latest Wednesday
*before today*: on Wednesday 04-22 it starts on 04-15, "since last Monday" on 04-20; "since
Wednesday last week" (or "last week's Wednesday") is the Chinese reading, ``wed-1..``.

Every pattern has bounded repetition and is anchored on a literal, so a scan is
linear in the length of the message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from bot.digest.window import WEEKDAYS, iso_weeks_in_year
from bot.understand.numbers import EN_NUMBER, ZH_NUMBER, number

MAX_PHRASES = 16
"""Matches of one pattern that are read; a message naming more windows than this is not a request."""

WindowProblem = Literal["no_such_week", "no_such_month", "no_such_date", "several_windows", "week_range"]
"""Why a window could not be read: the reply names the problem and asks. ``week_range`` is a span
that is read only as weeks or dates: a range of weeks (``W14-W16``) or a quarter (``本季度``,
``last quarter``, ``2026Q1``), which no window spec names."""


@dataclass(frozen=True, slots=True)
class WindowReading:
    """The window named in a message.

    Attributes:
        spec: the window spec, or ``None`` when ``problem`` is set.
        said: the words as written (``上上周``, ``4月13日到19日``).
        start: offset of ``said`` in the text that was read.
        end: offset just after it.
        problem: why the words could not be read as one window.
    """

    spec: str | None
    said: str
    start: int
    end: int
    problem: WindowProblem | None = None


@dataclass(frozen=True, slots=True)
class _Part:
    """One window phrase found in the text (before ranges and "since" are joined)."""

    kind: Literal["day", "week", "month", "other"]
    spec: str | None
    start: int
    end: int
    problem: WindowProblem | None = None
    year: int | None = None
    month: int | None = None
    day: int | None = None


_A = r"(?<![A-Za-z])"  # ASCII word boundaries: Python's \b treats CJK as word characters
_Z = r"(?![A-Za-z])"
_ND = r"(?<![0-9])"
_NZ = r"(?![0-9])"
_WEEK_ZH = r"(?:周|週|星期|礼拜|禮拜)"
_WK = r"(?:week|wk)"
_WKS = r"(?:weeks?|wks?)"
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_EN = (r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
             r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?")
_AMBIGUOUS_MONTHS = ("may", "march", "mar", "jun", "jul", "aug", "dec", "sep", "sept", "oct", "jan")
"""English month words that are also ordinary words or abbreviations: read as months only when
capitalised, or next to a day, a year or "in / since / during / of"."""
_WEEKDAY_EN = r"(?P<wd>mon|tue|wed|thu|fri|sat|sun)[a-z]{0,6}"
_WEEKDAY_ZH = "一二三四五六日天"
_CONNECTOR = re.compile(r"\s{0,3}(?:到|至|~|～|-|–|—|\.\.|to|until|till|through|thru|and)\s{0,3}", re.IGNORECASE)
_DAY_END = re.compile(r"(?P<d>[0-9]{1,2})\s?(?:日|号|號|st|nd|rd|th)?(?![0-9/.\-月])")
_SINCE_BEFORE = re.compile(r"(?:since|from|between|从|自从|自)\s{0,2}$", re.IGNORECASE)
_WEEK_FROM = re.compile(r"(?<![A-Za-z])(?:w/c|w/b|(?:the\s)?week\s(?:commencing|beginning|starting))"
                        r"(?:\s(?:on|from))?\s{0,2}$", re.IGNORECASE)
"""Before a date, "week commencing" (and its shorthands): the week is the seven days from that date."""
_WEEK_OF = re.compile(r"(?<![A-Za-z])(?:the\s)?(?:week|wk)\sof\s{0,2}$", re.IGNORECASE)
"""Before a date, "the week of" (the week that holds it; not a single day)."""
_WEEK_AFTER = re.compile(r"\s?的?(?:那|这|這|所在的?)\s?(?:一|个|個)?\s?(?:周|週|星期|礼拜|禮拜)(?![一二三四五六日天])")
"""After a date, ``那周`` / ``所在的周``: the week that holds it."""
_SINCE_MONTH_BEFORE = re.compile(r"(?:since|自从|自)\s{0,2}$", re.IGNORECASE)
_SINCE_AFTER = re.compile(r"^\s{0,2}(?:以来|以後|以后|之后|之後|起|开始|開始|至今|到现在|到現在|on(?:wards|ward)?)",
                          re.IGNORECASE)

Builder = Callable[[re.Match[str]], _Part | None]


def _p(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _week(m: re.Match[str], year: str | None) -> _Part:
    week = number(m["w"]) or 0
    y = int(year) if year else None
    weeks = iso_weeks_in_year(y) if y and 1 <= y <= 9999 else 53
    if not 1 <= week <= weeks:
        return _Part("week", None, m.start(), m.end(), "no_such_week")
    return _Part("week", f"{y:04d}-W{week:02d}" if y else f"*-W{week:02d}", m.start(), m.end())


def _any_week(m: re.Match[str]) -> _Part:
    return _week(m, m.groupdict().get("y"))


def _offset(kind: str, factor: int = 1) -> Builder:
    def build(m: re.Match[str]) -> _Part | None:
        n = number(m["n"])
        if n is None or n < 1 or n > 520:
            return None
        return _Part("other", f"{kind}-{n * factor}", m.start(), m.end())

    return build


def _fixed(spec: str) -> Builder:
    return lambda m: _Part("week" if spec in ("this", "last") or spec.startswith("week-") else "other",
                           spec, m.start(), m.end())


def _back(unit: str, kind: Literal["week", "other"]) -> Builder:
    """``上上周`` two weeks back, ``上上上个月`` three months: one ``unit`` per ``上`` (the ``ups`` group)."""
    return lambda m: _Part(kind, f"{unit}-{m['ups'].count('上')}", m.start(), m.end())


def _month(m: re.Match[str]) -> _Part | None:
    month = number(m["m"])
    if month is None:
        return None
    if not 1 <= month <= 12:
        return _Part("other", None, m.start(), m.end(), "no_such_month")
    year = m.groupdict().get("y")
    return _Part("month", f"{int(year):04d}-{month:02d}" if year else f"*-{month:02d}", m.start(), m.end())


def _month_name(m: re.Match[str]) -> _Part | None:
    word = m["mon"]
    year = m.groupdict().get("y")
    if word.lower() in _AMBIGUOUS_MONTHS and not year and not word[0].isupper():
        before = m.string[max(0, m.start() - 8):m.start()].lower()
        after = m.string[m.end():m.end() + 3]
        whole = len(word) > 4 and not re.match(r"\s?[A-Za-z0-9]", after)  # "top authors march": the month
        if not re.search(r"(?:in|since|during|of|for|from)\s{1,2}$", before) and not whole:
            return None
    month = _MONTHS.index(word[:3].lower()) + 1
    return _Part("month", f"{int(year):04d}-{month:02d}" if year else f"*-{month:02d}", m.start(), m.end())


def _day(m: re.Match[str], month: int | None) -> _Part | None:
    day = number(m["d"])
    if month is None or day is None:
        return None
    year = m.groupdict().get("y")
    try:
        date(int(year) if year else 2000, month, day)  # 2000 is a leap year: 02-29 exists
    except ValueError:
        return _Part("day", None, m.start(), m.end(), "no_such_date")
    spec = f"{int(year):04d}-{month:02d}-{day:02d}" if year else f"*-{month:02d}-{day:02d}"
    return _Part("day", spec, m.start(), m.end(), year=int(year) if year else None, month=month, day=day)


def _numeric_day(strict: bool) -> Builder:
    def build(m: re.Match[str]) -> _Part | None:
        month, day = number(m["m"]), number(m["d"])
        if not strict and (month is None or day is None or not 1 <= month <= 12 or not 1 <= day <= 31):
            return None  # "6046-6029", "1/2": not a date
        return _day(m, month)

    return build


def _named_day(m: re.Match[str]) -> _Part | None:
    return _day(m, _MONTHS.index(m["mon"][:3].lower()) + 1)


def _dotted_range(m: re.Match[str]) -> _Part | None:
    """``4.13-4.19``: dotted dates only as the two ends of a range (``0.18`` alone is a version)."""
    first = _numeric_day(False)(m)
    if first is None or first.problem is not None:
        return first
    month, day = number(m["m2"]), number(m["d2"])
    if month is None or day is None or not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    try:
        date(2000, month, day)
    except ValueError:
        return _Part("other", None, m.start(), m.end(), "no_such_date")
    return _Part("other", f"{first.spec}..*-{month:02d}-{day:02d}", m.start(), m.end())


def _weekday_since(m: re.Match[str]) -> _Part:
    """``周三以来`` ``since wednesday``: ``wed..``; ``上周三以来`` (``上`` counted): ``wed-1..``;
    ``since last wednesday``: ``last-wed..``; ``since wednesday last week``: ``wed-1..``."""
    wd = m["wd"]
    index = _WEEKDAY_ZH.index(wd) if wd in _WEEKDAY_ZH else WEEKDAYS.index(wd[:3].lower())
    name = WEEKDAYS[min(index, 6)]
    found = m.groupdict()
    if found.get("ago"):
        return _Part("other", f"{name}-{found['ago'].count('上')}..", m.start(), m.end())
    if "week" in m.group(0).lower():
        return _Part("other", f"{name}-1..", m.start(), m.end())
    if (found.get("which") or "").lower() == "last":
        return _Part("other", f"last-{name}..", m.start(), m.end())
    return _Part("other", f"{name}..", m.start(), m.end())


_ORDINALS_EN = ("first", "second", "third", "fourth", "fifth")


def _week_of_month(m: re.Match[str]) -> _Part | None:
    """``4月第二周``, ``second week of april``: the K-th week of a month, the first being the ISO week that holds
    the month's first day — the week holding day ``1 + 7 (K - 1)`` (``week@*-04-08``)."""
    k_said = m["k"].lower()
    k = _ORDINALS_EN.index(k_said) + 1 if k_said in _ORDINALS_EN else number(k_said.rstrip("stndrh"))
    month = number(m["m"]) if m.groupdict().get("m") else _MONTHS.index(m["mon"][:3].lower()) + 1
    if k is None or month is None:
        return None
    if not 1 <= month <= 12:
        return _Part("other", None, m.start(), m.end(), "no_such_month")
    if not 1 <= k <= 5:
        return _Part("other", None, m.start(), m.end(), "no_such_week")
    year = m.groupdict().get("y")
    return _Part("other", f"week@{year or '*'}-{month:02d}-{1 + 7 * (k - 1):02d}", m.start(), m.end())


def _quarter(m: re.Match[str]) -> _Part:
    return _Part("other", None, m.start(), m.end(), "week_range")


def _year(m: re.Match[str]) -> _Part | None:
    year = int(m["y"])
    return _Part("other", f"{year:04d}", m.start(), m.end()) if 1970 <= year <= 2200 else None


_N = ZH_NUMBER
_E = EN_NUMBER
_PATTERNS: list[tuple[re.Pattern[str], Builder]] = [
    # ISO weeks and week numbers
    (_p(rf"{_ND}(?P<y>[0-9]{{4}})\s?(?:年\s?)?(?:-|/|\s)?w(?:k|eek)?\s?(?P<w>[0-9]{{1,2}}){_NZ}"), _any_week),
    (_p(rf"{_ND}(?P<y>[0-9]{{4}})\s?(?:年\s?的?\s?(?:第\s?)?|的?\s?第\s?)(?P<w>{_N})\s?(?:个\s?)?"
        rf"{_WEEK_ZH}"), _any_week),
    (_p(rf"{_A}(?:w|wk|week)\s?#?(?P<w>[0-9]{{1,2}}){_NZ}(?:\s?(?:of|,)\s?(?P<y>[0-9]{{4}}){_NZ})?"), _any_week),
    (_p(rf"第\s?(?P<w>{_N})\s?(?:个\s?)?{_WEEK_ZH}"), _any_week),
    (_p(rf"(?<![0-9A-Za-z近前后後过這这本上最])(?P<w>[0-9]{{1,2}})\s?{_WEEK_ZH}"
        r"(?![一二三四五六日天前内內以来後后])"), _any_week),
    # the K-th week of a month
    (_p(rf"(?:(?P<y>[0-9]{{4}})\s?年\s?)?(?<![0-9])(?P<m>{_N})\s?(?:月份|月)\s?的?\s?第\s?(?P<k>{_N})\s?(?:个|個)?\s?"
        rf"{_WEEK_ZH}(?![一二三四五六日天])"), _week_of_month),
    (_p(rf"{_A}(?:the\s)?(?P<k>first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th)\s(?:week|wk)\s(?:of|in)\s"
        rf"{_MONTH_EN}{_Z}(?:\s?,?\s?(?P<y>[0-9]{{4}}){_NZ})?"), _week_of_month),
    # relative weeks
    (_p(rf"(?:本|这|這|今)\s?(?:一|个|個)?\s?{_WEEK_ZH}(?![一二三四五六日天])"), _fixed("this")),
    (_p(rf"(?P<ups>(?:上\s?){{2,8}})(?:个|個)?\s?{_WEEK_ZH}"), _back("week", "week")),
    (_p(rf"上\s?(?:一|个|個|一个|一個)?\s?{_WEEK_ZH}"), _fixed("last")),
    (_p(rf"(?P<n>{_N})\s?(?:个|個)?\s?{_WEEK_ZH}(?:之|以)?前"), _offset("week")),
    (_p(rf"(?<![最近过])前\s?(?P<n>{_N})\s?(?:个|個)?\s?{_WEEK_ZH}"), _offset("weeks")),
    (_p(rf"(?:最近|近|过去|過去|这|這)\s?的?\s?(?P<n>{_N})\s?(?:个|個)?\s?{_WEEK_ZH}"), _offset("days", 7)),
    (_p(rf"(?:最近|近|过去|過去)\s?的?\s?(?P<n>{_N})\s?(?:天|日)"), _offset("days")),
    (_p(rf"(?:最近|近|过去|過去)\s?的?\s?(?P<n>{_N})\s?(?:个|個)\s?月"), _offset("days", 30)),
    (_p(rf"{_A}(?:this|current)\s(?:calendar\s)?{_WK}(?:'?s)?{_Z}"), _fixed("this")),
    (_p(rf"{_A}(?:last|lst|previous|prev|prior)\s(?:calendar\s)?{_WK}(?:'?s)?{_Z}"), _fixed("last")),
    (_p(rf"{_A}(?:the\s)?week\sbefore(?:\sthe)?\slast(?:\sweek)?{_Z}"), _fixed("week-2")),
    (_p(rf"{_A}(?P<n>{_E})\s{_WKS}\sago{_Z}"), _offset("week")),
    (_p(rf"{_A}previous\s(?P<n>{_E})\s(?:weeks|wks){_Z}"), _offset("weeks")),
    (_p(rf"{_A}(?:(?:in\s)?the\s)?(?:last|past|recent)\s(?P<n>{_E})\s{_WKS}{_Z}"), _offset("days", 7)),
    (_p(rf"{_A}(?:(?:in\s)?the\s)?past\s{_WK}{_Z}"), _fixed("days-7")),
    (_p(rf"{_A}(?:(?:in\s)?the\s)?(?:last|past|recent)\sfortnight{_Z}"), _fixed("days-14")),
    (_p(rf"{_A}(?:a|one)\sfortnight\sago{_Z}"), _fixed("week-2")),
    (_p(r"(?:最近|近|过去|過去)\s?的?\s?半\s?(?:个|個)?\s?月"), _fixed("days-15")),
    # "lately": the last four weeks with data (the answer lays it out against the data)
    (_p(r"最近(?:一段时间|一段時間|这段时间|这阵子|這陣子)?|近期|近来|近來|这阵子|這陣子|这段时间|這段時間|前阵子|前段时间|"
        r"近段时间|这几周|這幾週|这几个星期"), _fixed("recent")),
    (_p(rf"{_A}(?:lately|recently|of\slate|these\sdays|in\srecent\sweeks|(?:in\s)?the\spast\sfew\sweeks|"
        rf"(?:in\s)?the\slast\sfew\sweeks|recent(?=\s(?:prs?|pull|changes|merges|work|activity|stuff|weeks)))"
        rf"{_Z}"), _fixed("recent")),
    (_p(rf"{_A}(?:(?:in\s)?the\s)?(?:last|past|recent)\s(?P<n>{_E})\sdays?{_Z}"), _offset("days")),
    (_p(rf"{_A}(?:(?:in\s)?the\s)?(?:last|past)\s(?P<n>{_E})\smonths?{_Z}"), _offset("days", 30)),
    # months and years
    (_p(r"(?:本|这|這|当|當)\s?(?:个|個)?\s?月(?!份?\s?[0-9])"), _fixed("month-0")),
    (_p(r"(?<![0-9一二三四五六七八九十上])月初\s?(?:到现在|到今天|至今|以来|开始|起)"), _fixed("month-0")),
    (_p(r"(?P<ups>(?:上\s?){2,8})(?:个|個)\s?月"), _back("month", "other")),
    (_p(r"上\s?(?:个|個|一个|一個)?\s?月"), _fixed("month-1")),
    (_p(rf"(?:(?P<y>[0-9]{{4}})\s?年\s?)?(?<![0-9上本这這当當])(?<![0-9上本这這当當那][个個])(?P<m>{_N})\s?(?:月份|月)"),
     _month),
    (_p(rf"{_ND}(?P<y>[0-9]{{4}})\s?[-/]\s?(?P<m>[0-9]{{1,2}}){_NZ}(?![-/.][0-9])"), _month),
    (_p(rf"{_A}(?:this|current)\s(?:calendar\s)?(?:month|mnth|mth|mo){_Z}"), _fixed("month-0")),
    (_p(rf"{_A}(?:last|lst|previous|prev|prior)\s(?:calendar\s)?(?:month|mnth|mth|mo){_Z}"), _fixed("month-1")),
    (_p(rf"{_A}(?:(?:in\s)?the\s)?past\smonth{_Z}"), _fixed("days-30")),
    (_p(rf"{_A}{_MONTH_EN}{_Z}(?:\s?,?\s?(?P<y>[0-9]{{4}}){_NZ})?"), _month_name),
    (_p(r"今\s?年|本\s?年"), _fixed("year-0")),
    (_p(r"去\s?年"), _fixed("year-1")),
    (_p(rf"{_A}this\syear{_Z}"), _fixed("year-0")),
    (_p(rf"{_A}last\syear{_Z}"), _fixed("year-1")),
    (_p(rf"{_ND}(?P<y>[0-9]{{4}})\s?年(?!\s?(?:第|[0-9]|[一二三四五六七八九十]{{1,2}}\s?月))"), _year),
    # quarters: no window spec has them, so the reply asks (never the whole message read without them)
    (_p(r"(?:本|这|這|当|當|上|上上|下|今年|去年|[0-9]{4}\s?年)?\s?(?:第\s?)?(?:一|个|個|[一二三四1-4])?\s?季度"),
     _quarter),
    (_p(rf"{_A}(?:this|last|previous|prior|current|next|the\spast)\squarter(?:'?s)?{_Z}"), _quarter),
    (_p(rf"{_ND}(?:[0-9]{{4}}\s?-?\s?q[1-4]|q[1-4]\s?,?\s?[0-9]{{4}}){_NZ}"), _quarter),
    # days
    (_p(rf"(?:(?P<y>[0-9]{{4}})\s?年\s?)?(?<![0-9])(?P<m>{_N})\s?月\s?(?P<d>{_N})\s?(?:日|号|號)?"),
     lambda m: _day(m, number(m["m"]))),
    (_p(rf"{_ND}(?P<y>[0-9]{{4}})[-/.](?P<m>[0-9]{{1,2}})[-/.](?P<d>[0-9]{{1,2}}){_NZ}"), _numeric_day(True)),
    (_p(r"(?<![0-9/.])(?P<m>[0-9]{1,2})/(?P<d>[0-9]{1,2})(?![0-9/])"), _numeric_day(False)),
    (_p(r"(?<![0-9/.\-])(?P<m>[0-9]{1,2})-(?P<d>[0-9]{1,2})(?![0-9\-])"), _numeric_day(False)),
    (_p(r"(?<![0-9.])(?P<m>[0-9]{1,2})\.(?P<d>[0-9]{1,2})\s?(?:-|~|～|到|至|–)\s?(?P<m2>[0-9]{1,2})\.(?P<d2>[0-9]{1,2})"
        r"(?![0-9.])"), _dotted_range),
    (_p(rf"{_A}{_MONTH_EN}\s?(?P<d>[0-9]{{1,2}})(?:st|nd|rd|th)?{_NZ}(?:\s?,?\s?(?P<y>[0-9]{{4}}){_NZ})?"),
     _named_day),
    (_p(rf"{_ND}(?P<d>[0-9]{{1,2}})(?:st|nd|rd|th)?\s(?:of\s)?{_MONTH_EN}{_Z}(?:\s?,?\s?(?P<y>[0-9]{{4}}){_NZ})?"),
     _named_day),
    (_p(r"今\s?天|今\s?日"), _fixed("day-0")),
    (_p(r"昨\s?天|昨\s?日"), _fixed("day-1")),
    (_p(r"前\s?天"), _fixed("day-2")),
    (_p(rf"{_A}today{_Z}"), _fixed("day-0")),
    (_p(rf"{_A}yesterday{_Z}"), _fixed("day-1")),
    # since a weekday
    (_p(rf"(?:从|自从|自)?\s?(?:(?:本|这|這)|(?P<ago>上(?:\s?上){{0,3}})\s?(?:一个|一個|个|個)?)?\s?{_WEEK_ZH}"
        rf"\s?(?P<wd>[{_WEEKDAY_ZH}])\s?(?:以来|起|开始|開始|到现在|至今)"), _weekday_since),
    (_p(rf"{_A}since\s(?:(?P<which>last|this)\s|last\sweek'?s\s)?{_WEEKDAY_EN}{_Z}"
        rf"(?:\s(?:of\s)?(?:last|the\sprevious)\sweek{_Z})?"), _weekday_since),
]


def _parts(text: str) -> list[_Part]:
    """Every window phrase of ``text``, overlaps resolved (longest first, then earliest)."""
    found: list[_Part] = []
    for pattern, build in _PATTERNS:
        for count, match in enumerate(pattern.finditer(text)):
            if count >= MAX_PHRASES:
                break
            part = build(match)
            if part is not None and part.end > part.start:
                found.append(part)
    found.sort(key=lambda p: (-(p.end - p.start), p.start))
    chosen: list[_Part] = []
    taken = bytearray(len(text) + 1)
    for part in found:
        if not any(taken[part.start:part.end]):
            chosen.append(part)
            taken[part.start:part.end] = b"\x01" * (part.end - part.start)
    return sorted(chosen, key=lambda p: p.start)


def _join(text: str, parts: list[_Part]) -> list[_Part]:
    """Join ``day CONNECTOR day`` (and ``day CONNECTOR 19日``) into ranges, and "since" around a day."""
    out: list[_Part] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.kind == "month" and part.problem is None:
            out.append(_since_month(part, text))
            i += 1
            continue
        commencing = _WEEK_FROM.search(text, max(0, part.start - 30), part.start) if part.kind == "day" else None
        if commencing is not None and part.problem is None:
            out.append(_week_from(part, commencing.start()))
            i += 1
            continue
        week_of = _WEEK_OF.search(text, max(0, part.start - 30), part.start) if part.kind == "day" else None
        week_after = _WEEK_AFTER.match(text, part.end) if part.kind == "day" else None
        if (week_of is not None or week_after is not None) and part.problem is None:
            # the week that holds the day (its year, when not said, is laid out against the clock)
            out.append(_Part("other", f"week@{part.spec}", week_of.start() if week_of else part.start,
                             week_after.end() if week_after else part.end))
            i += 1
            continue
        if part.kind in ("day", "week") and part.problem is None:
            gap_end = parts[i + 1].start if i + 1 < len(parts) else len(text)
            connector = _CONNECTOR.match(text, part.end)
            if connector and connector.end() <= gap_end:
                nxt = parts[i + 1] if i + 1 < len(parts) and parts[i + 1].start == connector.end() else None
                if nxt is not None and part.kind == "day" and nxt.spec == "day-0":  # 3月16号到今天: since that day
                    out.append(_Part("other", f"{part.spec}..", part.start, nxt.end))
                    i += 2
                    continue
                if nxt is not None and nxt.kind == part.kind == "day" and nxt.problem is None:
                    out.append(_range(part, nxt, text))
                    i += 2
                    continue
                if nxt is not None and nxt.kind == part.kind == "week":
                    out.append(_Part("other", None, part.start, nxt.end, "week_range"))
                    i += 2
                    continue
                end = _DAY_END.match(text, connector.end()) if part.kind == "day" else None
                if end and nxt is None and (part.day or 0) <= int(end["d"]) <= 31:
                    out.append(_range_to_day(part, int(end["d"]), end.end()))
                    i += 1
                    continue
            if part.kind == "day":
                out.append(_since(part, text))
                i += 1
                continue
        out.append(part)
        i += 1
    return out


def _range(first: _Part, last: _Part, text: str) -> _Part:
    a, b = first.spec or "", last.spec or ""
    if (first.year is None) != (last.year is None):  # one year given: it holds for both dates
        year = first.year or last.year
        a, b = (f"{year:04d}" + s[1:] if s.startswith("*") else s for s in (a, b))
    start = first.start
    before = _SINCE_BEFORE.search(text, 0, start)
    if before is not None and re.match(r"(?:from|between|从|自从|自)", before.group(0).strip(), re.IGNORECASE):
        start = before.start()
    return _Part("other", f"{a}..{b}", start, last.end)


def _range_to_day(first: _Part, day: int, end: int) -> _Part:
    assert first.month is not None
    try:
        date(first.year or 2000, first.month, day)
    except ValueError:
        return _Part("other", None, first.start, end, "no_such_date")
    year = f"{first.year:04d}" if first.year else "*"
    return _Part("other", f"{first.spec}..{year}-{first.month:02d}-{day:02d}", first.start, end)


def _since(part: _Part, text: str) -> _Part:
    before = _SINCE_BEFORE.search(text, max(0, part.start - 8), part.start)
    after = _SINCE_AFTER.match(text[part.end:part.end + 8])
    if before is None and after is None:
        return part
    start = before.start() if before is not None else part.start
    end = part.end + (after.end() if after is not None else 0)
    return _Part("other", f"{part.spec}..", start, end)


def _week_from(day: _Part, start: int) -> _Part:
    """``w/c Apr 13``: the seven days from that day (a yearless start counts in a common year, so
    ``w/c Feb 23`` ends on ``*-03-01``; the range runs into the next year after December 25)."""
    assert day.month is not None
    assert day.day is not None
    year = day.year or (2000 if (day.month, day.day) == (2, 29) else 2001)
    last = date(year, day.month, day.day) + timedelta(days=6)
    end = f"{last.year:04d}-{last.month:02d}-{last.day:02d}" if day.year else f"*-{last.month:02d}-{last.day:02d}"
    return _Part("other", f"{day.spec}..{end}", start, day.end)


def _since_month(part: _Part, text: str) -> _Part:
    """``since March`` ``3月以来`` ``从3月开始``: from the month's first day through today. "from"
    and ``从`` without ``开始`` / "onwards" do not make a "since" of a month (``highlights from March`` is March)."""
    after = _SINCE_AFTER.match(text[part.end:part.end + 8])
    before = (_SINCE_BEFORE if after is not None else _SINCE_MONTH_BEFORE).search(
        text, max(0, part.start - 8), part.start)
    if before is None and after is None:
        return part
    start = before.start() if before is not None else part.start
    end = part.end + (after.end() if after is not None else 0)
    return _Part("other", f"{part.spec}-01..", start, end)


def read_window(text: str) -> WindowReading | None:
    """The one time window ``text`` names, or ``None`` when it names none.

    Args:
        text: a normalised message (NFKC, spaces collapsed).

    Returns:
        A reading with a spec, or with a ``problem`` (an impossible week, month or
        date; several different windows; a range of weeks); ``None`` when no
        window words occur. Never raises.
    """
    return read_windows(text)[0]


def read_windows(text: str) -> tuple[WindowReading | None, list[tuple[int, int]]]:
    """:func:`read_window` and the spans of every window phrase (what the rest of the reading
    ignores), from one scan."""
    parts = _join(text, _parts(text))
    return _reading(text, parts), [(p.start, p.end) for p in parts]


_RESTATED = re.compile(r"就是|也就是|即|我是说|我说的是|不对|"
                       r"(?<![A-Za-z])(?:i\.e\.|i\s+mean|that\s+is|or\s+rather)(?![A-Za-z])", re.IGNORECASE)
"""Words that restate what came before (``这个月的就是四月份的``): of two windows, the later one is meant."""


_DEICTIC = re.compile(r"(?:这|這|那)\s?(?:段时间|段時間|阵子|陣子|几天|幾天|段|期间|期間|几周|幾週|周|週)")
"""Words that point back at a window just named (``3.16-3.22 这段时间``, ``W14 那阵子``): the same window, not
"lately"."""


def _reading(text: str, parts: list[_Part]) -> WindowReading | None:
    if not parts:
        return None
    parts = [p for p, nxt in zip(parts, [*parts[1:], None], strict=True)
             if nxt is None or not _RESTATED.search(text[p.end:nxt.start])]
    parts = [p for i, p in enumerate(parts) if i == 0 or p.spec != "recent" or parts[i - 1].spec is None
             or not _DEICTIC.fullmatch(text[p.start:p.end].strip()) or text[parts[i - 1].end:p.start].strip()]
    if len(parts) > 1 and len({p.spec for p in parts}) > 1:
        first, last = parts[0], parts[-1]
        return WindowReading(None, text[first.start:last.end], first.start, last.end, "several_windows")
    part = parts[0]
    return WindowReading(part.spec, text[part.start:part.end].strip(), part.start, part.end, part.problem)


