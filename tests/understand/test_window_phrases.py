"""Window phrases that were read as another window or dropped: "since" a weekday of a past week,
"since last <weekday>", "since" a month, "from" + month, ``wk``, fortnights, quarters, "week
commencing". Windows are the resolved names at :data:`NOW` (Wednesday 2026-04-22, Asia/Shanghai),
so each row says which days a phrase means; the rows that must stay as they were are here too.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bot.digest.window import window_from_spec
from bot.errors import WindowError
from bot.understand import ClarifyIntent, DigestIntent, HelpIntent, MergedIntent, understand
from bot.understand.windows import read_window

TZ = "Asia/Shanghai"
NOW = datetime(2026, 4, 22, 10, 0, tzinfo=ZoneInfo(TZ))
THU = datetime(2026, 4, 23, 10, 0, tzinfo=ZoneInfo(TZ))


def _name(spec: str, now: datetime = NOW) -> str:
    return window_from_spec(spec, tz=TZ, now=now).name


READ: list[tuple[str, str]] = [
    # a weekday of a past week, in Chinese: the weekday of that week (each 上 one week back)
    ("上周三以来的动态", "2026-04-15..2026-04-22"),
    ("上周一以来的周报", "2026-04-13..2026-04-22"),
    ("从上周三开始合入的PR", "2026-04-15..2026-04-22"),
    ("上个星期五以来", "2026-04-17..2026-04-22"),
    ("上礼拜二开始的PR", "2026-04-14..2026-04-22"),
    ("自上周日至今", "2026-04-19..2026-04-22"),
    ("上上周四以来", "2026-04-09..2026-04-22"),
    ("上 周 一 以来", "2026-04-13..2026-04-22"),
    # English: "since last X" is the latest X before today
    ("since last wednesday", "2026-04-15..2026-04-22"),
    ("since last monday", "2026-04-20..2026-04-22"),
    ("what merged since last Fri", "2026-04-17..2026-04-22"),
    ("since wednesday last week", "2026-04-15..2026-04-22"),
    ("since monday of last week", "2026-04-13..2026-04-22"),
    ("since last week's friday", "2026-04-17..2026-04-22"),
    # unchanged: the latest weekday, today included
    ("周三以来", "2026-04-22..2026-04-22"),
    ("周一以来的进展", "2026-04-20..2026-04-22"),
    ("本周一以来", "2026-04-20..2026-04-22"),
    ("since monday", "2026-04-20..2026-04-22"),
    ("since this wednesday", "2026-04-22..2026-04-22"),
    ("上周", "2026-W16"),
    ("last week", "2026-W16"),
    ("since last week", "2026-W16"),
    # months: "from" + a month name is the month; "since" a month runs from its first day
    ("highlights from march", "2026-03-01..2026-03-31"),
    ("PRs from feb", "2026-02-01..2026-02-28"),
    ("from march 3 to march 9", "2026-03-03..2026-03-09"),
    ("from may 3 to may 9", "2025-05-03..2025-05-09"),
    ("from april 13 onwards", "2026-04-13..2026-04-22"),
    ("since march", "2026-03-01..2026-04-22"),
    ("since April", "2026-04-01..2026-04-22"),
    ("from march onwards", "2026-03-01..2026-04-22"),
    ("3月以来的PR", "2026-03-01..2026-04-22"),
    ("从3月开始合入的PR", "2026-03-01..2026-04-22"),
    ("自2026年2月以来", "2026-02-01..2026-04-22"),
    ("since 2026-03", "2026-03-01..2026-04-22"),
    ("3月的月报", "2026-03-01..2026-03-31"),
    ("从3月", "2026-03-01..2026-03-31"),
    ("weekly digest for april", "2026-04-01..2026-04-30"),
    # wk / wks read as week / weeks
    ("this wk digest", "2026-W17"),
    ("last wk's digest", "2026-W16"),
    ("2 wks ago", "2026-W15"),
    ("past 3 wks", "2026-04-02..2026-04-22"),
    ("previous 2 wks", "2026-04-06..2026-04-19"),
    ("the past wk", "2026-04-16..2026-04-22"),
    ("digest for wk 15", "2026-W15"),
    # fortnights and half months
    ("digest for the past fortnight", "2026-04-09..2026-04-22"),
    ("last fortnight", "2026-04-09..2026-04-22"),
    ("in the last fortnight", "2026-04-09..2026-04-22"),
    ("a fortnight ago", "2026-W15"),
    ("最近半个月的PR", "2026-04-08..2026-04-22"),
    ("summary of last 2 weeks", "2026-04-09..2026-04-22"),
    # week commencing: the seven days from the date
    ("digest w/c apr 13", "2026-04-13..2026-04-19"),
    ("w/b 13 april", "2026-04-13..2026-04-19"),
    ("week commencing 6 april", "2026-04-06..2026-04-12"),
    ("the week starting 2026-04-13", "2026-04-13..2026-04-19"),
    ("week beginning on 4/13", "2026-04-13..2026-04-19"),
    ("w/c dec 29", "2025-12-29..2026-01-04"),
    ("w/c 2024-02-26", "2024-02-26..2024-03-03"),
    ("apr 13", "2026-04-13..2026-04-13"),
    ("since apr 13", "2026-04-13..2026-04-22"),
    ("4/13-4/19", "2026-04-13..2026-04-19"),
    # the K-th week of a month: the first is the ISO week that holds the month's first day
    ("4月第二周的周报", "2026-W15"),
    ("4月的第1周", "2026-W14"),
    ("2025年3月第三个星期", "2025-W11"),
    ("digest for the second week of april", "2026-W15"),
    ("3rd week of march", "2026-W11"),  # March 1 is a Sunday: its week (W09) is the first
    ("5月第一周", "2025-W18"),  # May 2026 has not begun: the latest May
    # a window named, then pointed back at: one window
    ("3.16-3.22 这段时间的周报", "2026-03-16..2026-03-22"),
    ("这段时间的周报", "2026-03-30..2026-04-26"),
]


@pytest.mark.parametrize(("text", "window"), READ, ids=[t for t, _ in READ])
def test_the_phrase_names_these_days(text: str, window: str) -> None:
    reading = read_window(text)
    assert reading is not None, f"{text!r}: no window read"
    assert reading.problem is None, f"{text!r}: {reading}"
    assert reading.spec is not None
    assert _name(reading.spec) == window, f"{text!r}: {reading.spec!r}"


@pytest.mark.parametrize(("text", "kind", "said"), [
    ("上周三以来的动态", DigestIntent, "上周三以来"),
    ("从上周三开始合入的PR", MergedIntent, "从上周三开始"),
    ("since last wednesday", DigestIntent, "since last wednesday"),
    ("highlights from march", DigestIntent, "march"),
    ("this wk digest", DigestIntent, "this wk"),
    ("digest for the past fortnight", DigestIntent, "the past fortnight"),
    ("digest w/c apr 13", DigestIntent, "w/c apr 13"),
])
def test_the_intent_carries_the_window_and_its_words(text: str, kind: type, said: str) -> None:
    intent = understand(text)
    assert type(intent) is kind, f"{text!r} -> {intent}"
    assert getattr(intent, "said", None) == said


@pytest.mark.parametrize("text", ["本季度总结", "上个季度的周报", "第一季度合并了什么", "this quarter",
                                  "digest for last quarter", "2026Q1 digest", "Q1 2026 digest"])
def test_a_quarter_is_asked_about_not_dropped(text: str) -> None:
    intent = understand(text)
    assert isinstance(intent, ClarifyIntent), f"{text!r} -> {intent}"
    assert intent.problem == "week_range"


@pytest.mark.parametrize("text", ["I heard from may", "let's march on", "四季", "Q1 question", "季度目标定了吗",
                                  "我上周请假了", "wk", "w/c"])
def test_words_that_are_no_window_stay_so(text: str) -> None:
    intent = understand(text)
    assert isinstance(intent, HelpIntent), f"{text!r} -> {intent}"


@pytest.mark.parametrize(("spec", "window"), [
    ("week@*-04-08", "2026-W15"), ("week@*-04-22", "2026-W17"), ("week@2024-02-29", "2024-W09"),
    ("week@*-05-01", "2025-W18"),
])
def test_the_week_holding_a_day(spec: str, window: str) -> None:
    assert _name(spec) == window


@pytest.mark.parametrize("spec", ["week@*-02-30", "week@2025-02-29", "week@*-13-01", "week@04-08"])
def test_the_week_holding_no_day_is_refused(spec: str) -> None:
    with pytest.raises(WindowError):
        _name(spec)


@pytest.mark.parametrize("text", ["4月第6周", "4月第0周"])
def test_a_week_of_a_month_that_does_not_exist_is_asked(text: str) -> None:
    intent = understand(text)
    assert isinstance(intent, ClarifyIntent), f"{text!r} -> {intent}"


def test_from_two_months_asks_rather_than_reading_one() -> None:
    intent = understand("digest from march to april")
    assert isinstance(intent, ClarifyIntent)
    assert intent.problem == "several_windows"


@pytest.mark.parametrize(("spec", "now", "window"), [
    ("last-wed..", NOW, "2026-04-15..2026-04-22"),  # today is a Wednesday: the one before
    ("last-wed..", THU, "2026-04-22..2026-04-23"),
    ("last-mon..", NOW, "2026-04-20..2026-04-22"),
    ("LAST-THU..", NOW, "2026-04-16..2026-04-22"),
    ("wed..", NOW, "2026-04-22..2026-04-22"),
    ("wed-1..", NOW, "2026-04-15..2026-04-22"),
    ("wed-1..", THU, "2026-04-15..2026-04-23"),
    ("mon-1..", NOW, "2026-04-13..2026-04-22"),
    ("sun-1..", NOW, "2026-04-19..2026-04-22"),
    ("fri-2..", NOW, "2026-04-10..2026-04-22"),
])
def test_weekday_since_specs(spec: str, now: datetime, window: str) -> None:
    assert _name(spec, now) == window


@pytest.mark.parametrize("spec", ["wed-0..", "wed-521..", "last-wed-1..", "last-wed", "wed-1", "lastwed.."])
def test_malformed_weekday_since_specs_are_refused(spec: str) -> None:
    with pytest.raises(WindowError):
        window_from_spec(spec, tz=TZ, now=NOW)
