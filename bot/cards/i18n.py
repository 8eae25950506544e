"""Fixed phrases of the rendered digest, in Chinese (default) and English.

Every renderer takes its section titles, badges and sentence templates from
here, keyed by ``Digest.language``, so the Markdown report, the Slack messages
and the Feishu cards say the same thing in the same words. Nothing here
escapes text: the phrases are ours, and the values put into the templates are
numbers, dates and repository names the caller has already made safe.

Dates: a :class:`~bot.models.Window` is half-open ``[start, end)``; the last
day printed is the day of the window's last instant in the window's time zone
(``end`` minus one day for the usual midnight-aligned windows).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.models import AnalysisStatus, Digest, Language, RecommendationLevel, Window

_WEEK_NAME = re.compile(r"^(?P<year>\d{4})-W(?P<week>\d{2})$")


@dataclass(frozen=True, slots=True)
class Phrases:
    """The fixed texts of one language; ``{…}`` fields are filled with ``str.format``."""

    week_title: str
    """ISO-week title: ``{year}``, ``{week}``, ``{first}``, ``{last}`` (short dates)."""
    range_title: str
    """Title of any other window: ``{first}``, ``{last}``."""
    short_date: str
    """``strftime`` pattern of the dates in titles."""
    highlights: str
    highlights_range: str
    risks: str
    full_report: str
    executive_summary: str
    key_changes: str
    key_changes_range: str
    trends: str
    key_pr_table: str
    top_key_prs: str
    """Title of the card's key-PR list: ``{shown}`` of ``{total}``."""
    suggestions: str
    label_view: str
    pending_title: str
    pending_placeholder: str
    unlabelled: str
    group_title: str
    """A label of the label view: ``{label}``, ``{count}``."""
    empty_report: str
    nothing: str
    """Body of a section that has no item."""
    continued: str
    """Suffix of a continuation message or card: ``{part}``, ``{total}``."""
    table_header: tuple[str, str, str, str]
    """Columns of the key-PR table: PR, title, key points, risks."""
    meta: str
    """``{repo}``, ``{first}``, ``{last}`` (ISO dates), ``{prs}``, ``{key_prs}``, ``{generated}``."""
    analysis_line: str
    """``{statuses}`` (``status_counts`` joined), ``{narrative}``."""
    pr_count: tuple[str, str]
    """A number of PRs, singular and plural: ``{count}``."""
    fallback_note: str
    """``{count}`` heuristic analyses that replaced a failed model call."""
    pending_note: str
    """``{n_prs}`` (:func:`n_prs`) whose analysis is not ready."""
    risk_item: str
    """``{title}``, ``{n_prs}``, ``{prs}`` (the PR numbers)."""
    trend_item: str
    """``{label}``, ``{n_prs}``."""
    hot_files: str
    """``{files}``."""
    hot_file: str
    """``{path}``, ``{n_prs}``."""
    pr_scores: str
    """``{importance}``, ``{insight}``."""
    minutes: str
    """``{minutes}``."""
    risks_prefix: str
    no_risks: str
    list_sep: str
    """Separator of items inside one sentence (、 / , )."""
    clause_sep: str
    """Separator of clauses in a table cell (； / ; )."""
    levels: Mapping[RecommendationLevel, str]
    statuses: Mapping[AnalysisStatus, str]
    narrative: Mapping[str, str]
    """Who wrote the narrative: ``heuristic`` or ``llm``."""
    full_report_button: str
    analyze_button: str
    subscribe_placeholder: str


