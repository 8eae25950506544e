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
- :func:`last_day` — the inclusive last calendar day, for display;
- :func:`month_window` — a calendar month, named like a date range;
- :func:`window_from_spec` — a *window spec* (what a chat message asked for, see
  :data:`SPEC_FORMS`: ``week-2``, ``*-W16``, ``month-0``, ``days-14``, ``*-04-13..*-04-19`` …)
  laid out against a clock;
- :func:`spec_is_relative`, :func:`in_progress` — whether a spec depends on "now", whether
  a window has not ended yet;
- :func:`latest_week` — the ISO week of the latest merge (for "the latest window with merged PRs").

A window's ``start`` and ``end`` carry the fixed UTC offset in effect at that
instant in the zone (``2026-03-09T00:00-04:00`` in America/New_York), so
``end - start`` is the true elapsed time and comparisons are between instants;
the zone's name is ``Window.timezone``.

Every user-facing failure raises :class:`bot.errors.WindowError` with one line.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.errors import WindowError
from bot.models import Window

__all__ = [
    "RECENT",
    "RECENT_WEEKS",
    "SPEC_FORMS",
    "contains",
    "date_window",
    "in_progress",
    "iso_weeks_in_year",
    "last_day",
    "latest_week",
    "month_window",
    "named_window",
    "parse_week",
    "recent_window",
    "resolve_window",
    "spec_is_relative",
    "week_window",
    "window_from_spec",
    "zone",
]

WEEK_FORM = "YYYY-Www (e.g. 2026-W16), 'this' or 'last'"
"""The accepted forms of a week spec, as quoted in error messages."""

