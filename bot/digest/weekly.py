"""Week over week: a digest against the windows before it (:class:`~bot.models.WeekOverWeek`).

Everything is counted. The earlier windows come from a :class:`~bot.digest.history.Lookback`
(records analysed by the heuristic through ``build``, or only PR counts) and from digests
already built for them (``known``, e.g. kept in a cache); no LLM is ever asked about them.

- the PR count against the previous window and the average of the last
  :data:`~bot.digest.history.AVERAGE_WINDOWS` earlier windows that were available;
- per label the same three numbers, largest change first ("npu 14, +6 against the average");
- hot files of this window (the trends' hot files) that none of those earlier windows had as
  a hot file (a file touched by two or more of its PRs);
- risk kinds whose PR count is above their average.

Labels, hot files and risks need every averaged window as records or as a digest; when the
source only counted (the GitHub API) they are listed in ``WeekOverWeek.unavailable``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.digest.history import AVERAGE_WINDOWS, Lookback
from bot.models import (
    CountChange,
    Digest,
    NewHotFile,
    PullRequest,
    WeekOverWeek,
    WeekOverWeekPart,
    Window,
    WindowCount,
)

BuildDigest = Callable[[Sequence[PullRequest], Window], Digest]
"""Builds the heuristic digest of one earlier window from its records."""

HOT_FILE_MIN_PRS = 2
"""An earlier window's hot files: paths changed by at least this many of its PRs (as in trends)."""


@dataclass(frozen=True, slots=True)
class WindowTally:
    """What one window held: PRs, PRs per label, hot files, PRs per risk kind (with titles)."""

    pr_count: int
    labels: Mapping[str, int]
    hot_files: frozenset[str]
    risks: Mapping[str, int]
    risk_titles: Mapping[str, str]


def tally(digest: Digest, prs: Sequence[PullRequest] = ()) -> WindowTally:
    """The tally of a built digest; with its records ``prs``, every path changed by two or more
    of them counts as hot too (not only the few each trend shows)."""
    hot = {f.path for trend in digest.trends for f in trend.hot_files}
    paths = Counter(path for pr in prs for path in {f.path for f in pr.files})
    hot |= {path for path, n in paths.items() if n >= HOT_FILE_MIN_PRS}
    return WindowTally(
        pr_count=digest.stats.pr_count,
        labels={t.label: t.count for t in digest.trends},
        hot_files=frozenset(hot),
        risks={r.kind: r.count for r in digest.risk_rollup},
        risk_titles={r.kind: r.title for r in digest.risk_rollup},
    )


def compare(
    digest: Digest, lookback: Lookback, *, build: BuildDigest, known: Mapping[str, Digest] | None = None,
) -> WeekOverWeek | None:
    """Week over week of ``digest``.

    Args:
        digest: this window's digest (its trends, hot files and risk roll-up are compared).
        lookback: the earlier windows and what the source said about them.
        build: builds the heuristic digest of an earlier window from its records.
        known: digests already built for earlier windows, by window name (used where the
            lookback has no records, e.g. for the GitHub API).

    Returns:
        The comparison, or ``None`` when there is no earlier window at all.
    """
    if not lookback.windows:
        return None
    known = known or {}
    counts: dict[str, int] = dict(lookback.counts)
    tallies: dict[str, WindowTally] = {}
    averaged = lookback.windows[-AVERAGE_WINDOWS:]
    for window in averaged:
        if window.name in lookback.prs:
            records = lookback.prs[window.name]
            tallies[window.name] = tally(build(records, window), records)
        elif window.name in known:
            tallies[window.name] = tally(known[window.name])
    for name, earlier in known.items():
        counts.setdefault(name, earlier.stats.pr_count)

    history = tuple(WindowCount(name=w.name, start=w.start, pr_count=counts.get(w.name))
                    for w in lookback.windows)
    history += (WindowCount(name=digest.window.name, start=digest.window.start, pr_count=digest.stats.pr_count),)
    counted = [w.name for w in averaged if w.name in counts]
    previous = lookback.windows[-1].name
    prs = CountChange(name="", count=digest.stats.pr_count, last=counts.get(previous),
                      average=_mean(counts[n] for n in counted))

    unavailable: list[WeekOverWeekPart] = []
    if not counted:
        unavailable.append("counts")
    labels: tuple[CountChange, ...] = ()
    new_hot: tuple[NewHotFile, ...] = ()
    grew: tuple[CountChange, ...] = ()
    if counted and all(n in tallies for n in counted):
        seen = [tallies[n] for n in counted]
        last = tallies.get(previous)
        labels = _labels(digest, seen, last)
        new_hot = _new_hot_files(digest, seen)
        grew = _risks_grew(digest, seen, last)
    else:
        unavailable += ["labels", "hot_files", "risks"]
    complete = len(counts) >= len(lookback.windows) and not unavailable
    return WeekOverWeek(
        average_windows=len(counted), history=history, prs=prs, labels=labels, new_hot_files=new_hot,
        risks_grew=grew, unavailable=tuple(unavailable), gap=None if complete else lookback.gap,
    )


def _mean(values: Iterable[int]) -> float | None:
    items = list(values)
    return round(sum(items) / len(items), 2) if items else None


def _labels(digest: Digest, seen: list[WindowTally], last: WindowTally | None) -> tuple[CountChange, ...]:
    now = {t.label: t.count for t in digest.trends}
    names = list(now) + sorted({k for t in seen for k in t.labels} - set(now))
    out = [
        CountChange(name=name, title=name, count=now.get(name, 0),
                    last=last.labels.get(name, 0) if last is not None else None,
                    average=_mean(t.labels.get(name, 0) for t in seen))
        for name in names
    ]
    return tuple(sorted(out, key=lambda c: (-abs(c.delta or 0), -c.count, c.name)))


def _new_hot_files(digest: Digest, seen: list[WindowTally]) -> tuple[NewHotFile, ...]:
    before = frozenset().union(*(t.hot_files for t in seen))
    out: dict[str, NewHotFile] = {}
    for trend in digest.trends:
        for hot in trend.hot_files:
            if hot.path not in before and hot.path not in out:
                out[hot.path] = NewHotFile(path=hot.path, pr_count=hot.pr_count, label=trend.label)
    return tuple(sorted(out.values(), key=lambda f: (-f.pr_count, f.path)))


NOT_COMPARED_RISKS = frozenset({"core_path_change"})
"""Risks counted against a context the earlier windows are not built with: a window's core files come from the
history before it, while an earlier window is counted on its own (its core files are its own hot files), so
"core path change 13 (average 0)" would compare two different things."""


def _risks_grew(digest: Digest, seen: list[WindowTally], last: WindowTally | None) -> tuple[CountChange, ...]:
    out = []
    for risk in digest.risk_rollup:
        if risk.kind in NOT_COMPARED_RISKS:
            continue
        change = CountChange(name=risk.kind, title=risk.title, count=risk.count,
                             last=last.risks.get(risk.kind, 0) if last is not None else None,
                             average=_mean(t.risks.get(risk.kind, 0) for t in seen))
        if change.delta is not None and change.delta > 0:
            out.append(change)
    return tuple(sorted(out, key=lambda c: (-(c.delta or 0), c.name)))
