"""The windows before a digest's window, and what a PR source can cheaply say about them.

Week over week (:mod:`bot.digest.weekly`) and anything else that needs earlier records (e.g. a
file's churn over the last weeks) reads them here, never with an LLM:

- :func:`earlier_windows` — the ``count`` windows before ``window``, oldest first: the ISO weeks
  before an ISO week (``2026-W12`` … ``2026-W15`` before ``2026-W16``), otherwise windows of the
  same number of calendar days ending the day before;
- :func:`read_earlier` — a :class:`Lookback`: the PR records of the latest ``records`` of those
  windows and the PR count of all of them, as cheaply as the source allows:

  ========================  ===================================================================
  snapshot (``jsonl:``)     records, one ``merged_prs`` call over the whole span; windows that
                            end before the snapshot's first record are *not covered*
  git clone (``git:``)      records, one ``merged_prs`` call over the whole span
  GitHub API (``github``)   counts only, one GraphQL search per window (at most
                            :data:`GITHUB_LOOKBACK_REQUESTS`), and only with a token; reading
                            files of earlier weeks would cost a request per PR
  ========================  ===================================================================

A source that fails while looking back does not fail the digest: the lookback then says
``gap="source_error"`` and holds what it had.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from bot.digest.window import contains, date_window, last_day, week_window, zone
from bot.errors import SourceError
from bot.models import LookbackGap, PullRequest, Window
from bot.sources.base import PRSource, is_github

log = logging.getLogger(__name__)

__all__ = ["AVERAGE_WINDOWS", "CHART_WINDOWS", "GITHUB_LOOKBACK_REQUESTS", "Lookback", "earlier_windows",
           "read_earlier", "series_key", "series_keys", "stack_of"]

AVERAGE_WINDOWS = 4
"""How many earlier windows the averages of week over week are taken over (and read as records)."""
CHART_WINDOWS = 12
"""Windows in the PRs-per-window history, this one included (so 11 earlier ones are counted)."""
GITHUB_LOOKBACK_REQUESTS = CHART_WINDOWS - 1
"""The most GitHub API requests one look back may send (one count search per earlier window)."""


@dataclass(frozen=True, slots=True)
class Lookback:
    """What was read about the windows before a digest's window.

    Attributes:
        windows: the earlier windows, oldest first.
        counts: merged PRs by window name, for the windows the source could count.
        prs: the PR records by window name (merge order), for the windows read as records
            (the latest ``records`` windows of :func:`read_earlier`); empty when only counted.
        gap: why something is missing (``None`` when everything asked for was read).
        history: every PR record the source gave for all the earlier windows (merge order; the
            repository's recent history, where core files come from); empty when only counted.
    """

    windows: tuple[Window, ...]
    counts: Mapping[str, int] = field(default_factory=dict)
    prs: Mapping[str, tuple[PullRequest, ...]] = field(default_factory=dict)
    gap: LookbackGap | None = None
    history: tuple[PullRequest, ...] = ()

    @property
    def records(self) -> tuple[PullRequest, ...]:
        """Every PR record read over all the earlier windows (``history``), else those of ``prs``, in merge
        order (empty when the source only counted)."""
        return self.history or tuple(p for w in self.windows for p in self.prs.get(w.name, ()))


_PART = re.compile(r"\[\s*\d+\s*/\s*(?:\d+|n)\s*\]|\(\s*\d+\s*/\s*(?:\d+|n)\s*\)|\bpart\s+\d+\b", re.I)


def series_key(pr: PullRequest) -> str:
    """What a series of PRs shares, so that it counts once: the author and the title without its part number
    (``Refactor CLI [7/N]``, ``[3/n][trainer] …``, ``… (part 2)``) up to its first ``:``; a PR that is no
    part of a series is its own key."""
    if not _PART.search(pr.title):
        return f"#{pr.number}"
    title = _PART.sub(" ", pr.title).split(":", 1)[0]
    return f"{pr.author.lower()}|{' '.join(title.lower().split())}"


_STACK_TOOL = re.compile(r"\bStack (?:from|created with) \[(?:ghstack|Sapling)\]", re.I)
_STACK_ITEM = re.compile(r"^\s*[*-]\s*(?:__->__\s*)?#(\d+)\b", re.M)


def stack_of(pr: PullRequest) -> frozenset[int]:
    """The PR numbers of the stack ``pr`` belongs to, as its description lists them (the list that ghstack's
    "Stack from [ghstack]" and Sapling's "Stack created with [Sapling]" write: ``* #12``, ``* __->__ #13``), ``pr``
    itself included; empty when the description lists no stack."""
    body = pr.body or ""
    # "tack " first, in the text lowered: a plain search is many times faster than the pattern's, and exact —
    # whatever the pattern's IGNORECASE matches with t, a, c or k, lower() turns into that letter (unlike s and i:
    # ſ, ı and İ, which is why the test is not for "stack" or "ghstack")
    if "tack " not in body.lower() or not _STACK_TOOL.search(body):
        return frozenset()
    return frozenset({pr.number, *(int(n) for n in _STACK_ITEM.findall(pr.body))})


def series_keys(prs: Iterable[PullRequest]) -> dict[int, str]:
    """:func:`series_key` of each PR by number, where one author's stack (:func:`stack_of`) is one series too:
    PRs of the same author whose stack lists share a number have one key, however their titles differ (a stack
    that grew or lost its landed base still lists an overlapping set)."""
    prs = list(prs)
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x: tuple[str, int]) -> tuple[str, int]:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    stacks = {pr.number: stack_of(pr) for pr in prs}
    for pr in prs:
        author = pr.author.lower()
        for n in stacks[pr.number]:
            a, b = find((author, pr.number)), find((author, n))
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {pr.number: f"{pr.author.lower()}|stack #{find((pr.author.lower(), pr.number))[1]}"
            if stacks[pr.number] else series_key(pr) for pr in prs}


def earlier_windows(window: Window, count: int) -> tuple[Window, ...]:
    """The ``count`` windows right before ``window``, oldest first, in ``window.timezone``.

    An ISO-week window (``name`` like ``2026-W16``) gives the ISO weeks before it; any other
    window gives back-to-back windows of its own number of calendar days.

    Raises:
        WindowError: a window would fall outside the supported date range.
    """
    if count <= 0:
        return ()
    first = window.start.astimezone(zone(window.timezone)).date()
    if _is_iso_week(window.name):
        monday = date.fromisocalendar(int(window.name[:4]), int(window.name[6:]), 1)
        weeks = []
        for back in range(count, 0, -1):
            iso = (monday - timedelta(weeks=back)).isocalendar()
            weeks.append(week_window(iso.year, iso.week, window.timezone))
        return tuple(weeks)
    days = (last_day(window) - first).days + 1
    out = []
    for back in range(count, 0, -1):
        since = first - timedelta(days=days * back)
        out.append(date_window(since, since + timedelta(days=days - 1), window.timezone))
    return tuple(out)


def read_earlier(
    source: PRSource, repo: str, window: Window, *, count: int = CHART_WINDOWS - 1, records: int = AVERAGE_WINDOWS,
) -> Lookback:
    """Read the ``count`` windows before ``window`` from ``source``: records of the latest
    ``records`` of them and PR counts of all (see the module docstring for what each source costs).

    Args:
        source: the digest's source, still open.
        repo: ``owner/name`` as the source spells it.
        window: the digest's window.
        count: earlier windows to count.
        records: of those, the latest ones to read as records (for labels, hot files, risks).

    Returns:
        A :class:`Lookback`; never raises for a source failure (``gap="source_error"``).
    """
    windows = earlier_windows(window, count)
    if not windows:
        return Lookback(windows=())
    if is_github(source):
        return _count_github(source, repo, windows)
    span = Window(start=windows[0].start, end=window.start, timezone=window.timezone,
                  name=f"{windows[0].name}..{windows[-1].name}")
    try:
        found = source.merged_prs(repo, span)
        covered_from = _first_merge(source, repo)
    except SourceError as exc:
        log.warning("look back over %s of %s failed: %s", span.name, repo, exc)
        return Lookback(windows=windows, gap="source_error")
    counts: dict[str, int] = {}
    prs: dict[str, tuple[PullRequest, ...]] = {}
    kept = {w.name for w in windows[-records:]} if records > 0 else set()
    for earlier in windows:
        if covered_from is not None and earlier.end.astimezone(UTC) <= covered_from:
            continue
        inside = tuple(p for p in found if contains(earlier, p.merged_at))
        counts[earlier.name] = len(inside)
        if earlier.name in kept:
            prs[earlier.name] = inside
    gap: LookbackGap | None = "not_covered" if len(counts) < len(windows) else None
    return Lookback(windows=windows, counts=counts, prs=prs, gap=gap, history=tuple(found))


def _count_github(source: PRSource, repo: str, windows: tuple[Window, ...]) -> Lookback:
    from bot.sources.github import GitHubSource

    assert isinstance(source, GitHubSource)
    if not source.authenticated:
        return Lookback(windows=windows, gap="github_no_token")
    counts: dict[str, int] = {}
    for earlier in reversed(windows[-GITHUB_LOOKBACK_REQUESTS:]):  # the nearest windows first
        try:
            counts[earlier.name] = source.merged_count(repo, earlier)
        except SourceError as exc:
            log.warning("GitHub: counting %s of %s failed, look back stops there: %s", earlier.name, repo, exc)
            return Lookback(windows=windows, counts=counts, gap="source_error")
    return Lookback(windows=windows, counts=counts, gap="github_counts_only")


def _first_merge(source: PRSource, repo: str) -> datetime | None:
    """Where a snapshot's knowledge of ``repo`` begins (its header's ``covers_from``, else its first merge:
    the windows before are unknown, not empty); ``None`` for sources whose history is complete (a git clone)."""
    from bot.sources.jsonl import SnapshotSource

    if not isinstance(source, SnapshotSource):
        return None
    return source.covered_from(repo)


def _is_iso_week(name: str) -> bool:
    return len(name) == 8 and name[4:6] == "-W" and name[:4].isdigit() and name[6:].isdigit()

