"""``prhub worker``: run analysis jobs from the queue on Redis until Ctrl-C or SIGTERM.

``prhub serve`` and ``prhub push`` queue the LLM analyses they need while a worker is alive (its
heartbeat in Redis) and wait for them up to their deadline; with no worker they analyse in their
own process, as before. Needs ``PRHUB_LLM_MODEL`` (and the other ``PRHUB_LLM_*`` settings the bot
uses: the worker's model must be the bot's, since the model is part of each job's id) and a Redis
that answers (``PRHUB_REDIS_URL``). Prints one line when it starts and one when it stops; exit code 1
on a configuration error.
"""

from __future__ import annotations

import logging
import signal
from types import FrameType
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from bot.commands.common import ConfigOption, cli_language, error_line, fail
from bot.errors import PrhubError

# Like every command, only typer, rich and the option types at import (tests/test_cli_imports.py):
# redis and the settings are imported when the command runs.

_stderr = Console(stderr=True)


def _status(config: str | None) -> None:
    import socket

    from redis.exceptions import RedisError

    from bot.config import load_settings
    from bot.jobs.queue import JobQueue

    language = cli_language(None, config)
    try:
        settings = load_settings(config=config)
        language = settings.language
        queue = JobQueue(settings)
        try:
            beats, queued, stats = queue.workers(), queue.pending(), queue.stats()
        finally:
            queue.close()
    except PrhubError as exc:
        raise fail(exc, language) from exc
    except RedisError as exc:
        raise fail(PrhubError(f"Redis does not answer at PRHUB_REDIS_URL ({exc})",
                              zh=f"PRHUB_REDIS_URL 上的 Redis 没有响应（{exc}）"), language) from exc
    out = Console()
    out.print(Text(f"queue {settings.jobs_queue}: {queued} waiting · {stats.get('stored', 0)} analysed, "
                   f"{stats.get('cached', 0)} already cached, {stats.get('failed', 0)} failed"), highlight=False)
    for beat in beats:
        out.print(Text(f"  {beat.id}  {beat.concurrency} at once · {beat.done} done, {beat.failed} failed"),
                  highlight=False)
    if not beats:
        out.print(Text("  no worker alive"), highlight=False)
    here = socket.gethostname()
    if not any(beat.host == here for beat in beats):
        raise typer.Exit(code=1)


def register(app: typer.Typer) -> None:
    """Add ``worker`` to ``app``."""
    app.command("worker")(worker)


def worker(
    concurrency: Annotated[int | None, typer.Option(min=1, max=64, metavar="N", help="Jobs run at once "
                                                    "(threads). Default: PRHUB_WORKER_CONCURRENCY, else 4.")] = None,
    status: Annotated[bool, typer.Option("--status", help="Print the workers alive (their heartbeats in Redis) "
                                         "and exit: 0 when one of this host runs, else 1 (a health check).")] = False,
    config: ConfigOption = None,
) -> None:
    """Run LLM analysis jobs queued by `prhub serve` and `prhub push` (Ctrl-C stops it after the jobs under way).

    Example: PRHUB_LLM_MODEL=openai/gpt-4o-mini prhub worker --concurrency 8
    """
    if status:
        _status(str(config) if config is not None else None)
        return
    from redis.exceptions import RedisError

    from bot.config import load_settings, settings_source
    from bot.jobs.worker import AnalysisWorker

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    language = cli_language(None, config)
    try:
        settings = load_settings(config=config)
        language = settings.language
        runner = AnalysisWorker(settings, concurrency=concurrency)
        runner.start()
    except PrhubError as exc:
        raise fail(exc, language) from exc
    except RedisError as exc:
        error_line(f"the worker needs Redis at PRHUB_REDIS_URL ({exc})" if language == "en" else
                   f"worker 需要 PRHUB_REDIS_URL 上的 Redis（{exc}）", language)
        raise typer.Exit(code=1) from exc

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    _stderr.print(Text(f"prhub worker {runner.id}: {runner.concurrency} at once on queue {settings.jobs_queue} · "
                       f"model {settings.llm_model} · config {settings_source(settings)}"), highlight=False)
    try:
        runner.wait()
    except KeyboardInterrupt:
        pass
    finally:
        runner.stop()
        counts = runner.counts
        _stderr.print(Text(f"prhub worker {runner.id} stopped: {counts['stored']} analysed, {counts['cached']} "
                           f"already cached, {counts['failed']} failed"), highlight=False)
