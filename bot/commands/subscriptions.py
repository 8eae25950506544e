"""``prhub subscriptions``: list the label subscriptions the bots keep in Redis.

All subscribers, or one (``--subscriber slack:U123``, ``feishu:oc_xxx``): one line per
subscription, ``platform:id  owner/name  label``, to stdout. With ``--check`` each label is
compared with those the repository has used (its source's last 12 weeks and its label
rules); an unknown one is still kept — a new label may appear later — and flagged with
the known ones.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from bot.config import Settings, load_settings
from bot.errors import PrhubError

_stderr = Console(stderr=True)
CHECK_WEEKS = 12


def register(app: typer.Typer) -> None:
    """Add ``subscriptions`` to ``app``."""
    app.command("subscriptions")(subscriptions)


def subscriptions(
    subscriber: Annotated[str | None, typer.Option(help="Only this subscriber: slack:U123, slack:C123, "
                                                        "feishu:oc_xxx.")] = None,
    check: Annotated[bool, typer.Option("--check", help="Flag labels the repository has never used.")] = False,
) -> None:
    """List label subscriptions.

    Example: prhub subscriptions --subscriber slack:U0123456789
    """
    try:
        settings = load_settings()
        lines = asyncio.run(_lines(settings, subscriber, check))
    except PrhubError as exc:
        _stderr.print(Text.assemble(("error:", "bold red"), " ", str(exc)), highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc
    for line in lines:
        typer.echo(line)
    _stderr.print(Text(f"{len(lines)} subscription(s)"), highlight=False)


async def _lines(settings: Settings, subscriber: str | None, check: bool) -> list[str]:
    from bot.app import open_services
    from bot.digest.window import date_window
    from bot.subscriptions import known_labels

    async with open_services(settings, store="redis", purpose="subscriptions live in Redis") as services:
        found = await services.subscriptions.all()
        known: dict[str, list[str]] = {}
        lines: list[str] = []
        for who, subs in sorted(found.items()):
            if subscriber is not None and who.key != subscriber:
                continue
            for sub in subs:
                line = f"{who.key}\t{sub.repo}\t{sub.label}"
                if check:
                    if sub.repo not in known:
                        today = datetime.now(UTC).date()
                        window = date_window(today - timedelta(weeks=CHECK_WEEKS), today, "UTC")
                        source = services.channels.source_for_repo(sub.repo)
                        prs = await asyncio.to_thread(source.merged_prs, sub.repo, window)
                        known[sub.repo] = known_labels(prs, settings, sub.repo)
                    if sub.label not in known[sub.repo]:
                        line += f"\t(unknown label; known: {', '.join(known[sub.repo])})"
                lines.append(line)
    return lines
