"""``prhub pr N``: the analysis of one pull request — the answer to "PR #6046 值得读吗".

::

    prhub pr N --source jsonl:PATH [--repo OWNER/NAME] [--lang zh|en]
               [--format markdown|json|slack|feishu] [--out FILE] [--explain]

``N`` is ``6046``, ``#6046`` or the PR's address
(``https://github.com/OWNER/NAME/pull/6046``; then the repository comes from
it). The PR is read from the source first: an unknown number ends with one
line ``error: PR #N not found in this source (…)`` and exit code 1, before any
analysis. The analysis sees the PRs merged in the same ISO week (in the
configured time zone) as the weekly digest does, so both give the same verdict.

``--explain`` adds how the heuristic judgement came about: each fact read from the PR (its
feature value), the points of importance and of verdict score it moved, the repository calibration, and
where the totals fall (:func:`bot.digest.judgement.explain`); as a section of the Markdown answer, or as
``explanation`` in the JSON one.

stdout carries only the answer (or nothing with ``--out``); a one-line summary
and errors go to stderr; every :class:`~bot.errors.PrhubError` ends the
command with one line and exit code 1.
"""

from __future__ import annotations

import json
import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from bot.commands.common import (
    ConfigOption,
    LangOption,
    SourceOption,
    check_source_spec,
    cli_language,
    fail,
    run,
    warner,
)
from bot.errors import PrhubError, PRNotFoundError, UsageError

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.digest.judgement import Judgement
    from bot.models import DigestPR, Language, PullRequest, Window
    from bot.sources.base import PRSource

_stderr = Console(stderr=True)

_NUMBER = re.compile(r"^#?\s*(\d+)$")
_PR_URL = re.compile(
    r"^https?://[^/\s]+/(?P<repo>[^/\s]+/[^/\s]+?)(?:/-)?/(?:pull|pulls|merge_requests)/(?P<number>\d+)"
    r"(?:[/?#]\S*)?$",
    re.IGNORECASE,
)


class PRFormat(StrEnum):
    """What ``prhub pr`` writes."""

    markdown = "markdown"
    json = "json"
    slack = "slack"
    feishu = "feishu"


def register(app: typer.Typer) -> None:
    """Add the ``pr`` command to ``app``."""
    app.command("pr")(pr)


def parse_pr_ref(ref: str) -> tuple[str | None, int]:
    """The repository (``None`` unless ``ref`` is an address) and number of a PR reference.

    Accepts ``6046``, ``#6046`` and ``https://HOST/OWNER/NAME/pull/6046`` (also
    ``/pulls/`` and GitLab's ``/-/merge_requests/``, with any trailing path,
    query or fragment).

    Raises:
        UsageError: ``ref`` is none of these, or the number is 0.
    """
    text = ref.strip()
    match = _NUMBER.match(text)
    repo: str | None = None
    if match is None:
        url = _PR_URL.match(text)
        if url is None:
            raise UsageError(f"cannot read {ref!r} as a PR: expected a number (6046, #6046) or a PR URL",
                             zh=f"读不懂 PR {ref!r}：应为编号（6046、#6046）或 PR 地址")
        repo, digits = url["repo"], url["number"]
    else:
        digits = match[1]
    number = int(digits)
    if number < 1:
        raise UsageError(f"PR numbers start at 1, got {ref!r}", zh=f"PR 编号从 1 开始，收到的是 {ref!r}")
    return repo, number


def pr(
    ref: Annotated[str, typer.Argument(metavar="N", show_default=False,
                                       help="PR number (6046 or '#6046') or the PR's URL.")],
    source: SourceOption = None,
    repo: Annotated[
        str | None,
        typer.Option(metavar="OWNER/NAME",
                     help="Repository owner/name; may be left out when N is a URL or the source holds only one."),
    ] = None,
    lang: LangOption = None,
    fmt: Annotated[PRFormat, typer.Option("--format", metavar="FORMAT",
                                          help="markdown, json, slack or feishu.")] = PRFormat.markdown,
    out: Annotated[Path | None, typer.Option(metavar="FILE", help="Write to this file instead of stdout.")] = None,
    config: ConfigOption = None,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Also print each fact the judgement read and how much it moved importance and verdict.",
    )] = False,
) -> None:
    """Is PR N worth reading? Its analysis: verdict, what it does, risks, where to start.

    Example: prhub pr 6046 --source jsonl:examples/verl-2026-W16.jsonl
    """

    from bot.config import load_settings, settings_source
    from bot.sources.base import default_source_spec

    language = cli_language(lang, config)
    try:
        settings = load_settings(config=config, language=lang)
        language = settings.language
        url_repo, number = parse_pr_ref(ref)
        if url_repo and repo and url_repo.lower() != repo.strip().lower():
            raise UsageError(f"the URL names {url_repo} but --repo says {repo.strip()}",
                             zh=f"地址里的仓库是 {url_repo}，但 --repo 是 {repo.strip()}")
        wanted = repo or url_repo
        if explain and fmt not in (PRFormat.markdown, PRFormat.json):
            raise UsageError("--explain goes with --format markdown or json",
                             zh="--explain 只能和 --format markdown 或 json 一起用")
        spec = check_source_spec(default_source_spec(source, wanted, settings))
        name, item, why = run(_answer(settings, spec, wanted, number, explain=explain))
        text = _render(item, fmt, repo=name, language=settings.language, timezone=settings.timezone)
        if why is not None:
            text = _with_explanation(text, fmt, why, settings.language)
    except PrhubError as exc:
        raise fail(exc, language) from exc
    summary = f"{name} #{number}: {_verdict(item)} · config {settings_source(settings)}"
    if out is None:
        sys.stdout.write(text)
        _stderr.print(Text(summary), highlight=False, soft_wrap=True)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(PrhubError(f"cannot write {out}: {exc.strerror}", zh=f"无法写入 {out}：{exc.strerror}"),
                   language) from exc
    _stderr.print(Text(f"wrote {out} · {summary}"), highlight=False, soft_wrap=True)