ZH = Phrases(
    week_title="{year} 第 {week} 周 · {first} 至 {last} 周报",
    range_title="{first} 至 {last} 周报",
    short_date="%m-%d",
    highlights="本周亮点",
    highlights_range="本期亮点",
    risks="风险观察",
    full_report="完整周报",
    executive_summary="执行摘要",
    key_changes="本周重点变化",
    key_changes_range="本期重点变化",
    trends="模块与主题趋势",
    key_pr_table="重点 PR 速览",
    top_key_prs="重点 PR（前 {shown} / 共 {total}）",
    suggestions="后续建议",
    label_view="标签视图",
    pending_title="分析尚未完成的 PR",
    pending_placeholder="分析结果尚未生成",
    unlabelled="未分类",
    group_title="{label}（{count}）",
    empty_report="本周期内没有合并的 PR。",
    nothing="（无）",
    continued="（续 {part}/{total}）",
    table_header=("PR", "标题", "关键点", "风险"),
    meta="仓库：{repo} 周期：{first} 至 {last} 来源 PR：{prs} · 重点 PR：{key_prs} · 生成于 {generated}",
    analysis_line="分析：{statuses} · 摘要：{narrative}",
    pr_count=("{count} 个 PR", "{count} 个 PR"),
    fallback_note="其中 {count} 个为模型失败后的启发式回退",
    pending_note="{n_prs} 的分析结果尚未生成",
    risk_item="{title}：{n_prs}（{prs}）",
    trend_item="{label}：{n_prs}",
    hot_files="热点文件 {files}",
    hot_file="{path}（{n_prs}）",
    pr_scores="重要性 {importance}/10 · 洞察 {insight}/10",
    minutes="约 {minutes} 分钟",
    risks_prefix="风险：",
    no_risks="未发现明显风险",
    list_sep="、",
    clause_sep="；",
    levels={"close_read": "值得精读", "skim": "建议浏览", "skip": "可跳过"},
    statuses={"llm": "LLM 分析", "heuristic": "启发式分析", "pending": "待分析"},
    narrative={"llm": "LLM 撰写", "heuristic": "启发式生成"},
    full_report_button="完整报告",
    analyze_button="分析此 PR",
    subscribe_placeholder="订阅标签",
)

EN = Phrases(
    week_title="{year} week {week} · {first} – {last} digest",
    range_title="{first} – {last} digest",
    short_date="%b %d",
    highlights="Highlights",
    highlights_range="Highlights",
    risks="Risk observations",
    full_report="Full report",
    executive_summary="Executive summary",
    key_changes="Key changes",
    key_changes_range="Key changes",
    trends="Modules and trends",
    key_pr_table="Key PRs at a glance",
    top_key_prs="Key PRs (top {shown} of {total})",
    suggestions="Suggestions",
    label_view="Label view",
    pending_title="PRs still being analysed",
    pending_placeholder="Analysis not available yet",
    unlabelled="unlabelled",
    group_title="{label} ({count})",
    empty_report="No pull requests were merged in this period.",
    nothing="(none)",
    continued=" (continued {part}/{total})",
    table_header=("PR", "Title", "Key points", "Risks"),
    meta="Repo: {repo} Period: {first} to {last} PRs: {prs} · key PRs: {key_prs} · generated {generated}",
    analysis_line="Analysis: {statuses} · narrative: {narrative}",
    pr_count=("{count} PR", "{count} PRs"),
    fallback_note="{count} of them heuristic fallbacks after a model failure",
    pending_note="analysis of {n_prs} is not available yet",
    risk_item="{title}: {n_prs} ({prs})",
    trend_item="{label}: {n_prs}",
    hot_files="hot files {files}",
    hot_file="{path} ({n_prs})",
    pr_scores="importance {importance}/10 · insight {insight}/10",
    minutes="~{minutes} min",
    risks_prefix="Risks: ",
    no_risks="no notable risk found",
    list_sep=", ",
    clause_sep="; ",
    levels={"close_read": "worth a close read", "skim": "skim", "skip": "skip"},
    statuses={"llm": "LLM analysis", "heuristic": "heuristic analysis", "pending": "pending"},
    narrative={"llm": "written by the LLM", "heuristic": "heuristic"},
    full_report_button="Full report",
    analyze_button="Analyze this PR",
    subscribe_placeholder="Subscribe to a label",
)

_PHRASES: dict[Language, Phrases] = {"zh": ZH, "en": EN}


def phrases(language: Language) -> Phrases:
    """The phrase set of ``language`` (``zh`` or ``en``)."""
    return _PHRASES[language]


def is_week(window: Window) -> bool:
    """Whether ``window`` is an ISO week (``2026-W16``) rather than a date range."""
    return "-W" in window.name


