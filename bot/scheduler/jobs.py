"""The scheduler inside ``prhub serve``: APScheduler 3.x ``AsyncIOScheduler`` on the bot's loop.

Jobs (ids are stable, so a reload replaces them):

- ``push:{channel}`` — a cron trigger from the channel's ``push`` (day names, the channel's
  explicit IANA zone) running :meth:`~bot.scheduler.push.Pusher.run_scheduled`;
- ``alerts`` — an interval trigger every ``alerts_interval_s`` seconds running
  :meth:`~bot.scheduler.alerts.AlertPoller.poll`;
- ``personal`` — every :data:`~bot.scheduler.personal.EVERY_S` seconds, the weekly personal digests
  whose time has come in their person's zone (:meth:`~bot.scheduler.personal.PersonalDigestJob.run`).

Each replica keeps its own memory job store (replicas must not share an APScheduler job
store, and a restart need not remember anything): exactly once is the Redis markers' job.
APScheduler's misfire grace is set to ``push_grace_s`` and runs are coalesced, and
:func:`start_scheduler` first runs the catch-up of pushes missed while the bot was down.
- ``push-resume`` — every :data:`~bot.scheduler.push.RESUME_EVERY_S` seconds, a push whose run stopped
  midway (its lease expired with its progress recorded) is resumed in its thread
  (:meth:`~bot.scheduler.push.Pusher.resume_interrupted`);
- ``push-retry`` — every :data:`~bot.scheduler.push.RETRY_EVERY_S` seconds, the catch-up again:
  a push that failed at its fire (source or platform down) is retried within its grace.
- ``git-fetch`` — at start and every ``git_fetch_interval_s`` seconds (0: none), ``git fetch`` of every
  ``git:`` source the channels read (:meth:`bot.channels.Channels.refresh`, in a worker thread), so the alerts
  and the chat see new merges.

A job that fails is logged by the job itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from functools import partial
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler  # type: ignore[import-untyped]
from apscheduler.triggers.interval import IntervalTrigger  # type: ignore[import-untyped]
from redis.exceptions import RedisError

from bot.errors import PrhubError
from bot.scheduler.alerts import AlertPoller
from bot.scheduler.personal import EVERY_S, PersonalDigestJob
from bot.scheduler.push import RESUME_EVERY_S, RETRY_EVERY_S, Pusher
from bot.scheduler.schedule import cron_trigger

__all__ = ["build_scheduler", "scheduled", "start_scheduler"]

log = logging.getLogger(__name__)


def _guarded(name: str, job: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[None]]:
    """``job`` with its expected failures logged (the scheduler would log them without the context)."""

    async def run() -> None:
        try:
            await job()
        except (PrhubError, RedisError):
            log.exception("scheduled job %s failed; it is tried again by push-retry or its next fire", name)

    return run


def build_scheduler(pusher: Pusher, poll: Callable[[], Awaitable[Any]] | None = None, *,
                    alerts_interval_s: int | None = None,
                    personal: Callable[[], Awaitable[Any]] | None = None,
                    fetch: Callable[[], Awaitable[Any]] | None = None) -> AsyncIOScheduler:
    """A (not started) scheduler with one push job per channel that has a ``push`` time, the alerts job
    when ``poll`` is given, the personal digests when ``personal`` is, and the fetch of git sources every
    ``git_fetch_interval_s`` when ``fetch`` is.

    Raises:
        ValueError: a channel's ``push`` is malformed (the settings normally refuse it earlier).
        WindowError: a channel's ``timezone`` is unknown.
    """
    settings = pusher.settings
    scheduler = AsyncIOScheduler(timezone="UTC", job_defaults={
        "coalesce": True, "max_instances": 1, "misfire_grace_time": max(settings.push_grace_s, 1)})
    for channel in pusher.scheduled_channels():
        cfg = settings.channel(channel)
        assert cfg.push is not None
        scheduler.add_job(_guarded(f"push:{channel}", partial(pusher.run_scheduled, channel)),
                          cron_trigger(cfg.push, cfg.timezone or "UTC"), id=f"push:{channel}",
                          name=f"weekly push to {channel}", replace_existing=True)
    if pusher.scheduled_channels():
        retry = partial(pusher.catch_up, report_missed=False)
        scheduler.add_job(_guarded("push-retry", retry), IntervalTrigger(seconds=RETRY_EVERY_S), id="push-retry",
                          name="retry failed pushes within their grace", replace_existing=True,
                          misfire_grace_time=RETRY_EVERY_S)
        scheduler.add_job(_guarded("push-resume", pusher.resume_interrupted), IntervalTrigger(seconds=RESUME_EVERY_S),
                          id="push-resume", name="resume pushes whose run stopped midway", replace_existing=True,
                          misfire_grace_time=RESUME_EVERY_S)
    if poll is not None:
        interval = alerts_interval_s or settings.alerts_interval_s
        scheduler.add_job(_guarded("alerts", poll), IntervalTrigger(seconds=interval), id="alerts",
                          name="alerts", replace_existing=True, misfire_grace_time=interval)
    if personal is not None:
        scheduler.add_job(_guarded("personal", personal), IntervalTrigger(seconds=EVERY_S), id="personal",
                          name="weekly personal digests", replace_existing=True, misfire_grace_time=EVERY_S)
    if fetch is not None and settings.git_fetch_interval_s > 0:
        every = settings.git_fetch_interval_s
        scheduler.add_job(_guarded("git-fetch", fetch), IntervalTrigger(seconds=every), id="git-fetch",
                          name="fetch of git sources", replace_existing=True, misfire_grace_time=every,
                          next_run_time=datetime.now(UTC))  # at start too: a clone made days ago is stale
    return scheduler


async def start_scheduler(pusher: Pusher, poll: Callable[[], Awaitable[Any]] | None = None,
                          personal: Callable[[], Awaitable[Any]] | None = None,
                          fetch: Callable[[], Awaitable[Any]] | None = None) -> AsyncIOScheduler:
    """Catch up the pushes missed while down, then start the scheduler on the running loop.

    The caller stops it with ``scheduler.shutdown(wait=False)``.
    """
    await pusher.catch_up()
    scheduler = build_scheduler(pusher, poll, personal=personal, fetch=fetch)
    scheduler.start()
    for job in scheduler.get_jobs():
        log.info("scheduled %s: next at %s", job.name, job.next_run_time)
    return scheduler


@asynccontextmanager
async def scheduled(pusher: Pusher, poller: AlertPoller | None = None,
                    personal: PersonalDigestJob | None = None,
                    fetch: Callable[[], Awaitable[Any]] | None = None) -> AsyncIterator[AsyncIOScheduler]:
    """The weekly pushes (and, with ``poller``, the alerts; with ``personal``, the weekly personal digests)
    running on this loop for the duration of the block (``prhub serve``): catch-up first, then the
    scheduler; stopped on exit, after the pushes in flight finished (or ``shutdown_grace_s`` passed:
    :meth:`~bot.scheduler.push.Pusher.drain`).

    ``pusher`` and ``poller`` come from :mod:`bot.app` (the process's one digest service: LLM
    analyses not done within :data:`~bot.scheduler.push.LLM_DEADLINE_S` are posted as pending).
    """
    scheduler = await start_scheduler(pusher, poller.poll if poller is not None else None,
                                      personal.run if personal is not None else None, fetch)
    try:
        yield scheduler
    finally:
        scheduler.shutdown(wait=False)  # AsyncIOScheduler runs it on the loop's next turn
        await asyncio.sleep(0)
        await pusher.drain(pusher.settings.shutdown_grace_s)  # a push in flight finishes, or is handed over
