"""``prhub alerts``: poll for merged PRs and send the alerts (what ``prhub serve`` does every few minutes).

``--once`` runs one poll and prints what it sent; without it the command polls every
``alerts_interval_s`` seconds until Ctrl-C. Each subscriber's queue lives in Redis, shared with
the bot: a PR queued or alerted by the bot (or an earlier run) is not alerted again, and a batch
waits for its window (``alerts_batch_s``) and the quiet hours whoever polls. Redis is required
(``PRHUB_REDIS_URL``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from bot.commands.common import ConfigOption, cli_language, fail
from bot.errors import PrhubError

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.scheduler.alerts import PollReport

_stderr = Console(stderr=True)


def register(app: typer.Typer) -> None:
    """Add ``alerts`` to ``app``."""
    app.command("alerts")(alerts)


def alerts(
    once: Annotated[bool, typer.Option("--once", help="Poll once and exit.")] = False,
    source: Annotated[str | None, typer.Option(metavar="SPEC", help="Source of repositories no channel is bound to "
                                                                    "(default_source).")] = None,
    config: ConfigOption = None,
) -> None:
    """Queue the PRs merged since the last poll that match a subscription, and send the batches that are due.

    Example: prhub alerts --once
    """
    import asyncio

    from bot.config import load_settings

    language = cli_language(None, config)
    try:
        settings = load_settings(config=config, default_source=source)
        language = settings.language
        asyncio.run(_run(settings, once=once))
    except PrhubError as exc:
        raise fail(exc, language) from exc
    except KeyboardInterrupt:
        pass


def describe(report: PollReport) -> str:
    """One line about a poll: PRs read, queued, alerted (in how many messages), busy and failed."""
    line = (f"{report.prs_seen} PRs read, {report.queued} queued, {len(report.sent)} alerted in "
            f"{report.messages} message(s)")
    line += f", {report.skipped} queue(s) busy elsewhere" if report.skipped else ""
    return line + (f", {len(report.failed)} failed (retried next time)" if report.failed else "")


async def _run(settings: Settings, *, once: bool) -> None:
    import asyncio

    from bot.app import open_services

    async with open_services(settings, store="redis", purpose="label alerts need Redis", fetch_git=True) as services:
        poller = services.poller()
        while True:
            report = await poller.poll()
            for who, repo, number in report.sent:
                _stderr.print(Text(f"alerted {who}: {repo}#{number}"), highlight=False)
            for failure in report.failed:
                _stderr.print(Text(f"failed: {failure}"), style="yellow", highlight=False)
            _stderr.print(Text(describe(report)), highlight=False)
            if once:
                return
            await asyncio.sleep(settings.alerts_interval_s)
