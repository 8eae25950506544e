"""``prhub push``: post one week's digest to one configured channel now — exactly once.

The same push the scheduler of ``prhub serve`` makes (:class:`~bot.scheduler.push.Pusher`),
sharing its Redis markers: a week already pushed (by the bot or an earlier ``prhub push``)
is not posted again, and a push cut short (a crash, a platform error) is continued in its
thread. Redis is required (``PRHUB_REDIS_URL``): without it there is no way to know. SIGTERM
lets the push finish (``shutdown_grace_s``). Prints one line to stderr; exit code 1 on any error, 2 when
another run holds the push (the line names it: host, process id, since when) and nothing was posted here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.text import Text

from bot.commands.common import ConfigOption, cli_language, fail, run
from bot.errors import PrhubError

if TYPE_CHECKING:
    from bot.config import Settings
    from bot.scheduler.push import PushOutcome

_stderr = Console(stderr=True)


BUSY_EXIT = 2
"""Exit code of ``prhub push`` when another run holds the push (nothing posted by this one)."""


def register(app: typer.Typer) -> None:
    """Add ``push`` to ``app``."""
    app.command("push")(push)


def push(
    channel: Annotated[str, typer.Option(metavar="PLATFORM:ID",
                                         help="slack:C123, feishu:oc_xxx or feishu-webhook:NAME (a webhook "
                                              "named in the config's feishu_webhooks table).")],
    week: Annotated[str, typer.Option(metavar="WEEK", help="ISO week such as 2026-W16, or 'last' / 'this', in "
                                                           "the channel's time zone.")] = "last",
    config: ConfigOption = None,
) -> None:
    """Post the digest of WEEK to CHANNEL unless it was posted already.

    Example: prhub push --channel slack:C0123456789 --week 2026-W16
    """

    from bot.config import load_settings

    language = cli_language(None, config)
    try:
        settings = load_settings(config=config)
        language = settings.language
        outcome = run(_push(settings, channel, week))
    except PrhubError as exc:
        raise fail(exc, language) from exc
    if outcome.status == "posted":
        line = (f"posted {outcome.repo} {outcome.week} to {outcome.channel}: {outcome.prs} PRs"
                + (f", {outcome.pending} pending" if outcome.pending else ""))
    elif outcome.status == "busy":
        who = outcome.holder or "another run"
        _stderr.print(Text.assemble(("error:", "bold red"), f" {outcome.repo} {outcome.week} to {outcome.channel} is "
                                    f"being posted by {who}; nothing posted here (try again once it is done)"),
                      highlight=False, soft_wrap=True)
        raise typer.Exit(code=BUSY_EXIT)
    else:
        line = f"{outcome.repo} {outcome.week} was already posted to {outcome.channel}; nothing done"
    _stderr.print(Text(line), highlight=False, soft_wrap=True)


async def _push(settings: Settings, channel: str, week: str) -> PushOutcome:
    """The push, finished on SIGTERM (within ``shutdown_grace_s``; past it the push is cancelled and its
    progress kept for the next run to continue)."""
    import asyncio
    import signal

    from bot.app import open_services

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None

    def on_term() -> None:
        _stderr.print(Text(f"SIGTERM: finishing the push in flight (up to {settings.shutdown_grace_s:.0f} s)"),
                      highlight=False)
        loop.call_later(settings.shutdown_grace_s, task.cancel)

    loop.add_signal_handler(signal.SIGTERM, on_term)

    async with open_services(settings, store="redis", purpose="scheduled posts need Redis to stay exactly-once",
                             jobs=True, fetch_git=True) as services:
        return await services.pusher().push(channel, week)