async def _answer(settings: Settings, spec: str, wanted: str | None, number: int, *,
                  explain: bool = False) -> tuple[str, DigestPR, Judgement | None]:
    """The repository's name, PR ``number``'s analysis, from the process's services (:mod:`bot.app`):
    the heuristic, or with ``PRHUB_LLM_MODEL`` set the LLM's (from the cache when the digest already
    analysed this PR; LLM usage goes to stderr; an unusable model gives the heuristic, said so) — and with
    ``explain`` the heuristic's judgement of it in the same context, to print what moved it."""
    import asyncio

    from bot.app import open_services
    from bot.sources.base import canonical_repo

    async with open_services(settings, store="cache" if settings.llm_model else "memory", warn=warner(_stderr),
                             on_fallback=warner(_stderr)) as services:
        pr_source = services.channels.source(spec)
        name = canonical_repo(wanted or settings.default_repo, await asyncio.to_thread(pr_source.repos))
        found = await asyncio.to_thread(_pull_request, pr_source, name, number)
        week = await asyncio.to_thread(_week_prs, pr_source, found, settings.timezone)
        history = await services.digests.earlier_records(pr_source, found.repo, _week_of(found, settings.timezone))
        item = await services.digests.pr(found, window_prs=week, history=history)
        judgement = None
        if explain:
            from bot.digest.heuristic import HeuristicAnalyzer
            from bot.digest.service import pr_context

            context = pr_context(found, settings=settings, window_prs=week, history=history)
            judgement = HeuristicAnalyzer().judge(found, context)
        if (usage := services.digests.usage()) is not None:
            from bot.digest.usage import describe_usage

            _stderr.print(Text(describe_usage(usage)), highlight=False, soft_wrap=True)
    return name, item, judgement


def _with_explanation(text: str, fmt: PRFormat, judgement: Judgement, language: Language) -> str:
    """``text`` (the answer in ``fmt``) with the judgement's explanation: a Markdown section, or the JSON
    answer's ``explanation`` (intercept, contributions, offset, totals, verdict cuts)."""
    from bot.digest.judgement import explain, shipped_model

    if fmt is PRFormat.json:
        model = shipped_model()
        data = json.loads(text)
        data["explanation"] = {
            "intercept": model.importance_intercept,
            "contributions": [{"feature": c.name, "value": c.value, "importance": round(c.importance, 4)}
                              for c in judgement.contributions],
            "repository_offset": round(judgement.offset, 4),
            "importance_score": round(judgement.importance_score, 4), "importance": judgement.importance,
            "verdict": judgement.verdict,
            "skim_from": model.verdict_cuts[0], "close_read_from": model.verdict_cuts[1],
        }
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    head = "## 判断依据（启发式）" if language == "zh" else "## Why this judgement (heuristic)"
    return text.rstrip("\n") + f"\n\n{head}\n\n```\n" + "\n".join(explain(judgement, language)) + "\n```\n"


def _pull_request(source: PRSource, repo: str, number: int) -> PullRequest:
    """PR ``number`` of ``repo``; a missing one is reported as ``PR #N not found in this source (…)``."""
    try:
        return source.pull_request(repo, number)
    except PRNotFoundError as exc:
        raise PRNotFoundError(f"PR #{number} not found in this source ({exc})",
                              zh=f"数据源里没有 PR #{number}（{exc.message('zh')}）") from exc


def _week_of(pr: PullRequest, timezone: str) -> Window:
    """``pr``'s ISO week in ``timezone`` (the digest's window)."""
    from bot.digest.window import week_window, zone

    day = pr.merged_at.astimezone(zone(timezone)).date().isocalendar()
    return week_window(day.year, day.week, timezone)


def _week_prs(source: PRSource, pr: PullRequest, timezone: str) -> list[PullRequest]:
    """The PRs of ``pr``'s repository merged in its ISO week in ``timezone`` (the digest's window)."""
    return source.merged_prs(pr.repo, _week_of(pr, timezone))


def _render(item: DigestPR, fmt: PRFormat, *, repo: str, language: Language, timezone: str) -> str:
    if fmt is PRFormat.json:
        return item.model_dump_json(indent=2) + "\n"
    from bot.cards.pr import render_pr_feishu, render_pr_markdown, render_pr_slack

    if fmt is PRFormat.markdown:
        return render_pr_markdown(item, repo=repo, language=language, timezone=timezone)
    render = render_pr_slack if fmt is PRFormat.slack else render_pr_feishu
    payload = render(item, repo=repo, language=language, timezone=timezone)
    return json.dumps(payload, ensure_ascii=False, indent=2) + "\n"


def _verdict(item: DigestPR) -> str:
    if item.analysis is None:
        return "pending"
    return f"{item.analysis.recommendation.level} ({item.analysis.status})"
