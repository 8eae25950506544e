"""Helpers every ``prhub`` command shares (the digest command in :mod:`bot.cli` and :mod:`bot.commands`)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from bot.errors import SourceError

# Options several commands share, declared once so their names and help read the same everywhere.
SourceOption = Annotated[
    str | None,
    typer.Option("--source", help="Where PRs come from: github, git:PATH (a local clone) or jsonl:PATH (a snapshot "
                                  "file, plain or .gz); default github when --repo is given."),
]
RepoOption = Annotated[
    str | None, typer.Option("--repo", help="Repository owner/name; may be left out when the source holds only one.")
]
WeekOption = Annotated[
    str | None,
    typer.Option("--week", help="ISO week such as 2026-W16, or 'this' / 'last' (default: last complete week)."),
]
SinceOption = Annotated[
    datetime | None,
    typer.Option("--since", formats=["%Y-%m-%d"], help="First day, inclusive (YYYY-MM-DD); instead of --week."),
]
UntilOption = Annotated[
    datetime | None,
    typer.Option("--until", formats=["%Y-%m-%d"], help="Last day, inclusive (YYYY-MM-DD); instead of --week."),
]
TzOption = Annotated[
    str | None, typer.Option("--tz", help="IANA time zone of the window (default from config: Asia/Shanghai).")
]
OutOption = Annotated[Path | None, typer.Option("--out", help="Write to this file instead of stdout.")]


def canonical_repo(requested: str | None, held: list[str]) -> str:
    """The source's own spelling of ``requested`` (GitHub names ignore case and stray
    spaces are dropped); with no ``--repo``, the source's only repository.

    Args:
        requested: the ``owner/name`` the user gave, or ``None``.
        held: the repositories the source holds (``PRSource.repos()``).

    Raises:
        SourceError: no ``--repo`` and the source holds several repositories or none.
    """
    if requested is None:
        if not held:
            raise SourceError("--repo is required: the source does not say which repository it holds "
                              "(a git clone needs an origin remote on a host, e.g. git@github.com:owner/name.git)")
        if len(held) != 1:
            raise SourceError(f"--repo is required: the source holds {len(held)} repositories ({', '.join(held[:5])})")
        return held[0]
    wanted = requested.strip()
    return next((name for name in held if name.lower() == wanted.lower()), wanted)
