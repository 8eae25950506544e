"""``prhub export``: what a source returns for one window, written as a JSONL snapshot.

The output is the snapshot format of :mod:`bot.sources.jsonl` (one PR per line,
ordered by ``merged_at``), so ``--source jsonl:FILE`` reproduces a digest
offline — the LLM analysis included, since per-file ``patch`` text is kept. Fields
the source had are written too: ``url``, ``labels``, ``reviews``, ``comments``,
``reverts``, ``files_partial`` and per file ``previous_path`` and ``patch``.

A source that does not know a PR's author date (none of ours today) gets
``authored_at = merged_at``, because the snapshot format requires the field.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from bot.commands.common import (
    OutOption,
    RepoOption,
    SinceOption,
    SourceOption,
    TzOption,
    UntilOption,
    WeekOption,
    run,
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


def snapshot_lines(prs: Iterable[PullRequest], *, patches: bool = True) -> str:
    """The snapshot text of ``prs``: one JSON object per line, UTF-8 (not ASCII-escaped), newline-terminated."""
    return "".join(json.dumps(snapshot_record(pr, patches=patches), ensure_ascii=False) + "\n" for pr in prs)


def _date(value: datetime | None) -> date | None:
    return value.date() if value is not None else None


def export(
    source: SourceOption = None,
    repo: RepoOption = None,
    week: WeekOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    tz: TzOption = None,
    patches: Annotated[bool, typer.Option(help="Keep per-file patch text (needed for LLM analysis).")] = True,
    out: OutOption = None,
) -> None:
    """Write the PRs merged in one window as a JSONL snapshot (readable back with --source jsonl:FILE).

    Example: prhub export --repo verl-project/verl --week 2026-W16 --out verl-2026-W16.jsonl
    """

    from bot.config import load_settings
    from bot.digest.window import resolve_window, zone
    from bot.sources.base import default_source_spec

    try:
        settings = load_settings(timezone=tz)
        zone(settings.timezone)
        spec = default_source_spec(source, repo, settings)

        def window_of() -> Window:
            return resolve_window(week=week, since=_date(since), until=_date(until), tz=settings.timezone,
                                  now=datetime.now(UTC))

        name, window, prs, requests = run(_read(settings, spec, repo, window_of))
        text = snapshot_lines(prs, patches=patches)
    except PrhubError as exc:
        _stderr.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc
    summary = f"{name} {window.name}: {len(prs)} PRs{requests}"
    if out is None:
        sys.stdout.write(text)
        _stderr.print(summary, highlight=False, soft_wrap=True)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        _stderr.print(f"[bold red]error:[/] cannot write {out}: {exc.strerror}", highlight=False)
        raise typer.Exit(code=1) from exc
    _stderr.print(f"wrote {out} · {summary}", highlight=False, soft_wrap=True)


async def _read(settings: Settings, spec: str, repo: str | None, window_of: Callable[[], Window],
                ) -> tuple[str, Window, list[PullRequest], str]:
    """The repository, the window, its PRs and the source's request summary (the source from :mod:`bot.app`)."""
    import asyncio

    from bot.app import open_services
    from bot.sources.base import canonical_repo, request_summary

    async with open_services(settings, store="memory") as services:
        pr_source = services.channels.source(spec)
        window = window_of()
        name = canonical_repo(repo or settings.default_repo, await asyncio.to_thread(pr_source.repos))
        prs = await asyncio.to_thread(pr_source.merged_prs, name, window)
    return name, window, prs, request_summary(pr_source)


def register(app: typer.Typer) -> None:
    """Add ``prhub export`` to the command line ``app``."""
    app.command(name="export")(export)
