"""The ``prhub`` command line (typer).

``prhub digest`` builds the weekly digest of one repository from a PR source and
prints it as Markdown, JSON, Slack Block Kit messages, Feishu cards, a self-contained
HTML page or a PDF, compared with the windows before it (week over week; ``--no-compare``
leaves that out), and can write its charts as PNG files (``--charts DIR``). Output goes
to stdout (or ``--out``); progress and errors go to stderr; any
:class:`~bot.errors.PrhubError` ends the command with one line and exit code 1.
"""

from __future__ import annotations

import atexit
import gc
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from bot import __version__
from bot.commands.common import (
    ConfigOption,
    LangOption,
    OutOption,
    PrhubGroup,
    RepoOption,
    SinceOption,
    SourceOption,
    TzOption,
    UntilOption,
    WeekOption,
    check_source_spec,
    cli_language,
    fail,
    note_empty_window,
    run,
    warner,
    window_option,
)
from bot.errors import PrhubError, RenderError, UsageError

# Only typer, rich and the option types are imported at start, so `prhub --help` (and every command's
# help) loads no pydantic, settings or digest code; each command imports what it uses when it runs
# (tests/test_cli_imports.py holds that line).
if TYPE_CHECKING:
    from bot.cards.charts import Chart
    from bot.config import Settings
    from bot.models import Digest, Window

app = typer.Typer(
    name="prhub",
    help="prhub: weekly digests of a repository's merged pull requests, for Slack, Feishu and Markdown.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=PrhubGroup,
    rich_markup_mode=None,  # plain help: option placeholders as written (SPEC, FILE), no boxes
)
_stderr = Console(stderr=True)
# At exit the interpreter runs the cyclic garbage collector over every object left; with litellm loaded
# that is about half a second spent freeing memory the OS frees anyway. Frozen objects are skipped
# (objects not in a cycle are still freed, and every atexit handler registered after this one still
# runs before it); our outputs are written and closed before, never left to a finalizer.
atexit.register(gc.freeze)


class OutputFormat(StrEnum):
    """What ``prhub digest`` writes."""

    markdown = "markdown"
    json = "json"
    slack = "slack"
    feishu = "feishu"
    html = "html"
    pdf = "pdf"


def _render(digest: Digest, fmt: OutputFormat) -> str | bytes:
    # Renderers are imported lazily: a JSON digest needs none of them, and only the page and
    # the PDF (and --charts) import the plotting library. The page draws its own charts (SVG).
    if fmt is OutputFormat.html:
        from bot.cards.html import render_html

        return render_html(digest, warn=_warn)
    if fmt is OutputFormat.pdf:
        from bot.cards.pdf import render_pdf

        return render_pdf(digest, warn=_warn)
    if fmt is OutputFormat.json:
        return digest.model_dump_json(indent=2) + "\n"
    if fmt is OutputFormat.markdown:
        from bot.cards.markdown import render_markdown

        return render_markdown(digest)
    if fmt is OutputFormat.slack:
        from bot.cards.slack import render_slack

        return json.dumps(render_slack(digest), ensure_ascii=False, indent=2) + "\n"
    from bot.cards.feishu import render_feishu

    return json.dumps(render_feishu(digest), ensure_ascii=False, indent=2) + "\n"


def _charts(digest: Digest) -> list[Chart]:
    """The card charts (PNG) that ``--charts DIR`` writes."""
    from bot.cards.charts import render_charts

    return render_charts(digest, warn=_warn)


_WARNED: set[str] = set()