def window_days(window: Window) -> tuple[date, date]:
    """First and last calendar day of ``window`` in its own time zone.

    The last day is the day of the last instant before the exclusive ``end``,
    so ``[2026-04-13T00:00+08:00, 2026-04-20T00:00+08:00)`` gives
    ``(2026-04-13, 2026-04-19)``.
    """
    zone = ZoneInfo(window.timezone)
    first = window.start.astimezone(zone).date()
    last = (window.end - timedelta(microseconds=1)).astimezone(zone).date()
    return first, max(first, last)


def digest_title(digest: Digest) -> str:
    """The report title, e.g. ``2026 第 16 周 · 04-13 至 04-19 周报``.

    An ISO-week window (``name`` like ``2026-W16``) gets year and week number;
    any other window only its dates (with the year when it spans two years).
    """
    words = phrases(digest.language)
    first, last = window_days(digest.window)
    pattern = words.short_date if first.year == last.year else "%Y-%m-%d"
    first_text, last_text = first.strftime(pattern), last.strftime(pattern)
    week = _WEEK_NAME.match(digest.window.name)
    if week:
        return words.week_title.format(year=week["year"], week=int(week["week"]), first=first_text, last=last_text)
    return words.range_title.format(first=first_text, last=last_text)


def format_generated(moment: datetime, timezone: str) -> str:
    """``moment`` as ``YYYY-MM-DD HH:MM`` in ``timezone``."""
    return moment.astimezone(ZoneInfo(timezone)).strftime("%Y-%m-%d %H:%M")


def meta_line(digest: Digest) -> str:
    """Repository, period, PR counts and generation time in one line (unescaped repo name)."""
    first, last = window_days(digest.window)
    return phrases(digest.language).meta.format(
        repo=digest.repo,
        first=first.isoformat(),
        last=last.isoformat(),
        prs=digest.stats.pr_count,
        key_prs=digest.stats.key_pr_count,
        generated=format_generated(digest.generated_at, digest.window.timezone),
    )


def analysis_line(digest: Digest) -> str:
    """Who wrote what: the count of each analysis status and the narrative source.

    E.g. ``分析：LLM 分析 30 · 启发式分析 5（其中 2 个为模型失败后的启发式回退） · 待分析 4 ·
    摘要：启发式生成`` — so a heuristic digest never passes for a model's work.
    """
    words = phrases(digest.language)
    counts: dict[AnalysisStatus, int] = {"llm": 0, "heuristic": 0, "pending": 0}
    fallbacks = 0
    for pr in digest.prs:
        status: AnalysisStatus = "pending" if pr.analysis is None else pr.analysis.status
        counts[status] += 1
        if pr.analysis is not None and pr.analysis.fallback_reason:
            fallbacks += 1
    parts: list[str] = []
    for status, count in counts.items():
        if not count:
            continue
        part = f"{words.statuses[status]} {count}"
        if status == "heuristic" and fallbacks:
            note = words.fallback_note.format(count=fallbacks)
            part += f"（{note}）" if digest.language == "zh" else f" ({note})"
        parts.append(part)
    return words.analysis_line.format(
        statuses=" · ".join(parts) or "-", narrative=words.narrative[digest.narrative_source]
    )


def n_prs(count: int, language: Language) -> str:
    """``3 个 PR`` / ``1 PR`` / ``3 PRs``."""
    singular, plural = phrases(language).pr_count
    return (singular if count == 1 else plural).format(count=count)


def level_name(level: RecommendationLevel, language: Language) -> str:
    """Reading recommendation as shown to people (``close_read`` → ``值得精读``)."""
    return phrases(language).levels[level]


def status_name(status: AnalysisStatus, language: Language) -> str:
    """Analysis status badge (``heuristic`` → ``启发式分析``)."""
    return phrases(language).statuses[status]


def minutes_text(minutes: int, language: Language) -> str:
    """Reading time, e.g. ``约 15 分钟`` / ``~15 min``."""
    return phrases(language).minutes.format(minutes=minutes)
