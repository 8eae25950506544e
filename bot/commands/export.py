"""``prhub export``: what a source returns for one window, written as a JSONL snapshot.

The output is the snapshot format of :mod:`bot.sources.jsonl` (one PR per line,
ordered by ``merged_at``), so ``--source jsonl:FILE`` reproduces a digest
offline — the LLM analysis included, since per-file ``patch`` text is kept. Fields
the source had are written too: ``url``, ``labels``, ``reviews``, ``comments``,
``reverts``, ``files_partial`` and per file ``previous_path`` and ``patch``.

With ``--history`` (the default) the file also holds the PRs of the
:data:`~bot.digest.history.CHART_WINDOWS` − 1 windows before, which a digest reads for the
repository's core files and for week over week, and starts with a header line saying which span
it covers (:data:`bot.sources.jsonl.HEADER_KEY`): the digest of the window built from the file
is the digest built from the source (a snapshot or a git clone; from the GitHub API the earlier
weeks are read in full, one request per PR, where the online digest only counts them).

A source that does not know a PR's author date (none of ours today) gets
``authored_at = merged_at``, because the snapshot format requires the field.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from bot.commands.common import (
    ConfigOption,
    OutOption,
    RepoOption,
    SinceOption,
    SourceOption,
    TzOption,
    UntilOption,
    WeekOption,
    check_source_spec,
    cli_language,
    fail,
    run,
    window_option,
)
from bot.errors import PrhubError, SourceError

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.models import PullRequest, Window

__all__ = ["register", "snapshot_lines", "snapshot_record"]

_stderr = Console(stderr=True)


def snapshot_record(pr: PullRequest, *, patches: bool = True) -> dict[str, Any]:
    """One PR as a snapshot record (a JSON-ready dict in the snapshot's field order).

    Args:
        pr: the PR as a source returned it.
        patches: keep each file's ``patch`` text when the source had it.

    Raises:
        SourceError: the PR has no ``merge_commit_sha`` (required by the format).
    """
    if pr.merge_commit_sha is None:
        raise SourceError(f"PR #{pr.number} of {pr.repo} has no merge commit sha; the snapshot format requires one")
    files: list[dict[str, Any]] = []
    for f in pr.files:
        item: dict[str, Any] = {"path": f.path, "status": f.status, "additions": f.additions,
                                "deletions": f.deletions}
        if f.previous_path is not None:
            item["previous_path"] = f.previous_path
        if patches and f.patch is not None:
            item["patch"] = f.patch
        files.append(item)
    record: dict[str, Any] = {
        "repo": pr.repo, "number": pr.number, "title": pr.title, "body": pr.body, "author": pr.author,
        "merged_at": pr.merged_at.isoformat(),
        "authored_at": (pr.authored_at or pr.merged_at).isoformat(),
        "merge_commit_sha": pr.merge_commit_sha,
        "additions": pr.additions, "deletions": pr.deletions, "changed_files": pr.changed_files,
        "files": files,
    }
    optional: dict[str, Any] = {"url": pr.url, "labels": list(pr.labels) or None, "reviews": pr.reviews,
                                "comments": pr.comments, "reverts": pr.reverts,
                                "files_partial": pr.files_partial or None}
    record.update({k: v for k, v in optional.items() if v is not None})
    return record


def snapshot_lines(prs: Iterable[PullRequest], *, patches: bool = True, header: dict[str, Any] | None = None) -> str:
    """The snapshot text of ``prs``: one JSON object per line, UTF-8 (not ASCII-escaped), newline-terminated;
    ``header`` (:func:`bot.sources.jsonl.snapshot_header`) first when given."""
    first = json.dumps(header, ensure_ascii=False) + "\n" if header is not None else ""
    return first + "".join(json.dumps(snapshot_record(pr, patches=patches), ensure_ascii=False) + "\n" for pr in prs)


def export(
    source: SourceOption = None,
    repo: RepoOption = None,
    week: WeekOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    tz: TzOption = None,
    patches: Annotated[bool, typer.Option(help="Keep per-file patch text (needed for LLM analysis).")] = True,
    history: Annotated[bool, typer.Option(help="Also write the 11 windows before, which a digest reads for core "
                                               "files and week over week (offline, the same digest).")] = True,
    out: OutOption = None,
    config: ConfigOption = None,
) -> None:
    """Write the PRs merged in one window as a JSONL snapshot (readable back with --source jsonl:FILE).

    Example: prhub export --source jsonl:examples/verl-2026-W12-W16.jsonl.gz --week 2026-W16 --out w16.jsonl
    """

    from bot.config import load_settings
    from bot.sources.base import default_source_spec

    language = cli_language(None, config)
    try:
        settings = load_settings(config=config, timezone=tz)
        language = settings.language
        spec = check_source_spec(default_source_spec(source, repo, settings))
        window_of = window_option(week, since, until, settings.timezone)
        name, window, prs, header, requests = run(_read(settings, spec, repo, window_of, history))
        text = snapshot_lines(prs, patches=patches, header=header)
    except PrhubError as exc:
        raise fail(exc, language) from exc
    inside = sum(1 for pr in prs if window.start <= pr.merged_at < window.end)
    earlier = f" (+{len(prs) - inside} of the 11 windows before)" if history else ""
    summary = f"{name} {window.name}: {inside} PRs{earlier}{requests}"
    if out is None:
        sys.stdout.write(text)
        _stderr.print(summary, highlight=False, soft_wrap=True)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise fail(PrhubError(f"cannot write {out}: {exc.strerror}", zh=f"无法写入 {out}：{exc.strerror}"),
                   language) from exc
    _stderr.print(f"wrote {out} · {summary}", highlight=False, soft_wrap=True)


async def _read(settings: Settings, spec: str, repo: str | None, window_of: Callable[[], Window], history: bool,
                ) -> tuple[str, Window, list[PullRequest], dict[str, Any] | None, str]:
    """The repository, the window, the PRs to write (with ``history``, those of the earlier windows first),
    the header to write first (``None`` without ``history``) and the source's request summary (the source
    from :mod:`bot.app`)."""
    import asyncio

    from bot.app import open_services
    from bot.digest.history import CHART_WINDOWS, earlier_windows
    from bot.models import Window
    from bot.sources.base import canonical_repo, request_summary
    from bot.sources.jsonl import SnapshotSource, snapshot_header

    async with open_services(settings, store="memory") as services:
        pr_source = services.channels.source(spec)
        window = window_of()
        name = canonical_repo(repo or settings.default_repo, await asyncio.to_thread(pr_source.repos))
        if not history:
            prs = await asyncio.to_thread(pr_source.merged_prs, name, window)
            return name, window, prs, None, request_summary(pr_source)
        before = earlier_windows(window, CHART_WINDOWS - 1)
        start = before[0].start if before else window.start
        first = before[0].name if before else window.name
        span = Window(start=start, end=window.end, timezone=window.timezone, name=f"{first}..{window.name}")
        prs = await asyncio.to_thread(pr_source.merged_prs, name, span)
        covers_from = start
        if isinstance(pr_source, SnapshotSource):
            own = await asyncio.to_thread(pr_source.covered_from, name)
            covers_from = max(start, own) if own is not None else start
        header = snapshot_header(name, window, covers_from=covers_from, covers_until=window.end)
    return name, window, prs, header, request_summary(pr_source)


def register(app: typer.Typer) -> None:
    """Add ``prhub export`` to the command line ``app``."""
    app.command(name="export")(export)