_WEEK_RE = re.compile(r"^(?P<year>[0-9]{4})-?[Ww](?P<week>[0-9]{2})$")
_RELATIVE_WEEK_RE = re.compile(r"week-[0-9]{1,4}|\*-W[0-9]{1,2}")
"""The week forms of the window specs (``week-2``, ``*-W16``), which :func:`parse_week` also reads."""
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
            f"unknown time zone {tz!r}: expected an IANA name such as Asia/Shanghai or UTC",
            zh=f"不认识的时区 {tz!r}：应为 IANA 时区名，例如 Asia/Shanghai 或 UTC",
        ) from exc
    except (ValueError, OSError) as exc:
        raise WindowError(
            f"invalid time zone {tz!r}: expected an IANA name such as Asia/Shanghai or UTC",
            zh=f"时区 {tz!r} 无效：应为 IANA 时区名，例如 Asia/Shanghai 或 UTC",
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
        raise WindowError(f"week {name} does not exist: the year must be between 1 and 9999",
                          zh=f"没有 {name} 这一周：年份应在 1 到 9999 之间")
    weeks = iso_weeks_in_year(year)
    if not 1 <= week <= weeks:
        raise WindowError(f"week {name} does not exist: ISO year {year} has weeks W01 to W{weeks}",
                          zh=f"没有 {name} 这一周：ISO 年 {year} 只有 W01 到 W{weeks}")
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
    week before it, i.e. the most recent complete week); and the two week
    forms of the window specs (:func:`window_from_spec`): ``week-N`` (N weeks
    before the current one) and ``*-Www`` (the latest week ``ww`` that has begun).

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
    if _RELATIVE_WEEK_RE.fullmatch(text):
        return window_from_spec(text, tz=tz, now=now)
    match = _WEEK_RE.fullmatch(text)
    if match is None:
        raise WindowError(f"malformed week {spec!r}: expected {WEEK_FORM}",
                          zh=f"读不懂的周 {spec!r}：应为 2026-W16 这样的 ISO 周，或 this（本周）、last（上周）")
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
            "the start date must not be later than the end date",
            zh=f"--since {since.isoformat()} 晚于 --until {until.isoformat()}：开始日期不能晚于结束日期",
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
        raise WindowError("give either a week or --since/--until dates, not both",
                          zh="--week 与 --since/--until 只能给一种")
    if week is not None:
        return parse_week(week, tz=tz, now=now)
    if since is not None and until is not None:
        return date_window(since, until, tz)
    if since is not None:
        today = _local_date(now, zone(tz))
        if since > today:
            raise WindowError(
                f"--since {since.isoformat()} is in the future (today is {today.isoformat()} in {tz})",
                zh=f"--since {since.isoformat()} 还没到（{tz} 的今天是 {today.isoformat()}）",
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


# --- window specs: what a chat message asked for, laid out against a clock --------------------

SPEC_FORMS = """\
this | last                    the ISO week containing today / the one before it
YYYY-Www                       an ISO week
week-N                         the ISO week N weeks before the current one (week-0 = this, week-1 = last)
weeks-N                        the N complete ISO weeks before the current one (Monday .. Sunday)
*-Www                          the latest ISO week number ww that has begun
days-N                         the last N calendar days, today included
day-N                          one calendar day, N days ago (day-0 = today)
month-N                        the calendar month N months before the current one (month-0 = this month)
YYYY-MM | *-MM                 a calendar month / the latest month MM that has begun
year-N | YYYY                  the calendar year N years before the current one / a calendar year
YYYY-MM-DD | *-MM-DD           one calendar day / its latest occurrence that has begun
A..B                           inclusive dates, both YYYY-MM-DD or both *-MM-DD
A..                            from date A through today
week@YYYY-MM-DD | week@*-MM-DD  the ISO week holding that day / the latest such week that has begun
                               (week 2 of April = week@*-04-08: April's first week holds April 1)
mon.. (tue.. … sun..)          from the latest such weekday through today (today, if it is one)
last-mon.. (… last-sun..)      from the latest such weekday before today through today
mon-N.. (… sun-N..)            from that weekday of the ISO week N weeks before the current one through today
recent                         "lately": the four ISO weeks through the current one (a chat answer takes the
                               four weeks through the latest week with merged PRs instead)"""
"""The window specs :func:`window_from_spec` accepts (``*`` = the latest year in which it has begun)."""

MAX_SPEC_OFFSET = 520
"""Largest N of ``week-N`` / ``month-N`` / ``day-N`` (ten years of weeks); larger is refused."""
MAX_SPEC_DAYS = 3660
"""Longest window a spec may ask for, in days (``days-N``, ``weeks-N``)."""

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
"""Weekday names of ``mon..`` specs, Monday first (``date.weekday()`` order)."""

_SPEC_OFFSET = re.compile(r"(?P<kind>week|weeks|days|day|month|year)-(?P<n>[0-9]{1,4})")
_SPEC_YEAR = re.compile(r"[0-9]{4}")
_SPEC_WEEK = re.compile(r"(?P<year>[0-9]{4}|\*)-W(?P<week>[0-9]{1,2})")
_SPEC_MONTH = re.compile(r"(?P<year>[0-9]{4}|\*)-(?P<month>[0-9]{1,2})")
_SPEC_DAY = re.compile(r"(?P<year>[0-9]{4}|\*)-(?P<month>[0-9]{1,2})-(?P<day>[0-9]{1,2})")
_SPEC_WEEK_OF = re.compile(r"week@(?P<year>[0-9]{4}|\*)-(?P<month>[0-9]{1,2})-(?P<day>[0-9]{1,2})")
_SPEC_WEEKDAY = re.compile(r"(?P<last>last-)?(?P<wd>mon|tue|wed|thu|fri|sat|sun)(?:-(?P<n>[0-9]{1,4}))?")
_YEARS_BACK = 8
"""How far back a yearless spec looks for a year in which it exists (W53, 02-29)."""


def month_window(year: int, month: int, tz: str) -> Window:
    """Calendar month ``month`` of ``year`` in zone ``tz``, named ``2026-04-01..2026-04-30``.

    Raises:
        WindowError: no such month (0, 13 …), a year outside 1..9999, or an unknown ``tz``.
    """
    if not 1 <= month <= 12:
        raise WindowError(f"month {month} does not exist: months are 1 to 12")
    if not 1 <= year <= 9999:
        raise WindowError(f"month {year:04d}-{month:02d} does not exist: the year must be between 1 and 9999")
    first = date(year, month, 1)
    last = (date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)) - timedelta(days=1)
    return date_window(first, last, tz)


def spec_is_relative(spec: str) -> bool:
    """Whether ``spec`` means a different window on another day (``last``, ``week-2``, ``*-W16``,
    ``month-0``, ``2026-04-13..`` …) — the windows a reply should echo ("I read 上上周 as …")."""
    text = spec.strip()
    return not (_WEEK_RE.fullmatch(text) or _SPEC_WEEK.fullmatch(text) or _SPEC_MONTH.fullmatch(text)
                or _SPEC_DAY.fullmatch(text) or _SPEC_YEAR.fullmatch(text) or _is_dated_range(text)) or "*" in text


def _is_dated_range(text: str) -> bool:
    first, sep, last = text.partition("..")
    return bool(sep and _SPEC_DAY.fullmatch(first) and _SPEC_DAY.fullmatch(last) and "*" not in text)


def latest_week(instants: Iterable[datetime], tz: str) -> tuple[Window, datetime] | None:
    """The ISO week (in zone ``tz``) holding the latest of ``instants`` (merge times), and that
    instant; ``None`` when there is none — "the latest window with merged PRs is …".

    Raises:
        WindowError: ``tz`` is unknown.
        ValueError: an instant is naive.
    """
    latest: datetime | None = None
    for instant in instants:
        _require_aware(instant, "instant")
        if latest is None or instant.astimezone(UTC) > latest.astimezone(UTC):
            latest = instant
    if latest is None:
        return None
    return _week_of(_local_date(latest, zone(tz)), tz), latest


