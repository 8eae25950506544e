"""Every fixed phrase the bot shows, in Chinese (default) and English: the one phrase module.

Three tables, each with both languages side by side: :class:`Phrases` (:func:`phrases`) for the
rendered digest, :class:`PRPhrases` (:func:`pr_phrases`) for the one-PR answer, and
:class:`ChatPhrases` (:func:`chat_phrases`) for the rest of a conversation — short replies, help,
subscriptions, button toasts, label alerts. (The words the digest's narrative is written in are
the digest core's, :mod:`bot.digest.texts`.)

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

from bot.models import AnalysisStatus, Digest, DigestPR, Language, RecommendationLevel, Window

_WEEK_NAME = re.compile(r"^(?P<year>\d{4})-W(?P<week>\d{2})$")


@dataclass(frozen=True, slots=True)
class Phrases:
    """The fixed texts of one language; ``{…}`` fields are filled with ``str.format``."""

    week_title: str
    """ISO-week title: ``{year}``, ``{week}``, ``{first}``, ``{last}`` (short dates)."""
    range_title: str
    range_title_long: str
    """A window longer than a week (a month): not a 周报."""
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
    risks_none: str
    """The risk observations when no PR carries a risk."""
    no_key_prs: str
    """The key-PR table when no PR reached the bar: ``{bar}``."""
    continued: str
    """Suffix of a continuation message or card: ``{part}``, ``{total}``."""
    table_header: tuple[str, str, str, str]
    """Columns of the key-PR table: PR, title, key points, risks."""
    meta: str
    """``{repo}``, ``{first}``, ``{last}`` (ISO dates), ``{prs}``, ``{key_prs}``, ``{generated}``, ``{config}``."""
    config_named: str
    """The metadata line's config part: ``{name}`` of the file."""
    no_config: str
    """The metadata line's config part without a file."""
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
    range_title_long="{first} 至 {last} 报告",
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
    risks_none="本期没有 PR 带有需要关注的风险。",
    no_key_prs="没有 PR 达到重点线（重要性 ≥ {bar}）。",
    continued="（续 {part}/{total}）",
    table_header=("PR", "标题", "关键点", "风险"),
    meta="仓库：{repo} 周期：{first} 至 {last} 来源 PR：{prs} · 重点 PR：{key_prs} · 生成于 {generated} · {config}",
    config_named="配置：{name}",
    no_config="无配置文件",
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
    range_title_long="{first} – {last} digest",
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
    risks_none="No PR carries a risk worth flagging.",
    no_key_prs="No PR reached the key bar (importance ≥ {bar}).",
    continued=" (continued {part}/{total})",
    table_header=("PR", "Title", "Key points", "Risks"),
    meta="Repo: {repo} Period: {first} to {last} PRs: {prs} · key PRs: {key_prs} · generated {generated} · {config}",
    config_named="config: {name}",
    no_config="no config",
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
    if digest.release:  # --release v0.7.1: the PRs first released in it
        since = digest.previous_release
        if digest.language == "zh":
            return f"{digest.release} 发布说明 · " + (f"自 {since} 以来" if since else f"{first_text} 至 {last_text}")
        return f"{digest.release} release notes · " + (f"since {since}" if since else f"{first_text} to {last_text}")
    week = _WEEK_NAME.match(digest.window.name)
    if week:
        return words.week_title.format(year=week["year"], week=int(week["week"]), first=first_text, last=last_text)
    template = words.range_title if (last - first).days < 7 else words.range_title_long
    return template.format(first=first_text, last=last_text)


def multi_repo_headline(digests: list[Digest], language: Language) -> str:
    """The headline of a channel that follows several repositories: ``本周 3 个仓库合并 112 个 PR；重点：verl
    #6046 标题、…`` (each repository's most important key PR), then one line per repository (its PRs and key
    PRs; its digest follows in the thread)."""
    total = sum(d.stats.pr_count for d in digests)
    picks = []
    for d in digests:
        if d.key_prs:
            top = d.pr(d.key_prs[0])
            title = top.title if len(top.title) <= 60 else top.title[:59] + "…"
            picks.append(f"{d.repo.rsplit('/', 1)[-1]} #{top.number} {title}")
    week = digests[0].window.name if digests else ""
    if language == "zh":
        head = f"{week}：{len(digests)} 个仓库合并 {total} 个 PR"
        head += ("；重点：" + "、".join(picks)) if picks else ""
        lines = [f"• {d.repo}：{d.stats.pr_count} 个 PR，重点 {d.stats.key_pr_count} 个" for d in digests]
        return "\n".join([head, *lines, "各仓库的周报在话题里。"])
    head = f"{week}: {len(digests)} repositories merged {total} PRs"
    head += ("; highlights: " + ", ".join(picks)) if picks else ""
    lines = [f"• {d.repo}: {d.stats.pr_count} PRs, {d.stats.key_pr_count} key" for d in digests]
    return "\n".join([head, *lines, "Each repository's digest is in the thread."])


_KIND_NAMES: dict[str, dict[str, str]] = {
    "zh": {"feat": "新功能", "fix": "修复", "refactor": "重构", "perf": "性能", "doc": "文档", "ci": "CI",
           "chore": "杂项", "test": "测试", "revert": "回滚"},
    "en": {"feat": "Features", "fix": "Fixes", "refactor": "Refactoring", "perf": "Performance", "doc": "Docs",
           "ci": "CI", "chore": "Chores", "test": "Tests", "revert": "Reverts"},
}
RELEASE_KINDS = ("feat", "perf", "fix", "refactor", "doc", "test", "ci", "chore", "revert")
"""The order of a release note's groups (change kinds, :data:`bot.models.ChangeType`)."""


