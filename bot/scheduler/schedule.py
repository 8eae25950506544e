"""Push times as APScheduler 3.x cron triggers, and the fire times between two instants.

A channel's ``push`` is written in the TOML file either as a short string or as cron fields::

    push = "mon 10:00"                      # every Monday at 10:00 in the channel's zone
    push = "mon,thu 09:30"                  # two days
    push = { day_of_week = "mon", hour = 10, minute = 0 }

Days are names (``mon`` … ``sun``, lists ``mon,thu`` and ranges ``mon-fri``): APScheduler
3.x numbers days from 0 = Monday, unlike crontab's 0 = Sunday, so numbers are refused
rather than guessed. The zone is an explicit IANA name (the channel's ``timezone``);
a wall-clock time that a DST change skips fires at the first instant after the gap and
one that occurs twice fires once (APScheduler's rules), so every week has exactly one fire.

:mod:`bot.config` validates ``push`` with :func:`cron_fields`, so this module imports
nothing of the bot's but the window helpers (which do not import the config).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta

from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]

from bot.digest.window import parse_week, zone
from bot.models import Window

__all__ = ["DAY_NAMES", "PushSpec", "cron_fields", "cron_trigger", "fires_between", "latest_fire", "week_before"]

PushSpec = str | dict[str, str | int]
"""``"mon 10:00"`` or cron fields (``day_of_week``, ``hour``, ``minute``)."""

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_FIELDS = ("day_of_week", "hour", "minute")
_SHORT = re.compile(r"^\s*(?P<days>[a-z,\-]+)\s+(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*$", re.IGNORECASE)
_DAYS = re.compile(r"^(?:mon|tue|wed|thu|fri|sat|sun)(?:-(?:mon|tue|wed|thu|fri|sat|sun))?$")
FORMS = 'expected "mon 10:00" (day names mon…sun, lists mon,thu, ranges mon-fri) or {day_of_week, hour, minute}'


def cron_fields(spec: PushSpec) -> dict[str, str]:
    """The cron fields of a push spec: ``{"day_of_week": "mon", "hour": "10", "minute": "0"}``.

    Raises:
        ValueError: the spec is malformed, names days by number, has unknown fields or
            values APScheduler rejects (the message lists the accepted forms).
    """
    if isinstance(spec, str):
        match = _SHORT.match(spec)
        if match is None:
            raise ValueError(f"push {spec!r}: {FORMS}")
        fields = {"day_of_week": match["days"].lower(), "hour": str(int(match["hour"])),
                  "minute": str(int(match["minute"]))}
    else:
        unknown = set(spec) - set(_FIELDS)
        if unknown:
            raise ValueError(f"push: unknown cron field(s) {', '.join(sorted(unknown))}; {FORMS}")
        if "day_of_week" not in spec:
            raise ValueError(f"push: day_of_week is required (a weekly push); {FORMS}")
        fields = {"day_of_week": str(spec["day_of_week"]).lower().replace(" ", ""),
                  "hour": str(spec.get("hour", 0)), "minute": str(spec.get("minute", 0))}
    for part in fields["day_of_week"].split(","):
        if not _DAYS.match(part):
            raise ValueError(f"push: day {part!r} is not a day name (0 means Monday in APScheduler, "
                             f"Sunday in crontab: write names); {FORMS}")
    try:
        CronTrigger(**fields, timezone="UTC")
    except ValueError as exc:
        raise ValueError(f"push {spec!r}: {exc}; {FORMS}") from exc
    return fields


def cron_trigger(spec: PushSpec, tz: str) -> CronTrigger:
    """The APScheduler cron trigger of ``spec`` in the IANA zone ``tz`` (seconds at 0).

    Raises:
        ValueError: a malformed spec (:func:`cron_fields`).
        WindowError: ``tz`` is not a known zone.
    """
    return CronTrigger(**cron_fields(spec), second="0", timezone=zone(tz))


def fires_between(trigger: CronTrigger, start: datetime, end: datetime) -> Iterator[datetime]:
    """The fire times ``t`` of ``trigger`` with ``start <= t <= end`` (aware, in the trigger's zone), in order.

    Computed with the trigger's own ``get_next_fire_time`` from the given instants, as the
    scheduler does; nothing waits.
    """
    moment = trigger.get_next_fire_time(None, start)
    while moment is not None and moment <= end:
        yield moment
        moment = trigger.get_next_fire_time(moment, moment + timedelta(seconds=1))


def latest_fire(trigger: CronTrigger, now: datetime, horizon: timedelta) -> datetime | None:
    """The last fire time of ``trigger`` in ``[now - horizon, now]``, or ``None`` when there is none."""
    last: datetime | None = None
    for moment in fires_between(trigger, now - horizon, now):
        last = moment
    return last


def week_before(moment: datetime, tz: str) -> Window:
    """The ISO week that ended before ``moment``'s week began, in zone ``tz`` — what a push at
    ``moment`` reports (``mon 10:00`` of 2026-W17 reports 2026-W16)."""
    return parse_week("last", tz=tz, now=moment)


def describe(spec: PushSpec) -> str:
    """A push spec for people: ``mon 10:00``."""
    fields = cron_fields(spec)
    return f"{fields['day_of_week']} {int(fields['hour']):02d}:{int(fields['minute']):02d}" if (
        fields["hour"].isdigit() and fields["minute"].isdigit()) else str(fields)
