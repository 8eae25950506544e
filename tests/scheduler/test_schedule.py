"""Push times over a simulated year: the trigger's next fire times computed from given instants."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.push_spec import cron_fields
from bot.scheduler.schedule import cron_trigger, fires_between, latest_fire, week_before

YEAR_START = datetime(2026, 1, 1, tzinfo=UTC)
YEAR_END = datetime(2027, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("tz", ["Asia/Shanghai", "America/New_York", "Europe/Berlin"])
def test_once_a_week_on_the_right_day_and_hour_all_year(tz: str) -> None:
    trigger = cron_trigger("mon 10:00", tz)
    fires = list(fires_between(trigger, YEAR_START, YEAR_END))
    local = [f.astimezone(ZoneInfo(tz)) for f in fires]
    assert all(f.weekday() == 0 and (f.hour, f.minute, f.second) == (10, 0, 0) for f in local)
    weeks = [f.isocalendar()[:2] for f in local]
    assert len(weeks) == len(set(weeks)) == 52  # 2026 has 52 Mondays, one fire each
    gaps = {b - a for a, b in itertools.pairwise(fires)}
    expected = {timedelta(days=7)} if tz == "Asia/Shanghai" else {
        timedelta(days=7), timedelta(days=7, hours=-1), timedelta(days=7, hours=1)}
    assert gaps <= expected
    if tz != "Asia/Shanghai":  # the DST weeks are there: 10:00 local moved in UTC
        assert {f.astimezone(UTC).hour for f in fires} == ({14, 15} if tz == "America/New_York" else {8, 9})


@pytest.mark.parametrize("tz", ["Asia/Shanghai", "America/New_York"])
def test_next_fire_from_any_instant(tz: str) -> None:
    """From instants every 5 hours of the year, the next fire is the first Monday 10:00 local at
    or after it, less than a week (plus a DST hour) away."""
    trigger = cron_trigger("mon 10:00", tz)
    zone = ZoneInfo(tz)
    moment = YEAR_START
    while moment < YEAR_END:
        fire = trigger.get_next_fire_time(None, moment)
        local = fire.astimezone(zone)
        assert local.weekday() == 0
        assert (local.hour, local.minute) == (10, 0)
        assert timedelta(0) <= fire - moment <= timedelta(days=7, hours=1)
        assert latest_fire(trigger, fire, timedelta(days=7)) == fire
        moment += timedelta(hours=5)


def test_a_time_in_the_dst_gap_fires_once_that_week() -> None:
    trigger = cron_trigger("sun 02:30", "America/New_York")  # 2026-03-08 02:30 does not exist
    fires = list(fires_between(trigger, datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 16, tzinfo=UTC)))
    assert [f.date().isoformat() for f in fires] == ["2026-03-01", "2026-03-08", "2026-03-15"]
    assert fires[1].astimezone(UTC).hour == 7  # 03:00 EDT, the first instant after the gap


def test_the_push_reports_the_week_before() -> None:
    fire = cron_trigger("mon 10:00", "Asia/Shanghai").get_next_fire_time(None, datetime(2026, 4, 19, tzinfo=UTC))
    assert week_before(fire, "Asia/Shanghai").name == "2026-W16"


def test_push_forms() -> None:
    assert cron_fields("mon 10:00") == {"day_of_week": "mon", "hour": "10", "minute": "0"}
    assert cron_fields("Mon,Thu 9:30")["day_of_week"] == "mon,thu"
    assert cron_fields({"day_of_week": "fri", "hour": 17}) == {"day_of_week": "fri", "hour": "17", "minute": "0"}
    for bad in ("0 10:00", "monday", "mon 25:00", "mon 10:61"):
        with pytest.raises(ValueError, match="mon 10:00"):
            cron_fields(bad)
    with pytest.raises(ValueError, match="day name"):
        cron_fields({"day_of_week": 0, "hour": 10})
    with pytest.raises(ValueError, match="unknown cron field"):
        cron_fields({"day_of_week": "mon", "second": 5})
