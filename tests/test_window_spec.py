"""Window specs (what a chat message asked for) laid out against a clock: every form, the year a
yearless spec takes, names that read back, and the errors."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from bot.digest.window import (
    date_window,
    in_progress,
    latest_week,
    month_window,
    parse_week,
    spec_is_relative,
    week_window,
    window_from_spec,
)
from bot.errors import WindowError

SH = "Asia/Shanghai"
WED = datetime(2026, 4, 22, 10, 0, tzinfo=ZoneInfo(SH))  # Wednesday of 2026-W17


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("this", "2026-W17"), ("last", "2026-W16"), ("2026-W16", "2026-W16"), ("2026w16", "2026-W16"),
        ("week-0", "2026-W17"), ("week-1", "2026-W16"), ("week-2", "2026-W15"), ("week-17", "2025-W52"),
        ("weeks-1", "2026-04-13..2026-04-19"), ("weeks-2", "2026-04-06..2026-04-19"),
        ("*-W16", "2026-W16"), ("*-W17", "2026-W17"), ("*-W18", "2025-W18"), ("*-W53", "2020-W53"),
        ("days-1", "2026-04-22..2026-04-22"), ("days-7", "2026-04-16..2026-04-22"),
        ("day-0", "2026-04-22..2026-04-22"), ("day-1", "2026-04-21..2026-04-21"),
        ("month-0", "2026-04-01..2026-04-30"), ("month-1", "2026-03-01..2026-03-31"),
        ("month-4", "2025-12-01..2025-12-31"), ("2026-02", "2026-02-01..2026-02-28"),
        ("2024-02", "2024-02-01..2024-02-29"), ("*-04", "2026-04-01..2026-04-30"), ("*-05", "2025-05-01..2025-05-31"),
        ("year-0", "2026-01-01..2026-12-31"), ("2025", "2025-01-01..2025-12-31"),
        ("2026-04-13", "2026-04-13..2026-04-13"), ("*-04-22", "2026-04-22..2026-04-22"),
        ("*-04-23", "2025-04-23..2025-04-23"), ("*-02-29", "2024-02-29..2024-02-29"),
        ("2026-04-13..2026-04-19", "2026-04-13..2026-04-19"), ("*-04-13..*-04-19", "2026-04-13..2026-04-19"),
        ("*-12-28..*-01-03", "2025-12-28..2026-01-03"), ("2026-04-13..", "2026-04-13..2026-04-22"),
        ("*-04-13..", "2026-04-13..2026-04-22"), ("mon..", "2026-04-20..2026-04-22"),
        ("wed..", "2026-04-22..2026-04-22"), ("thu..", "2026-04-16..2026-04-22"),
    ],
)
def test_every_spec_form(spec: str, name: str) -> None:
    window = window_from_spec(spec, tz=SH, now=WED)
    assert window.name == name
    assert window.timezone == SH
    assert window_from_spec(window.name, tz=SH, now=WED) == window  # the name reads back


def test_weeks_and_months_are_the_windows_the_cli_builds() -> None:
    assert window_from_spec("last", tz=SH, now=WED) == week_window(2026, 16, SH)
    assert window_from_spec("month-0", tz=SH, now=WED) == date_window(date(2026, 4, 1), date(2026, 4, 30), SH)
    assert month_window(2026, 12, SH) == date_window(date(2026, 12, 1), date(2026, 12, 31), SH)


def test_the_clock_is_read_in_the_window_s_zone() -> None:
    # Tuesday 2026-04-21 20:00 UTC is already Wednesday in Shanghai, still Tuesday in New York.
    moment = datetime(2026, 4, 21, 20, 0, tzinfo=UTC)
    assert window_from_spec("day-0", tz=SH, now=moment).name == "2026-04-22..2026-04-22"
    assert window_from_spec("day-0", tz="America/New_York", now=moment).name == "2026-04-21..2026-04-21"


def test_a_month_across_a_dst_change_has_its_true_length() -> None:
    march = month_window(2026, 3, "America/New_York")
    assert (march.end - march.start).total_seconds() == 31 * 86400 - 3600


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("week-9999", "too far back"), ("week-600", "too far back"), ("days-0", "1 to 3660 days"),
        ("days-4000", "1 to 3660 days"), ("2026-13", "month 13 does not exist"), ("*-00", "month 0"),
        ("2025-W53", "2025 has weeks W01 to W52"), ("*-W54", "W54 does not exist"), ("*-04-31", "does not exist"),
        ("2026-02-29", "does not exist"), ("2026-04-19..2026-04-13", "ends before it starts"),
        ("2026-05-01..", "starts after today"), ("*-04-13..2026-04-19", "both dates with a year or both without"),
        ("fortnight", "malformed window"), ("", "malformed window"), ("2026-04-01..2037-04-01", "1 to 3660 days"),
    ],
)
def test_errors_name_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(WindowError, match=message):
        window_from_spec(spec, tz=SH, now=WED)


def test_unknown_zone_and_naive_clock() -> None:
    with pytest.raises(WindowError, match="time zone"):
        window_from_spec("last", tz="Mars/Olympus", now=WED)
    with pytest.raises(ValueError, match="timezone-aware"):
        window_from_spec("last", tz=SH, now=datetime(2026, 4, 22))  # noqa: DTZ001


@pytest.mark.parametrize(
    ("spec", "relative"),
    [("this", True), ("last", True), ("week-2", True), ("*-W16", True), ("month-0", True), ("days-7", True),
     ("*-04-13..*-04-19", True), ("2026-04-13..", True), ("mon..", True), ("2026-W16", False), ("2026-04", False),
     ("2026-04-13..2026-04-19", False), ("2026-04-13", False), ("2026", False)],
)
def test_which_specs_depend_on_the_day_they_are_asked(spec: str, relative: bool) -> None:
    assert spec_is_relative(spec) is relative


def test_in_progress_is_so_far() -> None:
    assert in_progress(window_from_spec("this", tz=SH, now=WED), WED)
    assert not in_progress(window_from_spec("last", tz=SH, now=WED), WED)
    assert in_progress(window_from_spec("month-0", tz=SH, now=WED), WED)


def test_the_latest_week_with_a_merge() -> None:
    merges = [datetime(2026, 8, 22, 17, 24, tzinfo=ZoneInfo(SH)), datetime(2026, 8, 23, 16, 30, tzinfo=UTC),
              datetime(2026, 3, 1, tzinfo=UTC)]
    found = latest_week(merges, SH)
    assert found is not None
    week, moment = found
    assert week.name == "2026-W35"  # 16:30 UTC on Sunday 08-23 is Monday 00:30 in Shanghai
    assert moment == merges[1]
    assert latest_week([], SH) is None


def test_parse_week_reads_the_week_forms_of_the_specs() -> None:
    # The chat core of today lays out DigestIntent.week with parse_week: 上上周 and 第16周 work there too.
    assert parse_week("week-2", tz=SH, now=WED).name == "2026-W15"
    assert parse_week("*-W16", tz=SH, now=WED).name == "2026-W16"
    with pytest.raises(WindowError, match="YYYY-Www"):
        parse_week("month-0", tz=SH, now=WED)  # a month is not a week