def _warn(message: str) -> None:
    """A warning on stderr, once per message (the page and --charts both draw charts)."""
    if message in _WARNED:
        return
    _WARNED.add(message)
    _stderr.print(f"[yellow]warning:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True)


def _write_charts(charts: list[Chart], folder: Path) -> list[Path]:
    """Write each chart as ``FOLDER/<name>.png`` (the folder is created)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for chart in charts:
            path = folder / f"{chart.name}.png"
            path.write_bytes(chart.png)
            written.append(path)
    except OSError as exc:
        raise RenderError(f"cannot write the charts to {folder}: {exc.strerror}") from exc
    return written


@contextmanager
def _progress(label: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar on stderr (drawn only when stderr is a terminal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=_stderr, transient=True, disable=not _stderr.is_terminal,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


async def _digest(settings: Settings, spec: str, repo: str | None, window_of: Callable[[], Window],
                  compare: bool, release: str | None = None,
                  ) -> tuple[Digest, str, tuple[datetime, datetime, int] | None]:
    """Read the PRs and build the digest with the process's services (:mod:`bot.app`): the LLM analyzer
    when ``PRHUB_LLM_MODEL`` is set, cached in Redis when it answers (otherwise one warning line and an
    in-process cache), and the heuristic said so on stderr when the model is unusable; with ``compare``,
    the windows before it are read from the same source for week over week (no LLM call). Returns the
    digest, the source's request summary and, for an empty window, what the source holds of the repository
    (first and last merge, count; ``None`` when it cannot tell cheaply)."""
    import asyncio

    from bot.app import open_services
    from bot.sources.base import canonical_repo, merge_span, request_summary

    cached = settings.llm_model or settings.cache_file is not None
    async with open_services(settings, store="cache" if cached else "memory", warn=warner(_stderr),
                             on_fallback=warner(_stderr)) as services:
        pr_source = services.channels.source(spec)
        name = canonical_repo(repo or settings.default_repo, await asyncio.to_thread(pr_source.repos))
        if release is not None:  # the PRs first released in the tag (bot/digest/releases.py)
            from bot.digest.releases import release_span

            found = await asyncio.to_thread(release_span, pr_source, name, release, settings.timezone)
            history = await services.digests.earlier_records(pr_source, name, found.window)
            made = await services.digests.digest(found.prs, repo=name, window=found.window, history=history)
            made = made.model_copy(update={"release": found.release.tag if found.release else release,
                                           "previous_release": found.previous.tag if found.previous else None})
            return made, request_summary(pr_source), None
        window = window_of()
        with _stderr.status("reading PRs…", spinner="dots") if _stderr.is_terminal else nullcontext():
            prs = await asyncio.to_thread(pr_source.merged_prs, name, window)
            earlier = await services.digests.look_back(pr_source, name, window) if compare else None
            history = earlier.lookback.records if earlier else await services.digests.earlier_records(
                pr_source, name, window)
        with _progress(f"analysing {len(prs)} PRs") as progress:
            result = await services.digests.digest(prs, repo=name, window=window, progress=progress,
                                                   lookback=earlier.lookback if earlier else None,
                                                   known=earlier.known if earlier else None, history=history)
        if services.digests.uses_llm:
            from bot.digest.usage import describe_usage

            _stderr.print(describe_usage(result.usage), highlight=False, soft_wrap=True)
        span = await asyncio.to_thread(merge_span, pr_source, name) if not prs else None
    return result, request_summary(pr_source), span


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"prhub {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True),
    ] = False,
) -> None:
    """prhub: weekly digests of a repository's merged pull requests."""


@app.command()
def digest(
    source: SourceOption = None,
    repo: RepoOption = None,
    week: WeekOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    tz: TzOption = None,
    lang: LangOption = None,
    fmt: Annotated[OutputFormat, typer.Option(
        "--format", metavar="FORMAT",
        help="markdown, json, slack, feishu, html (one self-contained page) or pdf (that page printed by "
             "Chromium; needs --out or a pipe).")] = OutputFormat.markdown,
    out: OutOption = None,
    charts_dir: Annotated[Path | None, typer.Option(
        "--charts", metavar="DIR", help="Also write the charts as PNG files into this folder (labels.png, "
                                        "weekly.png, verdicts.png).")] = None,
    compare: Annotated[bool, typer.Option(
        "--compare/--no-compare", help="Compare with the windows before (week over week), read from the same "
                                       "source without any LLM call.")] = True,
    release: Annotated[str | None, typer.Option(
        "--release", metavar="TAG",
        help="The PRs first released in TAG (from the release before it), with paste-able release notes; instead "
             "of --week. Needs a source that knows releases: git:PATH (version tags) or github.")] = None,
    post: Annotated[list[str] | None, typer.Option(
        "--post", metavar="TARGET",
        help="Also post the digest: slack-webhook:URL (a Slack incoming webhook), feishu-webhook:URL (signed with "
             "PRHUB_FEISHU_WEBHOOK_SECRET when set) or feishu-webhook:NAME (a [feishu_webhooks.NAME]); "
             "may be given more than once. No bot or Redis needed.")] = None,
    config: ConfigOption = None,
) -> None:
    """Build the digest of the PRs merged in one window.

    Example: prhub digest --source jsonl:examples/verl-2026-W12-W16.jsonl.gz --repo verl-project/verl --week 2026-W16
    """
    from bot.config import load_settings, settings_source
    from bot.sources.base import default_source_spec

    language = cli_language(lang, config)
    try:
        settings = load_settings(config=config, timezone=tz, language=lang)
        language = settings.language if lang is None else lang
        spec = check_source_spec(default_source_spec(source, repo, settings))
        window_of = window_option(week, since, until, settings.timezone)
        targets = None
        if post:
            from bot.commands.post import parse_targets

            targets = parse_targets(post, settings)
        if fmt is OutputFormat.pdf and out is None and sys.stdout.isatty():
            raise UsageError("--format pdf writes binary data: give --out FILE.pdf or redirect the output",
                             zh="--format pdf 输出的是二进制数据：请加 --out FILE.pdf 或重定向输出")
        if release is not None and (week or since or until):
            raise UsageError("--release takes the place of --week / --since / --until: give one of them",
                             zh="--release 不能与 --week / --since / --until 同用：只给其中一种")
        result, requests, span = run(_digest(settings, spec, repo, window_of, compare and release is None, release))
        text = _render(result, fmt)
        if targets:
            from bot.commands.post import post_digest

            for line in run(post_digest(result, targets)):
                _stderr.print(line, highlight=False, soft_wrap=True)
        if charts_dir is not None:
            written = _write_charts(_charts(result), charts_dir)
            _stderr.print("wrote " + ", ".join(str(p) for p in written), highlight=False, soft_wrap=True)
    except PrhubError as exc:
        raise fail(exc, language) from exc
    plural = "" if result.stats.pr_count == 1 else "s"
    summary = (f"{result.repo} {result.window.name}: {result.stats.pr_count} PR{plural}, "
               f"{result.stats.key_pr_count} key{requests} · config {settings_source(settings)}")
    if out is None:
        if isinstance(text, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(text)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(text)
        _stderr.print(summary, highlight=False, soft_wrap=True)
    else:
        try:
            if isinstance(text, bytes):
                out.write_bytes(text)
            else:
                out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise fail(PrhubError(f"cannot write {out}: {exc.strerror}", zh=f"无法写入 {out}：{exc.strerror}"),
                       language) from exc
        _stderr.print(f"wrote {out} · {summary}", highlight=False, soft_wrap=True)
    if result.stats.pr_count == 0:
        note_empty_window(result.repo, result.window, span, language)


# Further commands live in their own modules and register themselves on `app` here
# (one `register(app)` call each), so this module stays the digest command and the wiring.

from bot.commands import pr as _pr  # noqa: E402  (after `app` exists)

_pr.register(app)

from bot.commands import export as _export  # noqa: E402

_export.register(app)

from bot.commands import serve as _serve  # noqa: E402

_serve.register(app)

from bot.commands import alerts as _alerts  # noqa: E402
from bot.commands import config as _config  # noqa: E402
from bot.commands import push as _push  # noqa: E402
from bot.commands import subscriptions as _subscriptions  # noqa: E402
from bot.commands import worker as _worker  # noqa: E402

_push.register(app)
_alerts.register(app)
_subscriptions.register(app)
_worker.register(app)
_config.register(app)