RECENT = "recent"
"""The spec of "lately" (``最近``, ``这阵子``, ``recently``)."""
RECENT_WEEKS = 4
"""How many ISO weeks "lately" spans."""


def recent_window(last_week: Window, tz: str) -> Window:
    """The :data:`RECENT_WEEKS` ISO weeks ending with ``last_week`` (an ISO week's window), named by its
    inclusive dates (``2026-03-23..2026-04-19``).

    Raises:
        WindowError: ``tz`` is unknown.
    """
    first = _local_date(last_week.start, zone(tz)) - timedelta(weeks=RECENT_WEEKS - 1)
    last = _local_date(last_week.end, zone(tz)) - timedelta(days=1)
    return date_window(first, last, tz)


def in_progress(window: Window, now: datetime) -> bool:
    """Whether ``now`` lies inside ``window`` (the window has begun and not ended: "so far").

    Raises:
        ValueError: ``now`` is naive.
    """
    return contains(window, now)


def window_from_spec(spec: str, *, tz: str, now: datetime) -> Window:
    """The window a spec (:data:`SPEC_FORMS`) means at instant ``now`` in zone ``tz``.

    ISO weeks keep their names (``2026-W14``); every other window is named by its
    inclusive dates (``2026-04-01..2026-04-30``), so :func:`date_window` names,
    :func:`parse_week` names and the result's ``name`` all read back through
    this function to the same window.

    Yearless specs (``*-W16``, ``*-04``, ``*-04-13..*-04-19``) take the latest year
    in which the window has begun on ``now``'s local date: asked on 2026-04-20,
    ``*-05`` is May 2025 and ``*-04`` April 2026. A yearless range whose end
    comes before its start in the calendar runs into the next year (``*-12-28..*-01-03``).

    Raises:
        WindowError: a malformed spec (the message quotes the accepted forms), a week,
            month or day that does not exist, a window longer than :data:`MAX_SPEC_DAYS`,
            a start after the end, a "since" date in the future, or an unknown ``tz``.
        ValueError: ``now`` is naive.
    """
    _require_aware(now, "now")
    text = unicodedata.normalize("NFKC", spec).strip()
    today = _local_date(now, zone(tz))
    if text.lower() in ("this", "last") or _WEEK_RE.fullmatch(text):
        return parse_week(text, tz=tz, now=now)
    if text.lower() == RECENT:
        return recent_window(_week_of(today, tz), tz)
    if found := _SPEC_OFFSET.fullmatch(text):
        return _offset_window(found["kind"], int(found["n"]), today, tz, spec)
    if _SPEC_YEAR.fullmatch(text):
        return _year_window(int(text), tz)
    if found := _SPEC_WEEK.fullmatch(text):
        week = int(found["week"])
        if found["year"] != "*":
            return week_window(int(found["year"]), week, tz)
        return _latest_week(week, today, tz)
    if found := _SPEC_MONTH.fullmatch(text):
        month = int(found["month"])
        if found["year"] != "*":
            return month_window(int(found["year"]), month, tz)
        if not 1 <= month <= 12:
            raise WindowError(f"month {month} does not exist: months are 1 to 12")
        return month_window(today.year if month <= today.month else today.year - 1, month, tz)
    first, sep, last = text.partition("..")
    if sep:
        return _range_window(first, last, today, tz, spec)
    if _SPEC_DAY.fullmatch(text):
        day = _spec_day(text, today, spec)
        return date_window(day, day, tz)
    if found := _SPEC_WEEK_OF.fullmatch(text):
        return _week_holding(found, today, tz, spec)
    raise WindowError(f"malformed window {spec!r}: expected one of\n{SPEC_FORMS}")


