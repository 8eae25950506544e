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
    evidence_kinds={"label": "标签", "title": "标题", "path": "文件", "diff": "改动", "body": "描述"},
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
    evidence_kinds={"label": "label", "title": "title", "path": "file", "diff": "change", "body": "description"},
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


def clarify_text(said: str, problem: str, language: Language) -> str:
    """The question back when a window cannot be read (``problem`` as
    :data:`bot.understand.windows.WindowProblem`); ``said`` is unescaped."""
    words = answer_phrases(language)
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
