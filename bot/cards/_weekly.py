"""Week over week in words: the phrases and lines every renderer shows for ``Digest.week_over_week``.

:func:`weekly_lines` gives the section's items (PR count, label changes, new hot files, risks
that grew, what was not available), :func:`label_change` the short note the trends section adds
to a label, :func:`number` and :func:`signed` the number formats (``31.3``, ``+7.8``). Values
from PRs (labels, paths, risk titles) go through the :class:`~bot.cards._outline.Markup`'s
escapers here; the phrases are ours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Protocol

from bot.cards.i18n import is_week
from bot.models import CountChange, Digest, Language, WeekOverWeek


class Markup(Protocol):
    """What these lines need of a :class:`bot.cards._outline.Markup` (which imports this module)."""

    @property
    def text(self) -> Callable[[str], str]: ...

    @property
    def code(self) -> Callable[[str], str]: ...

    @property
    def bold(self) -> Callable[[str], str]: ...

CARD_LABELS = 6
"""Label changes a card line names (the page's table shows all)."""
REPORT_LABELS = 12
CARD_HOT_FILES = 3
MIN_LABEL_CHANGE = 1.0
"""A label is named among the changes when its count differs from its average by this much."""


@dataclass(frozen=True, slots=True)
class WeeklyPhrases:
    """Fixed texts of week over week in one language (``{…}`` filled with ``str.format``)."""

    title: str
    title_range: str
    prs: str
    """``{count}``, then the ``vs_last`` and ``vs_average`` parts."""
    prs_range: str
    vs_last: str
    vs_last_range: str
    vs_average: str
    labels: str
    """``{n}`` (windows averaged), ``{items}``."""
    label_item: str
    label_note: str
    """Trend note: ``{n}``, ``{average}``, ``{delta}``."""
    hot_files: str
    hot_files_range: str
    hot_file: str
    more: str
    risks: str
    risk_item: str
    unchanged: str
    gaps: dict[str, str]
    parts: dict[str, str]
    missing: str
    """``{parts}`` unavailable, ``{reason}``."""
    period: str
    period_range: str
    list_sep: str
    open: str
    close: str


ZH = WeeklyPhrases(
    title="周环比",
    title_range="环比",
    prs="本周 {count} 个 PR",
    prs_range="本期 {count} 个 PR",
    vs_last="上周 {last} 个（{delta}）",
    vs_last_range="上期 {last} 个（{delta}）",
    vs_average="前 {n}平均 {average} 个（{delta}）",
    labels="标签变化（对比前 {n}平均）：{items}",
    label_item="{label} {count}（{delta}）",
    label_note="前 {n}平均 {average}，{delta}",
    hot_files="本周新出现的热点文件：{items}",
    hot_files_range="本期新出现的热点文件：{items}",
    hot_file="{path}（{label}，{n_prs} 个 PR）",
    more="等另外 {n} 个",
    risks="增多的风险：{items}",
    risk_item="{title} {count}（平均 {average}，{delta}）",
    unchanged="各标签与前几期持平",
    gaps={
        "github_no_token": "GitHub API 没有 token 时不读取前几期（设置 GITHUB_TOKEN 后按每期一次搜索统计 PR 数）",
        "github_counts_only": "GitHub API 只统计了前几期的 PR 数（读取它们的文件要每个 PR 一次请求）",
        "not_covered": "数据源中没有 {first} 之前的记录，更早的 {missing}不计入",
        "source_error": "读取前几期的记录失败",
        "not_covered_all": "数据源中没有 {first} 之前的记录，无法与前几{unit}比较",
        "no_source": "没有可读取前几期的数据源",
    },
    parts={"counts": "PR 数", "labels": "标签", "hot_files": "热点文件", "risks": "风险"},
    missing="{parts}的对比不可用：{reason}",
    period="周",
    period_range="期",
    list_sep="、",
    open="（",
    close="）",
)

EN = WeeklyPhrases(
    title="Week over week",
    title_range="Against earlier periods",
    prs="{count} PRs this week",
    prs_range="{count} PRs this period",
    vs_last="{last} last week ({delta})",
    vs_last_range="{last} in the previous period ({delta})",
    vs_average="{average} on average over the previous {n} ({delta})",
    labels="Labels against their average over the previous {n}: {items}",
    label_item="{label} {count} ({delta})",
    label_note="average {average} over the previous {n}, {delta}",
    hot_files="Hot files new this week: {items}",
    hot_files_range="Hot files new this period: {items}",
    hot_file="{path} ({label}, {n_prs} PRs)",
    more="and {n} more",
    risks="Risks that grew: {items}",
    risk_item="{title} {count} (average {average}, {delta})",
    unchanged="every label about as active as before",
    gaps={
        "github_no_token": "without a token the GitHub API is not asked about earlier periods (set GITHUB_TOKEN: "
                           "one search per period counts their PRs)",
        "github_counts_only": "the GitHub API only counted the earlier periods' PRs (reading their files costs a "
                              "request per PR)",
        "not_covered": "the source holds no record before {first}; the {missing} before are left out",
        "source_error": "reading the earlier periods failed",
        "not_covered_all": "the source holds no record before {first}, so there is nothing earlier to compare with",
        "no_source": "no source to read earlier periods from",
    },
    parts={"counts": "PR counts", "labels": "labels", "hot_files": "hot files", "risks": "risks"},
    missing="No comparison of {parts}: {reason}",
    period="weeks",
    period_range="periods",
    list_sep=", ",
    open=" (",
    close=")",
)

_PHRASES: dict[Language, WeeklyPhrases] = {"zh": ZH, "en": EN}


def weekly_phrases(language: Language) -> WeeklyPhrases:
    """The week-over-week phrases of ``language``."""
    return _PHRASES[language]


def number(value: float) -> str:
    """``31.25`` → ``31.3`` (halves away from zero), ``2.0`` → ``2``."""
    text = str(Decimal(str(value)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))
    return text[:-2] if text.endswith(".0") else text


def signed(value: float) -> str:
    """``7.75`` → ``+7.8``, ``-1.25`` → ``-1.3``, ``0`` → ``±0``."""
    text = number(abs(value))
    if text == "0":
        return "±0"
    return ("+" if value > 0 else "-") + text


def shown_delta(change: CountChange) -> str:
    """``change``'s count less its average as the average is shown (:func:`number`), signed: ``4`` against an
    average of ``1.25`` shown as ``1.3`` is ``+2.7``, never ``+2.8`` beside it."""
    if change.average is None:
        return signed(change.delta or 0)
    return signed(float(Decimal(change.count) - Decimal(number(change.average))))


def title(digest: Digest) -> str:
    """``周环比`` for an ISO week, else the period wording."""
    words = weekly_phrases(digest.language)
    return words.title if is_week(digest.window) else words.title_range


def _n(wow: WeekOverWeek, digest: Digest) -> str:
    words = weekly_phrases(digest.language)
    unit = words.period if is_week(digest.window) else words.period_range
    return f"{wow.average_windows} {unit}"


def pr_line(digest: Digest, wow: WeekOverWeek) -> str:
    """``本周 39 个 PR：上周 27 个（+12），前 4 期平均 31.3 个（+7.8）``."""
    words = weekly_phrases(digest.language)
    parts = []
    change = wow.prs
    if change.last is not None:
        pattern = words.vs_last if is_week(digest.window) else words.vs_last_range
        parts.append(pattern.format(last=change.last, delta=signed(change.count - change.last)))
    if change.average is not None and change.delta is not None:
        parts.append(words.vs_average.format(n=_n(wow, digest), average=number(change.average),
                                             delta=shown_delta(change)))
    head = (words.prs if is_week(digest.window) else words.prs_range).format(count=change.count)
    if not parts:
        return head
    sep = "：" if digest.language == "zh" else ": "
    return head + sep + ("，" if digest.language == "zh" else ", ").join(parts)


def moved_labels(wow: WeekOverWeek, limit: int) -> list[CountChange]:
    """The labels whose count moved at least :data:`MIN_LABEL_CHANGE` from their average, largest first."""
    return [c for c in wow.labels if c.delta is not None and abs(c.delta) >= MIN_LABEL_CHANGE][:limit]


def weekly_lines(digest: Digest, m: Markup, *, labels: int = CARD_LABELS, hot_files: int = CARD_HOT_FILES,
                 ) -> tuple[str, ...]:
    """The items of the week-over-week section, escaped for ``m``; empty without a comparison."""
    wow = digest.week_over_week
    if wow is None:
        return ()
    words = weekly_phrases(digest.language)
    lines = []
    if "counts" not in wow.unavailable:
        lines.append(m.text(pr_line(digest, wow)))
    if "labels" not in wow.unavailable:
        moved = moved_labels(wow, labels)
        if moved:
            items = words.list_sep.join(
                words.label_item.format(label=m.bold(m.text(c.name)), count=c.count, delta=shown_delta(c))
                for c in moved
            )
            lines.append(words.labels.format(n=_n(wow, digest), items=items))
        else:
            lines.append(m.text(words.unchanged))
    if wow.new_hot_files:
        shown = wow.new_hot_files[:hot_files]
        items = words.list_sep.join(
            words.hot_file.format(path=m.code(f.path), label=m.text(f.label), n_prs=f.pr_count) for f in shown
        )
        more = len(wow.new_hot_files) - len(shown)
        if more > 0:
            items += (" " if digest.language == "en" else "") + words.more.format(n=more)
        pattern = words.hot_files if is_week(digest.window) else words.hot_files_range
        lines.append(pattern.format(items=items))
    if wow.risks_grew:
        items = words.list_sep.join(
            words.risk_item.format(title=m.text(c.title), count=c.count, average=number(c.average or 0),
                                   delta=shown_delta(c))
            for c in wow.risks_grew
        )
        lines.append(words.risks.format(items=items))
    gap = gap_line(digest)
    if gap:
        lines.append(m.text(gap))
    return tuple(lines)


def gap_line(digest: Digest) -> str:
    """What could not be compared and why (unescaped), or ``""``."""
    wow = digest.week_over_week
    if wow is None or wow.gap is None:
        return ""
    words = weekly_phrases(digest.language)
    reason = gap_reason(digest)
    if not wow.unavailable or "counts" in wow.unavailable:
        return reason[0].upper() + reason[1:] if digest.language == "en" else reason
    parts = words.list_sep.join(words.parts[p] for p in wow.unavailable)
    return words.missing.format(parts=parts, reason=reason)


def gap_reason(digest: Digest) -> str:
    """Why the comparison of ``digest`` is incomplete (``WeekOverWeek.gap``), unescaped; ``""`` when it is not."""
    wow = digest.week_over_week
    if wow is None or wow.gap is None:
        return ""
    counted = [w for w in wow.history[:-1] if w.pr_count is not None]
    first = counted[0].name if counted else digest.window.name
    words = weekly_phrases(digest.language)
    unit = words.period if is_week(digest.window) else words.period_range
    missing = f"{sum(w.pr_count is None for w in wow.history[:-1])} {unit}"
    key = "not_covered_all" if wow.gap == "not_covered" and not counted else wow.gap
    return words.gaps[key].format(first=first, missing=missing, unit=unit)


def label_change(digest: Digest, label: str) -> str:
    """``前 4 期平均 8.8，+5.3`` for a label of the trends (unescaped), or ``""``."""
    wow = digest.week_over_week
    if wow is None or "labels" in wow.unavailable:
        return ""
    for change in wow.labels:
        if change.name == label and change.average is not None:
            return weekly_phrases(digest.language).label_note.format(
                n=_n(wow, digest), average=number(change.average), delta=shown_delta(change))
    return ""
