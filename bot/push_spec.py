"""A channel's weekly push time as written in the config file, read into cron fields.

Two spellings::

    push = "mon 10:00"                      # every Monday at 10:00 in the channel's zone
    push = "mon,thu 09:30"                  # two days (ranges too: "mon-fri 09:00")
    push = { day_of_week = "mon", hour = 10, minute = 0 }

Days are names (``mon`` … ``sun``): APScheduler 3.x numbers days from 0 = Monday, unlike
crontab's 0 = Sunday, so numbers are refused rather than guessed. Hours are 0–23 and minutes
0–59, as plain numbers (a weekly push fires once a day at most).

This module is what :mod:`bot.config` validates with; it imports nothing of the scheduler, so
reading the settings does not load APScheduler. :mod:`bot.scheduler.schedule` turns the fields
into cron triggers.
"""

from __future__ import annotations

import re

__all__ = ["DAY_NAMES", "FORMS", "PushSpec", "cron_fields", "describe"]

PushSpec = str | dict[str, str | int]
"""``"mon 10:00"`` or cron fields (``day_of_week``, ``hour``, ``minute``)."""

DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
FORMS = 'expected "mon 10:00" (day names mon…sun, lists mon,thu, ranges mon-fri) or {day_of_week, hour, minute}'
_FIELDS = ("day_of_week", "hour", "minute")
_SHORT = re.compile(r"^\s*(?P<days>[a-z,\-]+)\s+(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*$", re.IGNORECASE)
_DAY = "|".join(DAY_NAMES)
_DAYS = re.compile(rf"^(?:{_DAY})(?:-(?:{_DAY}))?$")


def cron_fields(spec: PushSpec) -> dict[str, str]:
    """The cron fields of a push spec: ``{"day_of_week": "mon", "hour": "10", "minute": "0"}``.

    Raises:
        ValueError: the spec is malformed, names days by number, has unknown fields, or an hour
            outside 0–23 or a minute outside 0–59 (the message lists the accepted forms).
    """
    if isinstance(spec, str):
        match = _SHORT.match(spec)
        if match is None:
            raise ValueError(f"push {spec!r}: {FORMS}")
        days, hour, minute = match["days"].lower(), match["hour"], match["minute"]
    else:
        unknown = set(spec) - set(_FIELDS)
        if unknown:
            raise ValueError(f"push: unknown cron field(s) {', '.join(sorted(unknown))}; {FORMS}")
        if "day_of_week" not in spec:
            raise ValueError(f"push: day_of_week is required (a weekly push); {FORMS}")
        days = str(spec["day_of_week"]).lower().replace(" ", "")
        hour, minute = str(spec.get("hour", 0)).strip(), str(spec.get("minute", 0)).strip()
    for part in days.split(","):
        if not _DAYS.match(part):
            raise ValueError(f"push: day {part!r} is not a day name (0 means Monday in APScheduler, "
                             f"Sunday in crontab: write names); {FORMS}")
    if not (hour.isdigit() and int(hour) <= 23 and minute.isdigit() and int(minute) <= 59):
        raise ValueError(f"push {spec!r}: the time must be HH:MM with hours 0-23 and minutes 0-59; {FORMS}")
    return {"day_of_week": days, "hour": str(int(hour)), "minute": str(int(minute))}


def describe(spec: PushSpec) -> str:
    """A push spec for people: ``mon 10:00``."""
    fields = cron_fields(spec)
    return f"{fields['day_of_week']} {int(fields['hour']):02d}:{int(fields['minute']):02d}"
