"""Time windows: ISO weeks, date ranges, edges, offsets, DST and the CLI's rules."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest

from bot.digest.window import (
    contains,
    date_window,
    iso_weeks_in_year,
    last_day,
    parse_week,
    resolve_window,
    week_window,
)
from bot.errors import PrhubError, WindowError
from bot.models import Window

SH = "Asia/Shanghai"
NY = "America/New_York"
SANTIAGO = "America/Santiago"
HOUR = timedelta(hours=1)
MICRO = timedelta(microseconds=1)


def at(text: str) -> datetime:
    """An aware datetime from an ISO string with offset."""
    moment = datetime.fromisoformat(text)
    assert moment.tzinfo is not None
    return moment


def hours(window: Window) -> float:
    return (window.end.astimezone(UTC) - window.start.astimezone(UTC)) / HOUR


# --- week_window: bounds and edges ------------------------------------------------------------


def test_week_16_in_shanghai_has_the_documented_bounds() -> None:
    w = week_window(2026, 16, SH)
    assert w.name == "2026-W16"
    assert w.timezone == SH
    assert w.start == at("2026-04-13T00:00:00+08:00")
    assert w.end == at("2026-04-20T00:00:00+08:00")
    assert w.start.utcoffset() == timedelta(hours=8)
    assert last_day(w) == date(2026, 4, 19)
    assert hours(w) == 168


@pytest.mark.parametrize(
    ("moment", "inside"),
    [
        ("2026-04-13T00:00:00+08:00", True),  # Monday 00:00 local: first instant
        ("2026-04-12T23:59:59.999999+08:00", False),  # the microsecond before
        ("2026-04-19T23:59:59.999999+08:00", True),  # Sunday 23:59:59.999999 local
        ("2026-04-20T00:00:00+08:00", False),  # next Monday 00:00 local: next week
        # the same instants written with other offsets
        ("2026-04-12T16:00:00+00:00", True),
        ("2026-04-12T15:59:59.999999+00:00", False),
        ("2026-04-19T15:59:59.999999+00:00", True),
        ("2026-04-19T16:00:00+00:00", False),
        ("2026-04-19T08:59:59.999999-07:00", True),
        ("2026-04-19T09:00:00-07:00", False),
        ("2026-04-12T09:00:00-07:00", True),
        ("2026-04-12T08:59:59-07:00", False),
    ],
)
def test_week_edges_compare_instants_not_strings(moment: str, inside: bool) -> None:
    assert contains(week_window(2026, 16, SH), at(moment)) is inside


def test_next_week_starts_exactly_where_this_one_ends() -> None:
    w16, w17 = week_window(2026, 16, SH), week_window(2026, 17, SH)
    assert w16.end == w17.start
    monday = at("2026-04-20T00:00:00+08:00")
    assert not contains(w16, monday)
    assert contains(w17, monday)


@pytest.mark.parametrize(
    "tz", [SH, NY, "Europe/London", SANTIAGO, "Asia/Beirut", "UTC", "Australia/Lord_Howe"]
)
def test_consecutive_weeks_tile_time_without_gaps_or_overlaps(tz: str) -> None:
    weeks = [week_window(2026, n, tz) for n in range(1, 54)] + [week_window(2027, 1, tz)]
    for before, after in pairwise(weeks):
        assert before.end == after.start
    for w in weeks:
        assert 166 <= hours(w) <= 170
        assert w.start.astimezone(ZoneInfo(tz)).weekday() == 0


def test_moment_in_a_named_zone_is_compared_as_an_instant() -> None:
    w = week_window(2026, 16, SH)
    assert contains(w, datetime(2026, 4, 19, 11, 59, tzinfo=ZoneInfo(NY)))  # = Sun 23:59 in Shanghai
    assert not contains(w, datetime(2026, 4, 19, 12, 0, tzinfo=ZoneInfo(NY)))  # = Mon 00:00 in Shanghai


def test_contains_rejects_naive_datetimes() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        contains(week_window(2026, 16, SH), datetime(2026, 4, 15, 12, 0))  # noqa: DTZ001


# --- DST ------------------------------------------------------------------------------------


def test_shanghai_and_new_york_across_the_us_dst_change() -> None:
    # US clocks spring forward on Sunday 2026-03-08 02:00; Shanghai has no DST.
    sh, ny = week_window(2026, 10, SH), week_window(2026, 10, NY)
    assert (sh.start, sh.end) == (at("2026-03-02T00:00:00+08:00"), at("2026-03-09T00:00:00+08:00"))
    assert (ny.start, ny.end) == (at("2026-03-02T00:00:00-05:00"), at("2026-03-09T00:00:00-04:00"))
    assert hours(sh) == 168
    assert hours(ny) == 167
    assert last_day(ny) == date(2026, 3, 8)

    # Sunday evening in New York is already Monday in Shanghai.
    sunday_night_ny = at("2026-03-08T23:30:00-04:00")
    assert contains(ny, sunday_night_ny)
    assert not contains(sh, sunday_night_ny)
    assert contains(week_window(2026, 11, SH), sunday_night_ny)

    # New York's Monday midnight (EDT) is 04:00 UTC.
    assert contains(ny, at("2026-03-09T03:59:59.999999+00:00"))
    assert not contains(ny, at("2026-03-09T04:00:00+00:00"))
    assert week_window(2026, 11, NY).start == at("2026-03-09T04:00:00+00:00")


def test_europe_london_weeks_around_both_dst_changes() -> None:
    spring = week_window(2026, 13, "Europe/London")  # clocks go forward Sunday 2026-03-29 01:00 UTC
    assert spring.start == at("2026-03-23T00:00:00+00:00")
    assert spring.end == at("2026-03-30T00:00:00+01:00")
    assert spring.end.utcoffset() == HOUR
    assert hours(spring) == 167
    assert contains(spring, at("2026-03-29T22:59:59+00:00"))  # Sunday 23:59:59 BST
    assert not contains(spring, at("2026-03-29T23:00:00+00:00"))

    autumn = week_window(2026, 43, "Europe/London")  # clocks go back Sunday 2026-10-25 01:00 UTC
    assert autumn.start == at("2026-10-19T00:00:00+01:00")
    assert autumn.end == at("2026-10-26T00:00:00+00:00")
    assert hours(autumn) == 169


def test_santiago_day_without_midnight_starts_at_the_transition() -> None:
    # Chile springs forward at midnight: Sunday 2026-09-06 00:00 -04:00 becomes 01:00 -03:00,
    # so local midnight does not exist that day and the day starts at 01:00.
    sunday = date_window(date(2026, 9, 6), date(2026, 9, 6), SANTIAGO)
    assert sunday.start == at("2026-09-06T01:00:00-03:00")
    assert sunday.start == at("2026-09-06T04:00:00+00:00")
    assert sunday.start.utcoffset() == timedelta(hours=-3)
    assert hours(sunday) == 23

    saturday = date_window(date(2026, 9, 5), date(2026, 9, 5), SANTIAGO)
    assert saturday.end == sunday.start
    assert contains(saturday, at("2026-09-05T23:59:59.999999-04:00"))
    assert not contains(saturday, at("2026-09-06T01:00:00-03:00"))
    assert contains(sunday, at("2026-09-06T01:00:00-03:00"))

    # The ISO week holding that Sunday is an hour short and still ends on Monday 00:00.
    week = week_window(2026, 36, SANTIAGO)
    assert week.end == at("2026-09-07T00:00:00-03:00")
    assert hours(week) == 167
    assert last_day(week) == date(2026, 9, 6)


def test_santiago_repeated_hour_before_midnight_counts_once() -> None:
    # Chile falls back at midnight: Sunday 2026-04-05 00:00 -03:00 becomes Saturday 23:00 -04:00,
    # so Saturday's 23:00-24:00 happens twice; both belong to Saturday.
    saturday = date_window(date(2026, 4, 4), date(2026, 4, 4), SANTIAGO)
    assert hours(saturday) == 25
    first = datetime(2026, 4, 4, 23, 30, tzinfo=ZoneInfo(SANTIAGO), fold=0)
    second = datetime(2026, 4, 4, 23, 30, tzinfo=ZoneInfo(SANTIAGO), fold=1)
    assert second.astimezone(UTC) - first.astimezone(UTC) == HOUR
    assert contains(saturday, first)
    assert contains(saturday, second)
    sunday = date_window(date(2026, 4, 5), date(2026, 4, 5), SANTIAGO)
    assert sunday.start == saturday.end == at("2026-04-05T00:00:00-04:00")
    assert not contains(sunday, second)


def test_beirut_midnight_gap() -> None:
    day = date_window(date(2026, 3, 29), date(2026, 3, 29), "Asia/Beirut")
    assert day.start == at("2026-03-29T01:00:00+03:00")
    assert hours(day) == 23


def test_a_skipped_calendar_day_gives_an_empty_window() -> None:
    # Samoa skipped Friday 2011-12-30 entirely when it moved across the date line.
    skipped = date_window(date(2011, 12, 30), date(2011, 12, 30), "Pacific/Apia")
    assert skipped.start == skipped.end == at("2011-12-31T00:00:00+14:00")
    assert hours(week_window(2011, 52, "Pacific/Apia")) == 6 * 24


# --- week 53 and malformed weeks --------------------------------------------------------------


def test_week_53_exists_only_in_long_iso_years() -> None:
    assert iso_weeks_in_year(2026) == 53  # 2026 starts on a Thursday
    assert iso_weeks_in_year(2025) == 52
    assert iso_weeks_in_year(2020) == 53
    w53 = week_window(2026, 53, SH)
    assert w53.name == "2026-W53"
    assert w53.start == at("2026-12-28T00:00:00+08:00")
    assert w53.end == at("2027-01-04T00:00:00+08:00") == week_window(2027, 1, SH).start
    assert last_day(w53) == date(2027, 1, 3)
    assert parse_week("2020-W53", tz=SH, now=datetime.now(UTC)).start == at("2020-12-28T00:00:00+08:00")
    with pytest.raises(WindowError, match="2025 has weeks W01 to W52"):
        week_window(2025, 53, SH)
    with pytest.raises(WindowError, match="2025-W53"):
        parse_week("2025-W53", tz=SH, now=datetime.now(UTC))


@pytest.mark.parametrize(
    "spec", ["2026-W16", "2026-w16", "2026W16", "2026w16", " 2026-W16\n", "２０２６－Ｗ１６", "２０２６ｗ16"]
)
def test_accepted_week_spellings(spec: str) -> None:
    assert parse_week(spec, tz=SH, now=datetime.now(UTC)) == week_window(2026, 16, SH)


@pytest.mark.parametrize(
    "spec",
    [
        "2026-16",
        "W16",
        "",
        "   ",
        "2026-W5",
        "26-W16",
        "2026-W016",
        "2026-W16-1",
        "next",
        "2026/W16",
        "2026-W1六",
    ],
)
def test_malformed_week_names_the_expected_form(spec: str) -> None:
    with pytest.raises(WindowError) as info:
        parse_week(spec, tz=SH, now=datetime.now(UTC))
    message = str(info.value)
    assert "YYYY-Www" in message
    assert "'this'" in message
    assert "'last'" in message
    assert "\n" not in message


@pytest.mark.parametrize(("spec", "hint"), [("2026-W54", "W53"), ("2026-W00", "W01"), ("2025-W53", "W52")])
def test_week_that_does_not_exist(spec: str, hint: str) -> None:
    with pytest.raises(WindowError, match=hint) as info:
        parse_week(spec, tz=SH, now=datetime.now(UTC))
    assert "does not exist" in str(info.value)
    assert "\n" not in str(info.value)


def test_window_error_is_a_prhub_error_and_a_value_error() -> None:
    with pytest.raises(WindowError) as info:
        parse_week("W16", tz=SH, now=datetime.now(UTC))
    assert isinstance(info.value, PrhubError)
    assert isinstance(info.value, ValueError)


# --- this / last ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("now", "tz", "this", "last"),
    [
        ("2026-04-20T00:00:00+08:00", SH, "2026-W17", "2026-W16"),  # Monday 00:00 local
        ("2026-04-19T23:59:00+08:00", SH, "2026-W16", "2026-W15"),  # Sunday 23:59 local
        ("2026-04-19T23:59:59.999999+08:00", SH, "2026-W16", "2026-W15"),
        # `now` in another offset is converted to the zone first
        ("2026-04-19T16:00:00+00:00", SH, "2026-W17", "2026-W16"),  # Monday 00:00 in Shanghai
        ("2026-04-19T16:00:00+00:00", NY, "2026-W16", "2026-W15"),  # Sunday 12:00 in New York
        ("2026-04-20T00:00:00-04:00", NY, "2026-W17", "2026-W16"),  # Monday 00:00 in New York
        ("2026-04-19T23:59:00-04:00", NY, "2026-W16", "2026-W15"),  # Sunday 23:59 in New York
        # ISO years differ from calendar years around New Year
        ("2027-01-02T12:00:00+08:00", SH, "2026-W53", "2026-W52"),
        ("2027-01-04T00:00:00+08:00", SH, "2027-W01", "2026-W53"),
        ("2026-01-01T00:00:00+08:00", SH, "2026-W01", "2025-W52"),
    ],
)
def test_this_and_last(now: str, tz: str, this: str, last: str) -> None:
    this_w = parse_week("this", tz=tz, now=at(now))
    last_w = parse_week("last", tz=tz, now=at(now))
    assert this_w.name == this
    assert last_w.name == last
    assert last_w.end == this_w.start
    assert contains(this_w, at(now))
    assert parse_week(" THIS ", tz=tz, now=at(now)) == this_w
    assert parse_week("Last", tz=tz, now=at(now)) == last_w


def test_now_must_be_aware() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        parse_week("this", tz=SH, now=datetime(2026, 4, 20))  # noqa: DTZ001


# --- date windows ---------------------------------------------------------------------------


def test_date_window_is_inclusive_of_both_dates() -> None:
    w = date_window(date(2026, 4, 13), date(2026, 4, 19), SH)
    assert w.name == "2026-04-13..2026-04-19"
    assert (w.start, w.end) == (week_window(2026, 16, SH).start, week_window(2026, 16, SH).end)
    assert last_day(w) == date(2026, 4, 19)
    assert contains(w, at("2026-04-19T23:59:59.999999+08:00"))
    assert not contains(w, at("2026-04-20T00:00:00+08:00"))


def test_single_day_window() -> None:
    w = date_window(date(2026, 4, 13), date(2026, 4, 13), NY)
    assert w.name == "2026-04-13..2026-04-13"
    assert (w.start, w.end) == (at("2026-04-13T00:00:00-04:00"), at("2026-04-14T00:00:00-04:00"))
    assert last_day(w) == date(2026, 4, 13)


def test_since_after_until_is_an_error() -> None:
    with pytest.raises(WindowError, match=r"2026-04-20 is after --until 2026-04-19"):
        date_window(date(2026, 4, 20), date(2026, 4, 19), SH)


def test_dates_at_the_end_of_the_calendar_are_a_window_error() -> None:
    with pytest.raises(WindowError, match="supported date range"):
        date_window(date(9999, 12, 30), date.max, "UTC")


# --- resolve_window: the CLI's rules -------------------------------------------------------------

NOW = at("2026-04-22T10:00:00+08:00")  # Wednesday of 2026-W17 in Shanghai


def test_default_is_the_last_complete_week() -> None:
    w = resolve_window(week=None, since=None, until=None, tz=SH, now=NOW)
    assert w == week_window(2026, 16, SH)


def test_week_option() -> None:
    assert resolve_window(week="2026-W10", since=None, until=None, tz=SH, now=NOW).name == "2026-W10"
    assert resolve_window(week="this", since=None, until=None, tz=SH, now=NOW).name == "2026-W17"


def test_since_and_until() -> None:
    w = resolve_window(week=None, since=date(2026, 4, 1), until=date(2026, 4, 10), tz=SH, now=NOW)
    assert w == date_window(date(2026, 4, 1), date(2026, 4, 10), SH)


def test_since_alone_runs_until_today() -> None:
    w = resolve_window(week=None, since=date(2026, 4, 20), until=None, tz=SH, now=NOW)
    assert w.name == "2026-04-20..2026-04-22"
    # "today" is the local date of `now` in the window's zone
    late_utc = at("2026-04-22T17:00:00+00:00")  # already Thursday in Shanghai
    assert resolve_window(week=None, since=date(2026, 4, 20), until=None, tz=SH, now=late_utc).name == (
        "2026-04-20..2026-04-23"
    )


def test_since_in_the_future_is_an_error() -> None:
    with pytest.raises(WindowError, match="future"):
        resolve_window(week=None, since=date(2026, 5, 1), until=None, tz=SH, now=NOW)


def test_until_alone_is_the_seven_days_ending_that_day() -> None:
    w = resolve_window(week=None, since=None, until=date(2026, 4, 19), tz=SH, now=NOW)
    assert w.name == "2026-04-13..2026-04-19"
    assert hours(w) == 7 * 24


@pytest.mark.parametrize(
    ("since", "until"),
    [(date(2026, 4, 13), None), (None, date(2026, 4, 19)), (date(2026, 4, 13), date(2026, 4, 19))],
)
def test_week_and_dates_together_is_an_error(since: date | None, until: date | None) -> None:
    with pytest.raises(WindowError, match="not both"):
        resolve_window(week="2026-W16", since=since, until=until, tz=SH, now=NOW)


# --- zones and the model ----------------------------------------------------------------------


@pytest.mark.parametrize("tz", ["Mars/Olympus_Mons", "", "Asia", "../etc/passwd", "asia/shanghai", "UTC+8"])
def test_unknown_time_zone(tz: str) -> None:
    with pytest.raises(WindowError, match="time zone") as info:
        week_window(2026, 16, tz)
    assert repr(tz) in str(info.value)
    assert "IANA" in str(info.value)
    with pytest.raises(WindowError, match="time zone"):
        date_window(date(2026, 4, 13), date(2026, 4, 19), tz)
    with pytest.raises(WindowError, match="time zone"):
        parse_week("this", tz=tz, now=NOW)


def test_last_day_with_an_unknown_zone() -> None:
    w = Window(
        start=at("2026-04-13T00:00:00+08:00"),
        end=at("2026-04-20T00:00:00+08:00"),
        timezone="Nowhere",
        name="x",
    )
    with pytest.raises(WindowError, match="'Nowhere'"):
        last_day(w)


def test_window_survives_a_json_round_trip() -> None:
    for w in (week_window(2026, 10, NY), date_window(date(2026, 9, 6), date(2026, 9, 6), SANTIAGO)):
        again = Window.model_validate_json(w.model_dump_json())
        assert again == w
        assert again.start.utcoffset() == w.start.utcoffset()
        assert again.end.utcoffset() == w.end.utcoffset()


def test_bounds_carry_the_local_offset_of_the_instant() -> None:
    w = week_window(2026, 10, NY)
    assert w.start.utcoffset() == timedelta(hours=-5)
    assert w.end.utcoffset() == timedelta(hours=-4)
    assert isinstance(w.start.tzinfo, timezone)
    assert w.end - w.start == timedelta(days=7) - HOUR  # true elapsed time