def release_note_groups(digest: Digest) -> list[tuple[str, list[DigestPR]]]:
    """The release's PRs grouped by change kind (``新功能``, ``修复``, … in :data:`RELEASE_KINDS` order, merge
    order within a group; PRs not analysed yet last, under ``其他`` / ``other``); empty when the digest is not a
    release's."""
    if not digest.release:
        return []
    names = _KIND_NAMES[digest.language]
    groups: dict[str, list[DigestPR]] = {}
    for pr in digest.prs:
        kind = pr.analysis.change_type if pr.analysis is not None else ""
        groups.setdefault(kind, []).append(pr)
    other = "其他" if digest.language == "zh" else "other"
    ordered = [(names[k], groups[k]) for k in RELEASE_KINDS if k in groups]
    return ordered + ([(other, groups[""])] if "" in groups else [])


def format_generated(moment: datetime, timezone: str) -> str:
    """``moment`` as ``YYYY-MM-DD HH:MM`` in ``timezone``."""
    return moment.astimezone(ZoneInfo(timezone)).strftime("%Y-%m-%d %H:%M")


def meta_line(digest: Digest) -> str:
    """Repository, period, PR counts, generation time and the config file (its name, or "no config") in one
    line (unescaped repo name)."""
    first, last = window_days(digest.window)
    words = phrases(digest.language)
    return words.meta.format(
        repo=digest.repo,
        first=first.isoformat(),
        last=last.isoformat(),
        prs=digest.stats.pr_count,
        key_prs=digest.stats.key_pr_count,
        generated=format_generated(digest.generated_at, digest.window.timezone),
        config=words.config_named.format(name=digest.config_file) if digest.config_file else words.no_config,
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


def release_text(released_in: str | None, known: bool, language: Language) -> str:
    """Whether a merged PR is in a release: ``已发布于 v0.7.1`` / ``released in v0.7.1``, ``尚未发布`` /
    ``not released yet``; ``""`` when the source does not know the repository's releases."""
    if not known:
        return ""
    if released_in:
        return f"已发布于 {released_in}" if language == "zh" else f"released in {released_in}"
    return "尚未发布" if language == "zh" else "not released yet"


def minutes_text(minutes: int, language: Language) -> str:
    """Reading time, e.g. ``约 15 分钟`` / ``~15 min``."""
    return phrases(language).minutes.format(minutes=minutes)


# -- answers to what people ask: windows, comparisons, questions, the help (additive) ------------


@dataclass(frozen=True, slots=True)
class AnswerPhrases:
    """The texts of the replies to how people ask (windows, comparisons, questions, the help)."""

    window_week: str
    """An ISO week: ``{name}``, ``{first}``, ``{last}`` (``MM-DD``)."""
    window_range: str
    """Any other window: ``{first}``, ``{last}``."""
    window_echo: str
    """``{said}`` (the words as written), ``{window}`` (:func:`window_text`)."""
    so_far: str
    """``{window}``, ``{today}`` (``MM-DD``): the window has not ended."""
    empty_window: str
    """``{window}``."""
    latest_window: str
    """``{window}``, ``{date}`` (``YYYY-MM-DD``) of the last merge."""
    no_merges: str
    """The source holds no merged PR at all (``{repo}``)."""
    open_window: str
    """Button: ``{window}``."""
    clarify: str
    """``{said}``, ``{why}``, ``{examples}``."""
    clarify_why: Mapping[str, str]
    clarify_examples: str
    compare_title: str
    """``{prs}``."""
    compare_columns: tuple[str, str, str, str, str]
    """PR, verdict, reading time, importance, risks."""
    read_first: str
    """``{pr}``, ``{level}``, ``{importance}``, ``{minutes}``."""
    then_read: str
    """``{prs}``."""
    compare_pending: str
    """``{prs}`` whose analysis is not available yet."""
    compare_missing: str
    """``{prs}`` not in the source."""
    answer_title: str
    """``{window}``, ``{query}``."""
    answer_count: str
    """``{n_prs}`` found, ``{total}`` PRs searched."""
    answer_more: str
    """``{n}`` matches not listed."""
    answer_none: str
    """``{window}``, ``{query}``."""
    answer_none_all: str
    """``{terms}``, ``{counts}``."""
    term_count: str
    """``{term}``, ``{n_prs}``."""
    answer_common: str
    """``{term}``, ``{mentions}``, ``{total}``."""
    answer_label: str
    """``{label}``."""
    evidence_kinds: Mapping[str, str]
    matched: str
    """``{terms}``."""
    llm_note: str
    llm_dropped: str
    """``{n}`` claims dropped."""
    nearest_title: str
    nearest_more: str
    quote_open: str
    quote_close: str


ANSWER_ZH = AnswerPhrases(
    window_week="{name}（{first} – {last}）",
    window_range="{first} – {last}",
    window_echo="我把“{said}”理解为 {window}。",
    so_far="{window} 还没有结束：这是截至 {today} 已合并的 PR。",
    empty_window="{window} 没有合并的 PR。",
    latest_window="最近一个有合并 PR 的周是 {window}（最后一次合并在 {date}）。",
    no_merges="数据源里还没有 {repo} 合并的 PR。",
    open_window="查看 {window}",
    clarify="我没能确定“{said}”指哪段时间：{why}。可以这样写：{examples}。",
    clarify_why={
        "no_such_week": "ISO 周只有 W01 到 W53",
        "no_such_month": "月份只有 1 到 12",
        "no_such_date": "没有这一天",
        "several_windows": "这句话里有不止一个时间段",
        "week_range": "暂时只能按一周或按日期范围查看",
    },
    clarify_examples="2026-W16、第16周、上周、本月、4月13日到19日",
    compare_title="对比 {prs}",
    compare_columns=("PR", "结论", "时长", "重要性", "风险"),
    read_first="先读 {pr}：{level}，重要性 {importance}/10，{minutes}。",
    then_read="然后：{prs}。",
    compare_pending="{prs} 的分析结果尚未生成，排在最后。",
    compare_missing="没有找到 {prs}：数据源里没有这个编号的已合并 PR。",
    answer_title="{window} · 与“{query}”相关的 PR",
    answer_count="找到 {n_prs}（本期共 {total} 个 PR）",
    answer_more="另有 {n} 个匹配的 PR 未列出，换个更具体的说法可以缩小范围。",
    answer_none="{window} 没有与“{query}”相关的 PR。",
    answer_none_all="没有 PR 同时匹配 {terms}（{counts}）。",
    term_count="{term} {n_prs}",
    answer_common="“{term}”出现在本期 {mentions}/{total} 个 PR 里，太常见，只用来排序。",
    answer_label="只看带 {label} 标签的 PR",
    evidence_kinds={"label": "标签", "title": "标题", "path": "文件", "diff": "改动", "body": "描述", "risk": "风险",
                    "type": "类型"},
    matched="匹配：{terms}",
    llm_note="上面的概述由 LLM 根据列出的 PR 撰写，每条都注明了出处。",
    llm_dropped="另有 {n} 条没有注明本期 PR 出处的说法已删除。",
    nearest_title="没看懂这句话。你可能想问：",
    nearest_more="发送“帮助”查看全部用法。",
    quote_open="“",
    quote_close="”",
)

ANSWER_EN = AnswerPhrases(
    window_week="{name} ({first} – {last})",
    window_range="{first} – {last}",
    window_echo="I read “{said}” as {window}.",
    so_far="{window} is not over yet: these are the PRs merged so far (through {today}).",
    empty_window="No PRs were merged in {window}.",
    latest_window="The latest week with merged PRs is {window} (last merge on {date}).",
    no_merges="The source holds no merged PR of {repo} yet.",
    open_window="Open {window}",
    clarify="I could not tell which dates “{said}” means: {why}. Try for example {examples}.",
    clarify_why={
        "no_such_week": "ISO weeks run from W01 to W53",
        "no_such_month": "months run from 1 to 12",
        "no_such_date": "that day does not exist",
        "several_windows": "the message names more than one window",
        "week_range": "ask for one week or for a range of dates",
    },
    clarify_examples="2026-W16, week 16, last week, this month, April 13-19",
    compare_title="Comparing {prs}",
    compare_columns=("PR", "Verdict", "Time", "Importance", "Risks"),
    read_first="Read {pr} first: {level}, importance {importance}/10, {minutes}.",
    then_read="Then: {prs}.",
    compare_pending="{prs}: analysis not available yet, listed last.",
    compare_missing="Not found: {prs} (no merged PR with that number in the source).",
    answer_title="{window} · PRs about “{query}”",
    answer_count="{n_prs} found ({total} PRs in the window)",
    answer_more="{n} more matching PRs are not listed; a more specific question narrows it down.",
    answer_none="No PR of {window} matches “{query}”.",
    answer_none_all="No PR matches all of {terms} ({counts}).",
    term_count="{term} {n_prs}",
    answer_common="“{term}” occurs in {mentions} of {total} PRs: too common to narrow the answer, it only ranks.",
    answer_label="Only PRs labelled {label}",
    evidence_kinds={"label": "label", "title": "title", "path": "file", "diff": "change", "body": "description",
                    "risk": "risk", "type": "change type"},
    matched="matched: {terms}",
    llm_note="The summary above was written by the LLM from the PRs listed; every claim names its PRs.",
    llm_dropped="{n} more claims that cited no PR of this window were dropped.",
    nearest_title="I didn't understand that. Did you mean:",
    nearest_more="Send “help” for everything I understand.",
    quote_open="“",
    quote_close="”",
)

_ANSWER: dict[Language, AnswerPhrases] = {"zh": ANSWER_ZH, "en": ANSWER_EN}


def answer_phrases(language: Language) -> AnswerPhrases:
    """The answer texts of ``language``."""
    return _ANSWER[language]


def window_text(window: Window, language: Language) -> str:
    """``2026-W14（04-06 – 04-12）`` for an ISO week; ``2026-04-01 – 04-30`` for any other window
    (the year on both days when it spans two years)."""
    first, last = window_days(window)
    words = answer_phrases(language)
    if _WEEK_NAME.match(window.name):
        return words.window_week.format(name=window.name, first=first.strftime("%m-%d"), last=last.strftime("%m-%d"))
    end = last.strftime("%m-%d") if first.year == last.year else last.isoformat()
    return words.window_range.format(first=first.isoformat(), last=end)


def window_echo(said: str, window: Window, language: Language) -> str:
    """"I read 上上周 as 2026-W14 (04-06 – 04-12)." — ``said`` is the person's words (unescaped)."""
    return answer_phrases(language).window_echo.format(said=said, window=window_text(window, language))


def so_far_note(window: Window, now: datetime, language: Language) -> str | None:
    """"本周还没有结束：这是截至 04-22 已合并的 PR。" when ``now`` is inside ``window``, else ``None``."""
    zone = ZoneInfo(window.timezone)
    if not window.start <= now < window.end:
        return None
    today = now.astimezone(zone).strftime("%m-%d")
    return answer_phrases(language).so_far.format(window=window_text(window, language), today=today)


def empty_window_note(window: Window, language: Language) -> str:
    """"2026-W30（07-20 – 07-26）没有合并的 PR。\""""
    return answer_phrases(language).empty_window.format(window=window_text(window, language))


def latest_window_note(latest: Window, last_merge: datetime, language: Language) -> str:
    """"最近一个有合并 PR 的周是 2026-W34（08-17 – 08-23）（最后一次合并在 2026-08-22）。\""""
    day = last_merge.astimezone(ZoneInfo(latest.timezone)).date().isoformat()
    return answer_phrases(language).latest_window.format(window=window_text(latest, language), date=day)


_ASK_BACK: dict[Language, dict[str, str]] = {
    "zh": {
        "no_pr": "哪个 PR？请带上编号，例如“#6046 有啥风险”，或在我回答过某个 PR 的话题里接着问。",
        "no_context": "“{said}”是接着哪个问题问的？请在我回答的话题里接着问，或把周、标签或 PR 写完整，例如“上周 npu "
        "标签”。",
        "which_pr": "对得上好几个 PR：{said}。请说是哪一个（带编号）。",
        "unknown_ref": "我不知道“{said}”指的是哪段时间或哪件事（那是聊天之外的事）。请写周、日期、标签或 PR 编号，"
        "例如“W15 的周报”或“#6046 有啥风险”。",
        "compare_which": "要对比哪几个 PR？请带上编号，例如“对比 #6029 和 #6046”；也可以先问“这周 sglang 的 PR”，"
        "再从列表里挑编号。",
    },
    "en": {
        "no_pr": "Which PR? Add its number, e.g. “risks of #6046”, or ask in the thread of my answer about a PR.",
        "no_context": "What does “{said}” follow? Ask in the thread of my answer, or name the week, label or PR, "
                      "e.g. “npu label last week”.",
        "which_pr": "That fits several PRs: {said}. Which one (by number)?",
        "unknown_ref": "I don't know which time or thing “{said}” means (it happened outside this chat). Name the "
                       "week, dates, label or PR number, e.g. “digest for W15” or “risks of #6046”.",
        "compare_which": "Which PRs should I compare? Give their numbers, e.g. “compare #6029 and #6046”, or ask "
                         "“sglang PRs this week” first and pick numbers from the list.",
    },
}
"""Questions back that are not about a window (:class:`bot.understand.ClarifyIntent`'s other problems)."""


def clarify_text(said: str, problem: str, language: Language) -> str:
    """The question back when a window cannot be read (``problem`` as
    :data:`bot.understand.windows.WindowProblem`); ``said`` is unescaped."""
    words = answer_phrases(language)
    if problem in _ASK_BACK[language]:
        return _ASK_BACK[language][problem].format(said=said)
    why = words.clarify_why.get(problem, words.clarify_why["several_windows"])
    return words.clarify.format(said=said, why=why, examples=words.clarify_examples)


def window_notes(window: Window, *, spec: str | None, said: str | None, now: datetime,
                 language: Language) -> list[str]:
    """The lines a reply about ``window`` shows above its content (unescaped): the echo of a
    window the person named in words that depend on the day (``上上周``, ``本月``, ``W16``) and
    the "so far" of a window that has not ended. Explicit names (``2026-W16``) are not echoed.

    Args:
        window: the window the reply is about (laid out from ``spec``).
        spec: the intent's window spec (``None``: the door's default window, not echoed).
        said: the words that named it (the intent's ``said``).
        now: the current instant (aware).
        language: the reply language.
    """
    from bot.digest.window import spec_is_relative  # the renderers' phrases need no window rules otherwise

    notes = []
    if spec is not None and said and spec_is_relative(spec):
        notes.append(window_echo(said, window, language))
    if (so_far := so_far_note(window, now, language)) is not None:
        notes.append(so_far)
    return notes
@dataclass(frozen=True, slots=True)
class ChatPhrases:
    """Fixed texts of the chat replies, the buttons' toasts and the label alerts; ``{…}`` fields are
    filled with ``str.format``."""

    working: str
    failed: str
    rate_limited: str
    """``{minutes}``: a source (GitHub) keeps the answer waiting that long; it follows by itself."""
    label_title: str
    """``{label}``, ``{title}`` (the digest's title)."""
    label_meta: str
    """``{repo}``, ``{n_prs}``."""
    label_empty: str
    """``{label}``, ``{title}``."""
    subscribed: str
    """``{filter}`` (:func:`bot.filters.describe`), ``{repo}``."""
    subscribed_batch: str
    preview_adjust: str
    preview_keep: str
    preview_undo: str
    preview_kept: str
    """``{minutes}``: the batch window, added to ``subscribed``."""
    already_subscribed: str
    unsubscribed: str
    not_subscribed: str
    unsubscribed_all: str
    """``{n}``."""
    nothing_to_unsubscribe: str
    subscriptions_title: str
    no_subscriptions: str
    subscription_item: str
    """``{filter}``, ``{repo}``."""
    from_config: str
    github_linked: str
    """``{handle}``."""
    github_paths: str
    """``{repo}``, ``{file}``, ``{paths}``."""
    github_no_paths: str
    """``{repo}``, ``{handle}``."""
    personal_on: str
    """``{when}``, ``{filters}``."""
    personal_on_all: str
    """``{when}``."""
    personal_already_on: str
    """``{when}``."""
    personal_off: str
    personal_not_on: str
    my_digest_empty: str
    days: tuple[str, ...]
    """Monday … Sunday, as ``{when}`` says them."""
    help_title: str
    help_items: tuple[str, ...]
    help_commands: str
    help_repo: str
    """``{repo}``."""
    error: str
    """``{message}``."""
    full_report_in_thread: str
    """完整报告 pressed under a thread that has it already."""
    already_in_thread: str
    """分析此 PR pressed under a thread that has that analysis already."""
    no_more: str
    invite_for_rest: str
    """``{n}`` messages could not be sent."""
    toast_full_report: str
    toast_analyze: str
    """``{number}``."""
    toast_unknown: str
    alert_importance: str
    """``{n}``."""
    alert_more: str
    """``{n}`` more risks."""
    alert_merged: str
    """``{when}``."""
    alert_open: str
    alert_reason: str


CHAT: Mapping[Language, ChatPhrases] = {
    "zh": ChatPhrases(
        working="生成中…",
        failed="抱歉，这次没能回答（出了点问题），请稍后再问一次。",
        rate_limited="GitHub 限流中，约 {minutes} 分钟后回答（不用再问，答案会自动发到这里）。",
        label_title="{label} · {title}",
        label_meta="仓库：{repo} · {n_prs}",
        label_empty="{title}没有带 {label} 标签的 PR。",
        subscribed="已订阅 {repo}：{filter}。符合的 PR 合并后会在这里提醒",
        subscribed_batch="（每 {minutes} 分钟最多一条消息，列出这段时间合并的全部 PR）",
        preview_adjust="太多或太少？说“退订 {filter}”撤销，或换个条件重新订阅（如加上 -label:ci 排除）。",
        preview_keep="保留",
        preview_undo="撤销",
        preview_kept="好的，保留这个订阅。",
        already_subscribed="已经订阅过 {repo}：{filter}。",
        unsubscribed="已取消订阅 {repo}：{filter}。",
        not_subscribed="没有这个订阅（{repo}：{filter}），无需取消。发送“我的订阅”查看现有的订阅。",
        unsubscribed_all="已取消本会话的全部 {n} 个订阅。",
        nothing_to_unsubscribe="本会话没有订阅，无需取消。",
        subscriptions_title="本会话的订阅",
        no_subscriptions=("还没有订阅。发送“订阅 npu rollout -ci”、“订阅 path:verl/trainer/**”或 "
                          "`/prhub subscribe npu` 订阅。"),
        subscription_item="{filter}（{repo}）",
        from_config="（配置文件）",
        github_linked="记住了：你的 GitHub 账号是 {handle}。现在可以订阅 path:@me（CODEOWNERS 里你负责的路径）。",
        github_paths="在 {repo} 的 {file} 里，你负责：{paths}",
        github_no_paths="{repo} 的 CODEOWNERS 里还没有分给 @{handle} 的路径。",
        personal_on=("好的：每{when}（按你的时区）私信发你的周报：你订阅的 PR（{filters}），先读哪个、"
                     "本周的阅读预算，以及其余合并的 PR 一行带过。"),
        personal_on_all=("好的：每{when}（按你的时区）私信发你的周报。你还没有订阅，周报会列出全部 PR；"
                         "发送“订阅 path:你的目录/**”之类缩小范围。"),
        personal_already_on="你的周报已经开着：每{when}（按你的时区）。",
        personal_off="已停止每周的个人周报。",
        personal_not_on="你没有开启每周的个人周报。发送“每周给我发我的周报”开启。",
        my_digest_empty="没有可显示的周报。",
        days=("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
        help_title="我能做什么",
        help_items=(
            "`本周周报` / `上上周周报` / `第16周周报` / `4月13日到19日的周报` — 周报（任意一周或一段日期）",
            "`PR #6046 值得读吗` / `6046 这个 PR 讲了什么` / PR 链接 — 一个 PR 值不值得读、做了什么、从哪里读起",
            "`#6046 和 #6029 哪个更值得读` / `对比 6046 6029` — 几个 PR 并排比较，先读哪个",
            "`npu 标签` / `上周 trainer 有哪些重点 PR` / `npu 标签 W16` — 某个标签在一段时间里的 PR 和阅读建议",
            "`本月合并了哪些 PR` / `谁贡献最多` — 一段时间合并的 PR、按 PR 数排的作者",
            "`哪些 PR 改了 rollout 的配置？` / `W16 有没有改 megatron 的 PR` — 按标签、路径、标题、描述和改动查，"
            "列出依据",
            "`订阅 npu rollout -ci` / `订阅 path:verl/trainer/** -author:dependabot` / `退订 npu` / `退订全部` / "
            "`我的订阅` — 合并提醒（同一会话每几分钟最多一条消息）",
            "`我的 GitHub 是 NAME` 后 `订阅 path:@me` — CODEOWNERS 里你负责的路径",
            "`每周给我发我的周报` / `我的周报` — 只看你订阅的部分，附阅读预算",
        ),
        help_commands=(
            "斜杠命令：`/prhub digest [时间]`、`/prhub pr N`、`/prhub compare N M`、`/prhub label L [时间]`、"
            "`/prhub merged [时间]`、`/prhub ask 问题`、`/prhub subscribe 条件`、`/prhub unsubscribe 条件|all`、"
            "`/prhub subscriptions`、`/prhub help`"
        ),
        help_repo="本频道默认仓库：{repo}（消息里写 `owner/name` 可换成别的仓库）",
        error="出错了：{message}",
        full_report_in_thread="完整报告已在这条消息的话题里",
        already_in_thread="完整内容已经在这条消息的话题里了。",
        no_more="这份周报只有这一条消息。",
        invite_for_rest=(
            "还有 {n} 条消息没能发出：把我邀请进本频道（`/invite @prhub`）后再发一次命令，后续内容会接在话题里。"
        ),
        toast_full_report="正在发送完整报告…",
        toast_analyze="正在分析 PR #{number}…",
        toast_unknown="这个按钮已失效",
        alert_importance="重要性 {n}/10",
        alert_more="另有 {n} 项",
        alert_merged="合并于 {when}",
        alert_open="查看 PR",
        alert_reason="理由：",
    ),
    "en": ChatPhrases(
        working="Working on it…",
        failed="Sorry, I could not answer this time (something went wrong); please ask again in a moment.",
        rate_limited="GitHub is rate-limiting us; the answer comes in about {minutes} min (no need to ask again).",
        label_title="{label} · {title}",
        label_meta="Repository: {repo} · {n_prs}",
        label_empty="No PR with the {label} label in {title}.",
        subscribed="Subscribed to {repo}: {filter}. Matching PRs will be announced here when merged",
        subscribed_batch=" (at most one message every {minutes} minutes, listing every PR merged meanwhile)",
        preview_adjust="Too many or too few? Say \"unsubscribe {filter}\" to undo, or subscribe again with "
                       "another filter (e.g. add -label:ci).",
        preview_keep="Keep",
        preview_undo="Undo",
        preview_kept="Kept.",
        already_subscribed="Already subscribed to {repo}: {filter}.",
        unsubscribed="Unsubscribed from {repo}: {filter}.",
        not_subscribed="There was no such subscription ({repo}: {filter}). Send “my subscriptions” to see them.",
        unsubscribed_all="Removed all {n} subscriptions of this conversation.",
        nothing_to_unsubscribe="This conversation has no subscriptions.",
        subscriptions_title="Subscriptions of this conversation",
        no_subscriptions=("No subscriptions yet. Send “subscribe npu rollout -ci”, “subscribe path:src/core/**” or "
                          "`/prhub subscribe npu` to add one."),
        subscription_item="{filter} ({repo})",
        from_config=" (config file)",
        github_linked=("Got it: your GitHub handle is {handle}. You can now subscribe to path:@me "
                       "(your CODEOWNERS paths)."),
        github_paths="In {file} of {repo} you own: {paths}",
        github_no_paths="CODEOWNERS of {repo} gives @{handle} no paths yet.",
        personal_on=("Done: every {when} (your time zone) I will DM you your digest: the PRs you follow ({filters}), "
                     "what to read first, the week's reading budget, and one line for the rest."),
        personal_on_all=("Done: every {when} (your time zone) I will DM you your digest. You follow nothing yet, so it "
                         "lists every PR; narrow it with “subscribe path:your/dir/**”."),
        personal_already_on="Your digest is on already: every {when} (your time zone).",
        personal_off="Your weekly digest is off.",
        personal_not_on="Your weekly digest was not on. Send “send me my weekly digest” to start it.",
        my_digest_empty="There is no digest to show.",
        days=("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
        help_title="What I understand",
        help_items=(
            "`digest` / `digest for the week before last` / `week 16 digest` / `digest April 13-19` — the digest "
            "of any week or dates",
            "`is PR 6046 worth reading?` / `what does PR 6046 do` / a PR link — one PR: worth reading, what it does, "
            "where to start",
            "`compare #6046 and #6029` / `6046 vs 6029, which first?` — PRs side by side, which to read first",
            "`label npu` / `key trainer PRs last week` / `npu W16` — one label's PRs of a window with reading advice",
            "`what merged this month` / `top contributors last week` — a window's PRs, its authors by PR count",
            "`which PRs touched fully_async last week?` — searched in labels, paths, titles, descriptions and diffs, "
            "with what matched",
            "`subscribe npu rollout -ci` / `subscribe path:src/core/** -author:dependabot` / `unsubscribe npu` / "
            "`unsubscribe all` / `my subscriptions` — merge alerts (at most one message every few minutes)",
            "`my GitHub is NAME`, then `subscribe path:@me` — the paths CODEOWNERS gives you",
            "`send me my weekly digest` / `my digest` — only what you follow, with a reading budget",
        ),
        help_commands=(
            "Slash commands: `/prhub digest [when]`, `/prhub pr N`, `/prhub compare N M`, `/prhub label L [when]`, "
            "`/prhub merged [when]`, `/prhub ask QUESTION`, `/prhub subscribe FILTER`, "
            "`/prhub unsubscribe FILTER|all`, `/prhub subscriptions`, `/prhub help`"
        ),
        help_repo="This channel's repository: {repo} (name `owner/name` in a message for another one)",
        error="Sorry, that failed: {message}",
        full_report_in_thread="The full report is already in this thread",
        already_in_thread="The rest is already in this message's thread.",
        no_more="This digest has no more messages.",
        invite_for_rest=(
            "{n} more messages could not be sent: invite me to this channel (`/invite @prhub`) and ask again, "
            "the rest will follow in a thread."
        ),
        toast_full_report="Sending the full report…",
        toast_analyze="Analysing PR #{number}…",
        toast_unknown="This button no longer works",
        alert_importance="importance {n}/10",
        alert_more="{n} more",
        alert_merged="merged {when}",
        alert_open="Open PR",
        alert_reason="Why: ",
    ),
}


def chat_phrases(language: Language) -> ChatPhrases:
    """The chat, toast and alert texts of ``language``."""
    return CHAT[language]


@dataclass(frozen=True, slots=True)
class PRPhrases:
    """The fixed texts of the one-PR answer in one language (``str.format`` fields in braces)."""

    title: str
    """``{number}``, ``{verdict}`` (a level name or the pending placeholder)."""
    facts: str
    """``{repo}``, ``{author}``, ``{merged}``, ``{files}`` (:attr:`files`), ``{additions}``, ``{deletions}``."""
    files: tuple[str, str]
    """A number of files, singular and plural: ``{count}``."""
    verdict: str
    """``{level}``, ``{minutes}``."""
    reason: str
    """``{reason}``."""
    summary: str
    risks: str
    evidence: str
    """``{items}`` (the evidence, escaped and joined)."""
    focus: str
    key_points: str
    labels: str
    analysis: str
    analyzer: str
    """``{status}``, ``{analyzer}``."""
    coverage: str
    """``{files_seen}``, ``{files_total}``, ``{lines_seen}``, ``{lines_total}``."""
    left_out: str
    """``{files}``."""
    left_out_item: str
    """``{path}``, ``{reason}``."""
    left_out_reasons: Mapping[str, str]
    fallback: str
    """``{reason}``."""
    pending_body: str
    more: str
    """Marker of list items not shown: ``{count}``."""
    shortened: str
    """Note on a shortened answer: ``{number}``."""


PR_ZH = PRPhrases(
    title="PR #{number} · {verdict}",
    facts="{repo} · 作者 {author} · 合并于 {merged} · {files} +{additions}/-{deletions}",
    files=("{count} 个文件", "{count} 个文件"),
    verdict="结论：{level} · {minutes}",
    reason="理由：{reason}",
    summary="做了什么",
    risks="风险",
    evidence="依据：{items}",
    focus="从哪里开始读",
    key_points="关键点",
    labels="标签",
    analysis="分析说明",
    analyzer="{status}（{analyzer}）",
    coverage="覆盖：文件 {files_seen}/{files_total} · 改动行 {lines_seen}/{lines_total}",
    left_out="未读文件：{files}",
    left_out_item="{path}（{reason}）",
    left_out_reasons={
        "generated": "生成文件", "binary": "二进制", "lock_file": "锁文件", "too_large": "过大",
        "token_budget": "超出 token 预算", "no_patch": "无 diff",
    },
    fallback="模型分析失败，改用启发式分析：{reason}",
    pending_body="这个 PR 的分析还没有完成（仍在分析，或模型暂时不可用），稍后再问一次即可。",
    more="……另有 {count} 项",
    shortened="内容较长，这里有所缩略；完整分析见 Markdown 版本（prhub pr {number}）。",
)

PR_EN = PRPhrases(
    title="PR #{number} · {verdict}",
    facts="{repo} · by {author} · merged {merged} · {files} +{additions}/-{deletions}",
    files=("{count} file", "{count} files"),
    verdict="Verdict: {level} · {minutes}",
    reason="Why: {reason}",
    summary="What it does",
    risks="Risks",
    evidence="Evidence: {items}",
    focus="Where to start",
    key_points="Key points",
    labels="Labels",
    analysis="About this analysis",
    analyzer="{status} ({analyzer})",
    coverage="Coverage: files {files_seen}/{files_total} · changed lines {lines_seen}/{lines_total}",
    left_out="Not read: {files}",
    left_out_item="{path} ({reason})",
    left_out_reasons={
        "generated": "generated", "binary": "binary", "lock_file": "lock file", "too_large": "too large",
        "token_budget": "over the token budget", "no_patch": "no diff",
    },
    fallback="the model failed, heuristic analysis instead: {reason}",
    pending_body="The analysis of this PR is not ready yet (still running, or the model is unavailable); "
    "ask again in a while.",
    more="… and {count} more",
    shortened="Long content was shortened here; the full analysis is in the Markdown version (prhub pr {number}).",
)

PR: Mapping[Language, PRPhrases] = {"zh": PR_ZH, "en": PR_EN}


def pr_phrases(language: Language) -> PRPhrases:
    """The one-PR phrase set of ``language``."""
    return PR[language]


@dataclass(frozen=True, slots=True)
class ErrorPhrases:
    """What a person reads when a request fails: what went wrong and what to do, never a server
    path or an exception's text (those go to the log)."""

    pr_not_found: str
    """``{number}``, ``{repo}``."""
    unknown_repo: str
    """``{repo}``."""
    no_repo: str
    window: str
    source: str
    """``{repo}``."""
    rate_limited: str
    """``{minutes}``."""
    other: str


ERRORS_ZH = ErrorPhrases(
    pr_not_found="没有找到 PR #{number}：{repo} 的数据里没有这个编号的已合并 PR（可能还没合并，或属于别的仓库）。"
                 "请检查编号，或写成 owner/name#{number} 指定仓库。",
    unknown_repo="数据源里没有仓库 {repo}。请检查名字（owner/name），或问管理员这个频道绑定了哪个仓库。",
    no_repo="这个频道还没有绑定仓库：在消息里写上 owner/name，或请管理员在配置里绑定（[channels]）。",
    window="“{window}”这个时间读不懂或不存在。可以这样写：2026-W16、第16周、上周、本月、4月13日到19日。",
    source="暂时读不到 {repo} 的数据。请稍后再试；一直这样的话请告诉管理员（详情在机器人的日志里）。",
    rate_limited="GitHub 的请求额度暂时用完了，请 {minutes} 分钟后再试。",
    other="没能完成这个请求。请稍后再试；一直这样的话请告诉管理员（详情在机器人的日志里）。",
)

ERRORS_EN = ErrorPhrases(
    pr_not_found="PR #{number} not found: {repo} has no merged PR with that number in my data (it may not be merged "
                 "yet, or belong to another repository). Check the number, or write owner/name#{number}.",
    unknown_repo="The source holds no repository {repo}. Check the name (owner/name), or ask an admin which "
                 "repository this channel is bound to.",
    no_repo="No repository is bound to this channel: name one as owner/name in the message, or ask an admin to bind "
            "one in the config ([channels]).",
    window="I could not read the time “{window}”, or it does not exist. Try for example 2026-W16, week 16, "
           "last week, this month, April 13-19.",
    source="I cannot read the data of {repo} right now. Please try again later; if it persists, tell an admin "
           "(the details are in the bot's log).",
    rate_limited="GitHub's request quota is used up for now; try again in {minutes} minutes.",
    other="I could not complete that request. Please try again later; if it persists, tell an admin (the details "
          "are in the bot's log).",
)


def bind_hint(channel: str, language: Language) -> str:
    """How an admin binds channel ``channel`` (``platform:id``) to a repository, for the first mention in an
    unbound channel; the lines of TOML to add name the channel itself."""
    toml = f'[channels."{channel}"]\nrepo = "owner/name"'
    if language == "en":
        return (f"This channel is not bound to a repository yet, so I cannot answer about PRs here. An admin binds "
                f"it by adding these lines to prhub.toml and restarting the bot (prhub config check checks the "
                f"file first):\n{toml}\nOr set PRHUB_DEFAULT_REPO=owner/name for every channel without a binding.")
    return (f"这个频道还没有绑定仓库，所以我暂时回答不了关于 PR 的问题。管理员在 prhub.toml 里加上下面两行，"
            f"再重启机器人即可"
            f"（可以先用 prhub config check 检查配置）：\n{toml}\n或者设置 PRHUB_DEFAULT_REPO=owner/name，"
            f"作为所有未绑定频道的默认仓库。")


def error_phrases(language: Language) -> ErrorPhrases:
    """The error texts of ``language``."""
    return ERRORS_EN if language == "en" else ERRORS_ZH


def error_text(exc: Exception, language: Language, *, repo: str | None = None, number: int | None = None,
               window: str | None = None) -> str:
    """One line for people about ``exc`` (a :class:`~bot.errors.PrhubError`) in ``language``: what went
    wrong and what to do. Bilingual errors (filters, CODEOWNERS) give their own message; every other
    error a fixed text by its kind, so no server path or exception text reaches a chat.

    Args:
        exc: the error.
        language: the reply language.
        repo: the repository asked about (``owner/name``), when known.
        number: the PR number asked about, when known.
        window: the window as asked (a spec or a window's name), when known.
    """
    from bot import errors  # the phrase table needs the error kinds only here

    words = error_phrases(language)
    said = getattr(exc, "message", None)
    if isinstance(exc, errors.FilterError | errors.CodeownersError) and callable(said):
        return str(said(language))
    name = repo or "?"
    if isinstance(exc, errors.ReleaseError):
        return exc.message(language)
    if isinstance(exc, errors.PRNotFoundError):
        return words.pr_not_found.format(number=number if number is not None else "?", repo=name)
    if isinstance(exc, errors.UnknownRepoError):
        return words.unknown_repo.format(repo=name)
    if isinstance(exc, errors.WindowError):
        return words.window.format(window=window or "?")
    if isinstance(exc, errors.RateLimitError):
        return words.rate_limited.format(minutes=max(1, round(exc.wait_s / 60)))
    if isinstance(exc, errors.SourceError):
        text = str(exc)
        if repo is None and ("no repository" in text or "several" in text or "holds" in text):
            return words.no_repo
        return words.source.format(repo=name)
    return words.other


@dataclass(frozen=True, slots=True)
class AskPhrases:
    """The texts of the window's questions beyond :class:`AnswerPhrases`: the merged PRs, their authors,
    the window used when none was named, a press that was already answered."""

    default_window: str
    """``{window}``: no window was named, so the latest week with merged PRs is used."""
    merged_title: str
    """``{window}``."""
    merged_count: str
    """``{n_prs}``, ``{key}`` key PRs."""
    authors_title: str
    """``{window}``."""
    authors_count: str
    """``{people}`` authors, ``{n_prs}``."""
    author_line: str
    """``{author}``, ``{n_prs}``, ``{prs}``."""
    more_prs: str
    """``{n}`` PRs not listed."""
    working: str
    window_in_thread: str
    only_you: str


ASK_ZH = AskPhrases(
    default_window="没有指定时间，按最近一个有合并 PR 的周 {window} 回答。",
    merged_title="{window} 合并的 PR",
    merged_count="共 {n_prs}，其中重点 PR {key} 个；按重要性排列。",
    authors_title="{window} 的贡献者",
    authors_count="{people} 位作者合并了 {n_prs}；按 PR 数排列。",
    author_line="{author} · {n_prs}：{prs}",
    more_prs="另有 {n} 个 PR 未列出。",
    working="处理中…",
    window_in_thread="这段时间的回答已经在话题里了。",
    only_you="回答已发给你（只有你能看到）。",
)

ASK_EN = AskPhrases(
    default_window="No time was named: answering for the latest week with merged PRs, {window}.",
    merged_title="PRs merged in {window}",
    merged_count="{n_prs} in all, {key} of them key PRs; most important first.",
    authors_title="Contributors of {window}",
    authors_count="{people} authors merged {n_prs}; most PRs first.",
    author_line="{author} · {n_prs}: {prs}",
    more_prs="{n} more PRs are not listed.",
    working="Working on it…",
    window_in_thread="The answer for that window is already in the thread.",
    only_you="The answer went to you alone.",
)


def ask_phrases(language: Language) -> AskPhrases:
    """The question texts of ``language``."""
    return ASK_EN if language == "en" else ASK_ZH
