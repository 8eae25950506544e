"""Time windows: ISO weeks and inclusive date ranges, as half-open ``[start, end)`` instants.

A window is built in one IANA time zone (``Asia/Shanghai`` by default in the
configuration) and compared against a PR's ``merged_at`` as aware datetimes,
never as strings, so records with any UTC offset fall into the right window.

Day boundaries are *the first instant of the local calendar day*. In almost
every zone and on almost every day that is local 00:00. Where midnight does not
exist (a DST gap at midnight, e.g. America/Santiago in September or Asia/Beirut
in March, or a skipped day such as Pacific/Apia on 2011-12-30) the day starts
at the transition instant, i.e. at the first wall-clock time that exists
(01:00 in Santiago and Beirut). Where midnight occurs twice (a fall-back
overlapping midnight) the day starts at its first occurrence (``fold=0``).
A window therefore always covers exactly the instants whose local date lies in
its calendar days — no instant is lost or counted twice between adjacent
windows — even though such a week may last 167 or 169 hours.

Public functions:

- :func:`week_window` — an ISO week (Monday to Sunday), named ``2026-W16``;
- :func:`parse_week` — ``2026-W16`` / ``2026-w16`` / ``2026W16`` / ``this`` / ``last``;
- :func:`date_window` — inclusive calendar dates, named ``2026-04-13..2026-04-19``;
- :func:`resolve_window` — the CLI's rules for ``--week`` / ``--since`` / ``--until``;
- :func:`named_window` — a window named as the chat bots name one (a week spec, or a window's name
  ``2026-04-13..2026-04-19`` from a card's button);
- :func:`contains` — is an aware instant inside a window;
- :func:`last_day` — the inclusive last calendar day, for display.

A window's ``start`` and ``end`` carry the fixed UTC offset in effect at that
instant in the zone (``2026-03-09T00:00-04:00`` in America/New_York), so
``end - start`` is the true elapsed time and comparisons are between instants;
the zone's name is ``Window.timezone``.

Every user-facing failure raises :class:`bot.errors.WindowError` with one line.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.errors import WindowError
from bot.models import Window

__all__ = [
    "contains",
    "date_window",
    "iso_weeks_in_year",
    "last_day",
    "named_window",
    "parse_week",
    "resolve_window",
    "week_window",
    "zone",
]

WEEK_FORM = "YYYY-Www (e.g. 2026-W16), 'this' or 'last'"
"""The accepted forms of a week spec, as quoted in error messages."""

_WEEK_RE = re.compile(r"^(?P<year>[0-9]{4})-?[Ww](?P<week>[0-9]{2})$")
_ONE_MICROSECOND = timedelta(microseconds=1)


def zone(tz: str) -> ZoneInfo:
    """The ``ZoneInfo`` of IANA name ``tz`` (e.g. ``Asia/Shanghai``; case-sensitive).

    Raises:
        WindowError: ``tz`` is not a known IANA time zone name.
    """
    try:
        return ZoneInfo(tz)
    except ZoneInfoNotFoundError as exc:
        raise WindowError(
            f"unknown time zone {tz!r}: expected an IANA name such as Asia/Shanghai or UTC"
        ) from exc
    except (ValueError, OSError) as exc:
        raise WindowError(
            f"invalid time zone {tz!r}: expected an IANA name such as Asia/Shanghai or UTC"
        ) from exc


def iso_weeks_in_year(year: int) -> int:
    """Number of ISO weeks (52 or 53) in ISO year ``year``.

    December 28 always lies in the last ISO week of its year.
    """
    return date(year, 12, 28).isocalendar().week


def _require_aware(moment: datetime, what: str) -> None:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"{what} must be a timezone-aware datetime, got naive {moment.isoformat()}")


def _local_date(instant: datetime, tzinfo: ZoneInfo) -> date:
    return instant.astimezone(tzinfo).date()


def _fixed(instant: datetime, tzinfo: ZoneInfo) -> datetime:
    """``instant`` as local time in ``tzinfo``, carrying the fixed UTC offset in effect then."""
    local = instant.astimezone(tzinfo)
    offset = local.utcoffset()
    assert offset is not None  # a ZoneInfo always gives an offset
    return local.replace(tzinfo=timezone(offset), fold=0)


def _start_of_day(day: date, tzinfo: ZoneInfo) -> datetime:
    """First instant whose local date (in ``tzinfo``) is ``day`` or later, with its fixed local offset.

    Normally local 00:00. If local midnight is ambiguous the earlier instant is
    taken; if it falls into a gap, the transition instant that ends the gap.
    """
    midnight = datetime.combine(day, time(0, 0))
    candidates = [midnight.replace(tzinfo=tzinfo, fold=fold) for fold in (0, 1)]
    existing = [
        c for c in candidates if c.astimezone(UTC).astimezone(tzinfo).replace(tzinfo=None) == midnight
    ]
    if existing:
        return _fixed(min(existing, key=lambda c: c.astimezone(UTC)), tzinfo)
    # Midnight lies in a gap. PEP 495: fold=0 reads it with the offset before the
    # transition, fold=1 with the offset after, so the transition instant lies
    # between the two readings. Find the first instant whose local date is >= day.
    lo, hi = sorted(c.astimezone(UTC) for c in candidates)
    while hi - lo > _ONE_MICROSECOND:
        mid = lo + (hi - lo) // 2
        if _local_date(mid, tzinfo) >= day:
            hi = mid
        else:
            lo = mid
    return _fixed(hi, tzinfo)


def _days_window(first: date, last: date, tz: str, name: str) -> Window:
    tzinfo = zone(tz)
    try:
        end_day = last + timedelta(days=1)
        start = _start_of_day(first, tzinfo)
        end = _start_of_day(end_day, tzinfo)
    except OverflowError as exc:
        raise WindowError(f"window {name} is outside the supported date range") from exc
    return Window(start=start, end=end, timezone=tz, name=name)


def week_window(year: int, week: int, tz: str) -> Window:
    """ISO week ``week`` of ISO year ``year`` in zone ``tz``.

    Returns a window from Monday 00:00 local up to (not including) the next
    Monday 00:00 local (see the module notes for days without a midnight),
    named like ``2026-W16``.

    Raises:
        WindowError: the week does not exist (week 0, week 53 of a 52-week
            year, week 54…), the year is outside 1..9999, or ``tz`` is unknown.
    """
    name = f"{year:04d}-W{week:02d}"
    if not 1 <= year <= 9999:
        raise WindowError(f"week {name} does not exist: the year must be between 1 and 9999")
    weeks = iso_weeks_in_year(year)
    if not 1 <= week <= weeks:
        raise WindowError(f"week {name} does not exist: ISO year {year} has weeks W01 to W{weeks}")
    monday = date.fromisocalendar(year, week, 1)
    try:
        sunday = monday + timedelta(days=6)
    except OverflowError as exc:
        raise WindowError(f"week {name} is outside the supported date range") from exc
    return _days_window(monday, sunday, tz, name)


def _week_of(day: date, tz: str) -> Window:
    iso = day.isocalendar()
    return week_window(iso.year, iso.week, tz)


def parse_week(spec: str, *, tz: str, now: datetime) -> Window:
    """Parse a week spec into the window of that ISO week in zone ``tz``.

    Accepted forms (surrounding spaces ignored, case-insensitive, full-width
    characters as typed with a CJK input method read as their ASCII forms):
    ``2026-W16``, ``2026-w16``, ``2026W16`` (two-digit week); ``this`` (the
    ISO week containing ``now``'s local date in ``tz``) and ``last`` (the ISO
    week before it, i.e. the most recent complete week).

    Args:
        spec: the week spec as the user typed it.
        tz: IANA time zone name the week is laid out in.
        now: the current instant; must be timezone-aware, any offset (it is
            converted to ``tz`` first).

    Raises:
        WindowError: malformed spec (the message names the expected form), a
            week that does not exist, or an unknown ``tz``.
        ValueError: ``now`` is naive (a programming error, not user input).
    """
    _require_aware(now, "now")
    text = unicodedata.normalize("NFKC", spec).strip()
    keyword = text.lower()
    if keyword in ("this", "last"):
        today = _local_date(now, zone(tz))
        if keyword == "last":
            today -= timedelta(days=7)
        return _week_of(today, tz)
    match = _WEEK_RE.fullmatch(text)
    if match is None:
        raise WindowError(f"malformed week {spec!r}: expected {WEEK_FORM}")
    return week_window(int(match["year"]), int(match["week"]), tz)


def date_window(since: date, until: date, tz: str) -> Window:
    """The window of the inclusive calendar dates ``since`` … ``until`` in zone ``tz``.

    Returns ``[since 00:00, until + 1 day 00:00)`` local (see the module notes
    for days without a midnight), named like ``2026-04-13..2026-04-19``.

    Raises:
        WindowError: ``since`` is after ``until``, a date at the edge of the
            supported range, or an unknown ``tz``.
    """
    if since > until:
        raise WindowError(
            f"--since {since.isoformat()} is after --until {until.isoformat()}: "
            "the start date must not be later than the end date"
        )
    return _days_window(since, until, tz, f"{since.isoformat()}..{until.isoformat()}")


def resolve_window(
    *,
    week: str | None,
    since: date | None,
    until: date | None,
    tz: str,
    now: datetime,
) -> Window:
    """Choose the digest window from the CLI's ``--week`` / ``--since`` / ``--until`` options.

    Rules:

    - ``week`` given: :func:`parse_week` (``since``/``until`` must then be absent);
    - ``since`` and ``until``: :func:`date_window` of those inclusive dates;
    - ``since`` alone: from ``since`` up to and including today (``now``'s
      local date in ``tz``);
    - ``until`` alone: the seven days ending on ``until`` (``until - 6 days``
      … ``until``), the length of a weekly digest;
    - nothing: ``last``, the most recent *complete* ISO week — what a weekly
      digest posted on Monday morning reports. Ask for ``this`` explicitly to
      get the week in progress.

    Raises:
        WindowError: ``week`` together with ``since``/``until``, or any error of
            :func:`parse_week` / :func:`date_window`.
        ValueError: ``now`` is naive.
    """
    _require_aware(now, "now")
    if week is not None and (since is not None or until is not None):
        raise WindowError("give either a week or --since/--until dates, not both")
    if week is not None:
        return parse_week(week, tz=tz, now=now)
    if since is not None and until is not None:
        return date_window(since, until, tz)
    if since is not None:
        today = _local_date(now, zone(tz))
        if since > today:
            raise WindowError(
                f"--since {since.isoformat()} is in the future (today is {today.isoformat()} in {tz})"
            )
        return date_window(since, today, tz)
    if until is not None:
        try:
            start = until - timedelta(days=6)
        except OverflowError as exc:
            raise WindowError(f"--until {until.isoformat()} is outside the supported date range") from exc
        return date_window(start, until, tz)
    return parse_week("last", tz=tz, now=now)


def contains(window: Window, moment: datetime) -> bool:
    """Whether the instant ``moment`` lies in ``[window.start, window.end)``.

    Compares instants (both sides converted to UTC, so neither wall-clock
    comparison of equal ``tzinfo`` objects nor ``fold`` can mislead it); any
    UTC offset or zone works (``+08:00``, ``+00:00``, ``-07:00``, a ``ZoneInfo``…).

    Raises:
        ValueError: ``moment`` is naive.
    """
    _require_aware(moment, "moment")
    return window.start.astimezone(UTC) <= moment.astimezone(UTC) < window.end.astimezone(UTC)


def last_day(window: Window) -> date:
    """The inclusive last calendar day of ``window`` in its own zone, for display.

    For ``2026-W16`` that is Sunday 2026-04-19; for ``2026-04-13..2026-04-19``
    it is 2026-04-19 — the local date of the window's last instant.

    Raises:
        WindowError: ``window.timezone`` is not a known IANA time zone name.
    """
    tzinfo = zone(window.timezone)
    return _local_date(window.end.astimezone(UTC) - _ONE_MICROSECOND, tzinfo)


def named_window(spec: str | None, *, tz: str, now: datetime) -> Window:
    """The window a chat request names: ``None`` (the last complete week, as :func:`resolve_window`),
    a week spec (:func:`parse_week`) or a window's own name ``YYYY-MM-DD..YYYY-MM-DD`` (both days
    included, as :func:`date_window` names it; a card's button carries it).

    Raises:
        WindowError: a malformed spec or date, ``since`` after ``until``, an unknown zone.
    """
    if spec is not None and ".." in spec:
        first, _, last = spec.partition("..")
        try:
            since, until = date.fromisoformat(first.strip()), date.fromisoformat(last.strip())
        except ValueError as exc:
            raise WindowError(f"cannot read the window {spec!r}: expected YYYY-MM-DD..YYYY-MM-DD") from exc
        return date_window(since, until, tz)
    if spec is None:
        return resolve_window(week=None, since=None, until=None, tz=tz, now=now)
    return parse_week(spec, tz=tz, now=now)