def _offset_window(kind: str, n: int, today: date, tz: str, spec: str) -> Window:
    if n > MAX_SPEC_OFFSET and kind not in ("days", "weeks"):
        raise WindowError(f"window {spec!r} reaches too far back: at most {MAX_SPEC_OFFSET}")
    if kind == "week":
        return _week_of(today - timedelta(days=7 * n), tz)
    if kind == "day":
        day = today - timedelta(days=n)
        return date_window(day, day, tz)
    if kind == "month":
        index = today.year * 12 + today.month - 1 - n
        return month_window(index // 12, index % 12 + 1, tz)
    if kind == "year":
        return _year_window(today.year - n, tz)
    if n < 1 or (n * 7 if kind == "weeks" else n) > MAX_SPEC_DAYS:
        raise WindowError(f"window {spec!r} must cover 1 to {MAX_SPEC_DAYS} days")
    if kind == "days":
        return date_window(today - timedelta(days=n - 1), today, tz)
    monday = today - timedelta(days=today.weekday())
    return date_window(monday - timedelta(days=7 * n), monday - timedelta(days=1), tz)


def _year_window(year: int, tz: str) -> Window:
    if not 1 <= year <= 9999:
        raise WindowError(f"year {year} is outside the supported range 1 to 9999")
    return date_window(date(year, 1, 1), date(year, 12, 31), tz)


def _week_holding(found: re.Match[str], today: date, tz: str, spec: str) -> Window:
    """``week@*-04-08``: the ISO week holding that day, in the latest year in which that week has begun."""
    month, day = int(found["month"]), int(found["day"])
    years = [int(found["year"])] if found["year"] != "*" else list(range(today.year, today.year - _YEARS_BACK, -1))
    for year in years:
        try:
            held = date(year, month, day)
        except ValueError:
            continue
        monday = held - timedelta(days=held.weekday())
        if found["year"] != "*" or monday <= today:
            return _week_of(held, tz)
    raise WindowError(f"window {spec!r}: no such day")


def _latest_week(week: int, today: date, tz: str) -> Window:
    if not 1 <= week <= 53:
        raise WindowError(f"week W{week:02d} does not exist: ISO weeks are W01 to W53")
    iso_year = today.isocalendar().year
    for year in range(iso_year, iso_year - _YEARS_BACK, -1):
        if week <= iso_weeks_in_year(year) and date.fromisocalendar(year, week, 1) <= today:
            return week_window(year, week, tz)
    raise WindowError(f"week W{week:02d} did not occur in the last {_YEARS_BACK} years")


def _weekday_since(found: re.Match[str], today: date, spec: str) -> date:
    """The first day of a weekday "since" spec: ``wed..`` (the latest Wednesday, today included),
    ``last-wed..`` (the latest Wednesday before today), ``wed-2..`` (the Wednesday of ``week-2``)."""
    index = WEEKDAYS.index(found["wd"])
    if found["last"] and found["n"]:
        raise WindowError(f"malformed window {spec!r}: expected one of\n{SPEC_FORMS}")
    if found["n"] is not None:
        n = int(found["n"])
        if not 1 <= n <= MAX_SPEC_OFFSET:
            raise WindowError(f"window {spec!r} must reach back 1 to {MAX_SPEC_OFFSET} weeks")
        return today - timedelta(days=today.weekday() + 7 * n - index)
    back = (today.weekday() - index) % 7
    return today - timedelta(days=back or (7 if found["last"] else 0))


def _spec_day(text: str, today: date, spec: str) -> date:
    """The date of a ``YYYY-MM-DD`` or ``*-MM-DD`` part (latest occurrence not after ``today``)."""
    found = _SPEC_DAY.fullmatch(text)
    if found is None:
        raise WindowError(f"malformed date {text!r} in window {spec!r}: expected YYYY-MM-DD or *-MM-DD")
    month, day = int(found["month"]), int(found["day"])
    if found["year"] != "*":
        return _date(int(found["year"]), month, day)
    _date(2000, month, day)  # a leap year: rejects only dates that never exist (04-31, 13-01)
    for year in range(today.year, today.year - _YEARS_BACK, -1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate <= today:
            return candidate
    raise WindowError(f"date {month:02d}-{day:02d} did not occur in the last {_YEARS_BACK} years")


def _date(year: int, month: int, day: int) -> date:
    try:
        return date(year, month, day)
    except ValueError as exc:
        raise WindowError(f"date {year:04d}-{month:02d}-{day:02d} does not exist") from exc


def _range_window(first: str, last: str, today: date, tz: str, spec: str) -> Window:
    if not last and (found := _SPEC_WEEKDAY.fullmatch(first.lower())):
        return date_window(_weekday_since(found, today, spec), today, tz)
    start = _spec_day(first, today, spec)
    if not last:
        if start > today:
            raise WindowError(f"the window {spec!r} starts after today ({today.isoformat()})")
        return date_window(start, today, tz)
    if ("*" in first) != ("*" in last):
        raise WindowError(f"malformed window {spec!r}: give both dates with a year or both without")
    if "*" in last:
        found = _SPEC_DAY.fullmatch(last)
        if found is None:
            raise WindowError(f"malformed date {last!r} in window {spec!r}: expected *-MM-DD")
        end = _date(start.year, int(found["month"]), int(found["day"]))
        if end < start:
            end = _date(start.year + 1, end.month, end.day)
    else:
        end = _spec_day(last, today, spec)
    if end < start:
        raise WindowError(f"the window {spec!r} ends before it starts")
    if (end - start).days + 1 > MAX_SPEC_DAYS:
        raise WindowError(f"window {spec!r} must cover 1 to {MAX_SPEC_DAYS} days")
    return date_window(start, end, tz)
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
