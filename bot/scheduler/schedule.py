"""Push times as APScheduler 3.x cron triggers, and the fire times between two instants.

The push spec (``"mon 10:00"`` or cron fields) is read by :func:`bot.push_spec.cron_fields`;
here it becomes a trigger in the channel's explicit IANA zone. A wall-clock time that a DST
change skips fires at the first instant after the gap and one that occurs twice fires once
(APScheduler's rules), so every week has exactly one fire.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

from apscheduler.triggers.cron import CronTrigger  # type: ignore[import-untyped]

from bot.digest.window import parse_week, zone
from bot.models import Window
from bot.push_spec import PushSpec, cron_fields

__all__ = ["cron_trigger", "fires_between", "latest_fire", "week_before"]


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
