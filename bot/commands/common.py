"""Options every ``prhub`` command shares (the digest command in :mod:`bot.cli` and :mod:`bot.commands`)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

_T = TypeVar("_T")

Lang = Literal["zh", "en"]
"""The values of ``--lang``: :data:`bot.models.Language`, spelled here so that building the command line
(``prhub --help``) imports no pydantic model (tests/test_cli_imports.py checks the two agree)."""

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


def warner(console: Console) -> Callable[[str], None]:
    """A ``warn(message)`` that prints its first message as one ``warning:`` line on ``console`` (stderr)
    and drops any later one (a Redis that stopped answering says so once)."""
    warned: list[str] = []

    def warn(message: str) -> None:
        if not warned:
            warned.append(message)
            console.print(f"[yellow]warning:[/] {escape(message)}", highlight=False, markup=True, soft_wrap=True)

    return warn


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(main)``, with ``main``'s result handed back without being the result of the run's main task.

    On CPython 3.11 to 3.13, ``asyncio.run`` puts back the SIGINT handler by calling ``signal.getsignal``, which
    builds (and drops) an error message holding the ``repr`` of its own handler — a partial bound to the main
    task, whose ``repr`` shows the task's result. For a digest that result is every PR, analysis and card text:
    its ``repr`` took a quarter of a second on verl's full history, twice. Here the main task returns ``None``.

    Raises:
        Whatever ``main`` raises.
    """
    import asyncio

    box: list[_T] = []

    async def main_task() -> None:
        box.append(await main)

    asyncio.run(main_task())
    return box[0]
