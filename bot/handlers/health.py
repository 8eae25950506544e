"""What ``prhub serve`` says about itself: ``GET /healthz`` (liveness), ``GET /readyz`` (readiness) and the
scrape-time part of ``GET /metrics``.

``/healthz`` — HTTP 200 while the process answers, with JSON ``{"status": "ok" | "degraded", "redis": "ok" |
"down" | "memory", "redis_error"?, "scheduler": "running" | "stopped", "slack": mode, "feishu": mode,
"platforms": {name: state}, "bindings": {...}, "workers"?}``. It reads what the process already knows (the
store's outage state, each platform's last call and credentials check) and asks nothing slow; ``degraded``
when Redis is down, the scheduler stopped or a platform refused the bot's credentials. ``bindings`` says
which repositories the channels are bound to; with none, ``unbound`` tells how to bind one.

``/readyz`` — HTTP 200 when the bot can do its work, 503 when it cannot, with JSON ``{"ready": bool,
"checks": {name: {"ok": bool, …}}}``: ``redis`` (a ``PING`` when it was down), each platform served (its
last credentials check passed: ``auth.test`` for Slack, the bot info for Feishu; not yet checked is not
ready), ``scheduler`` (running) and ``queue`` (the analysis queue answers, with its depth and the workers
alive; only when analyses go to workers).

Each platform's state is a :class:`~bot.delivery.health.PlatformState`; the checks of credentials run at start
and every ``health_check_interval_s`` (:meth:`Health.watch`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from bot.config import Settings
from bot.delivery.health import PlatformState
from bot.digest.usage import UsageMeter
from bot.errors import PrhubError, SourceError
from bot.sources.base import PRSource, is_github
from bot.store import RedisStore, ResilientStore, Store, redis_errors

if TYPE_CHECKING:
    from bot.channels import Channels
    from bot.jobs.queue import JobQueue

__all__ = ["FIRST_RECHECK_S", "RECHECK_S", "Health", "bindings"]

log = logging.getLogger(__name__)

FIRST_RECHECK_S = 2.0
"""Seconds before the platforms are checked again after a first failed check."""
RECHECK_S = 15.0
"""Seconds between checks while they keep failing."""

Check = Callable[[], Awaitable[None]]
"""A credentials check of one platform: returns when the platform accepted them, raises a
:class:`~bot.errors.DeliveryError` (with the platform's error ``code``) when not, or ``OSError`` /
``TimeoutError`` when it could not ask."""


def bindings(settings: Settings, channels: Channels) -> dict[str, Any]:
    """Which repositories the channels see: ``{"channels": {key: repo}, "default_repo", "repositories"}``, and
    ``unbound`` (how to bind one) when no channel is bound to any repository."""
    bound = {key: cfg.repo for key, cfg in sorted(settings.channels.items()) if cfg.repo}
    repos = list(dict.fromkeys([*bound.values(), *settings.visible_repos("")]))
    if not repos:
        try:  # a snapshot or a clone as the default source names its repository itself
            repos = list(channels.source(settings.default_source).repos())
        except SourceError:
            repos = []
    out: dict[str, Any] = {"channels": bound, "default_repo": settings.default_repo, "repositories": repos}
    if not repos:
        out["unbound"] = ("no channel is bound to a repository: mention the bot in a channel to learn how, or set "
                          "PRHUB_DEFAULT_REPO=owner/name, or add [channels.\"slack:C…\"] repo = \"owner/name\" "
                          "to prhub.toml")
    return out


HEALTH_PART_S = 0.5
"""Longest /healthz waits for one slow part (the workers' heartbeats) before it says ``unknown``."""


class Health:
    """The bot's liveness and readiness (see the module docstring).

    Args:
        settings: ``health_check_interval_s``.
        store: the process's store (a :class:`~bot.store.ResilientStore` in ``prhub serve``).
        platforms: the platforms served, by name, each with its state and its credentials check.
        parts: more of ``/healthz`` (``scheduler``, ``slack``, ``feishu``), each read when asked.
        jobs: the analysis queue, when analyses go to workers.
        bound: the channels' bindings (:func:`bindings`), worked out once.
        meter: the LLM runtime's usage meter (for ``/metrics``), when a model is set.
        sources: the sources opened so far (their GitHub requests, for ``/metrics``).
    """

    def __init__(self, *, settings: Settings, store: Store, platforms: Mapping[str, tuple[PlatformState, Check]],
                 parts: Mapping[str, Callable[[], str]], jobs: JobQueue | None, bound: dict[str, Any],
                 meter: UsageMeter | None = None, sources: Callable[[], list[PRSource]] | None = None) -> None:
        self.meter = meter
        self.sources = sources
        self.settings = settings
        self.store = store
        self.platforms = dict(platforms)
        self.parts = parts
        self.jobs = jobs
        self.bound = bound

    async def live(self) -> dict[str, Any]:
        """``/healthz``'s JSON (nothing slow is asked)."""
        report: dict[str, Any] = {"status": "ok", "redis": self._redis_now()}
        if report["redis"] == "down" and isinstance(self.store, ResilientStore):
            report["redis_error"] = self.store.reason
        report.update({name: part() for name, part in self.parts.items()})
        report["platforms"] = {name: state.as_json() for name, (state, _) in self.platforms.items()}
        report["bindings"] = self.bound
        if self.jobs is not None and report["redis"] != "down":
            unknown: tuple[type[Exception], ...] = (TimeoutError, *redis_errors())
            try:  # bounded: a busy thread pool or Redis does not hold /healthz
                report["workers"] = len(await asyncio.wait_for(asyncio.to_thread(self.jobs.workers), HEALTH_PART_S))
            except unknown:
                report["workers"] = "unknown"
        degraded = (report["redis"] == "down" or report.get("scheduler") == "stopped"
                    or any(state.auth == "failed" for state, _ in self.platforms.values()))
        report["status"] = "degraded" if degraded else "ok"
        return report

    async def ready(self) -> tuple[bool, dict[str, Any]]:
        """``/readyz``: whether the bot is ready, and each check."""
        checks: dict[str, dict[str, Any]] = {}
        redis = await self._redis()
        checks["redis"] = {"ok": redis != "down", "state": redis}
        for name, (state, _) in self.platforms.items():
            checks[name] = {"ok": state.ready, **state.as_json()}
        if "scheduler" in self.parts:
            running = self.parts["scheduler"]()
            checks["scheduler"] = {"ok": running == "running", "state": running}
        if self.jobs is not None:
            jobs = self.jobs
            try:
                depth, alive = await asyncio.to_thread(lambda: (jobs.pending(), len(jobs.workers())))
                checks["queue"] = {"ok": True, "depth": depth, "workers": alive}
            except redis_errors() as exc:
                checks["queue"] = {"ok": False, "error": str(exc) or type(exc).__name__}
        ready = all(check["ok"] for check in checks.values())
        return ready, {"ready": ready, "checks": checks}

    def _redis_now(self) -> str:
        """``ok``, ``down`` or ``memory`` without waiting: a hung Redis is asked in the background
        (:meth:`~bot.store.ResilientStore.check_soon`), so liveness answers at once however busy Redis is."""
        if isinstance(self.store, ResilientStore):
            return self.store.check_soon()
        if isinstance(self.store, RedisStore):
            return "ok" if self.store.available else "down"
        return "memory"

    async def _redis(self) -> str:
        """``ok``, ``down`` or ``memory``: the store's state (Redis is asked only while it is down and due a try)."""
        if isinstance(self.store, ResilientStore):
            return await self.store.check()
        if isinstance(self.store, RedisStore):
            return "ok" if self.store.available else "down"
        return "memory"

    async def check_platforms(self) -> bool:
        """Check every platform's credentials now (its state records the outcome; a refusal is logged); whether
        all passed."""
        passed = True
        for name, (state, check) in self.platforms.items():
            try:
                await check()
            except (PrhubError, OSError, TimeoutError) as exc:  # a refusal or the network: recorded and logged
                reason = str(getattr(exc, "code", "") or "") or type(exc).__name__
                state.checked(False, reason)
                passed = False
                log.warning("%s refused the bot's credentials or did not answer (%s): /readyz answers 503 until "
                            "a check passes", name, reason)
            else:
                if state.auth != "ok":
                    log.info("%s accepted the bot's credentials", name)
                state.checked(True)
        return passed

    async def watch(self) -> None:
        """Check the platforms' credentials now and every ``health_check_interval_s`` seconds; after a failed check
        again within :data:`FIRST_RECHECK_S` (a Socket Mode connection still coming up at start), then every
        :data:`RECHECK_S` (a token just fixed), until cancelled."""
        failures = 0
        while True:
            failures = 0 if await self.check_platforms() else failures + 1
            every = self.settings.health_check_interval_s
            await asyncio.sleep(every if not failures else min(every, FIRST_RECHECK_S if failures == 1 else RECHECK_S))

    def collect(self) -> Iterable[Metric]:
        """The scrape-time metrics: each platform's readiness, the LLM meter's counts, the GitHub sources'
        requests, the queue's depth, the jobs' counts and the workers alive (from Redis; none when Redis does not
        answer)."""
        yield from _usage(self.meter)
        yield from _github(self.sources() if self.sources is not None else [])
        up = GaugeMetricFamily("prhub_platform_ready", "Whether the platform accepted the bot's credentials at "
                               "the last check (1) or not (0).", labels=["platform"])
        for name, (state, _) in self.platforms.items():
            up.add_metric([name], 1.0 if state.ready else 0.0)
        yield up
        if self.jobs is None:
            return
        try:
            depth, stats, alive = self.jobs.pending(), self.jobs.stats(), len(self.jobs.workers())
        except redis_errors():
            return
        yield GaugeMetricFamily("prhub_queue_depth", "Analysis jobs waiting in the queue.", value=depth)
        yield GaugeMetricFamily("prhub_workers_alive", "Analysis workers with a fresh heartbeat.", value=alive)
        done = CounterMetricFamily("prhub_jobs", "Analysis jobs done by every worker, by outcome.",
                                   labels=["outcome"])
        for outcome in ("stored", "cached", "failed"):
            done.add_metric([outcome], float(stats.get(outcome, 0)))
        yield done


def _usage(meter: UsageMeter | None) -> Iterable[Metric]:
    """The LLM meter's counts as counters (the meter only grows for the life of the process)."""
    calls = CounterMetricFamily("prhub_llm_calls", "Model requests sent, and analyses answered from the cache or "
                                "by the heuristic after a model failure.", labels=["outcome"])
    tokens = CounterMetricFamily("prhub_llm_tokens", "Model tokens, by kind.", labels=["kind"])
    cost = CounterMetricFamily("prhub_llm_cost_usd", "Model cost as litellm prices it, US dollars (unknown: 0).")
    counts = meter or UsageMeter()  # no model: zeros, so a dashboard finds the series
    for outcome, value in (("sent", counts.llm_calls), ("cached", counts.cache_hits),
                           ("fallback", counts.fallbacks)):
        calls.add_metric([outcome], float(value))
    tokens.add_metric(["prompt"], float(counts.prompt_tokens))
    tokens.add_metric(["completion"], float(counts.completion_tokens))
    cost.add_metric([], float(counts.cost_usd or 0.0))
    yield from (calls, tokens, cost)


def _github(sources: list[PRSource]) -> Iterable[Metric]:
    """The GitHub sources' requests (summed) and the rate limit left, as their last answers said."""
    requests = CounterMetricFamily("prhub_github_requests", "GitHub API requests, by outcome.", labels=["outcome"])
    left = GaugeMetricFamily("prhub_github_rate_limit_remaining", "Requests left in GitHub's rate-limit window.")
    stats = [source.stats for source in sources if is_github(source)]
    for label, field in (("sent", "requests"), ("not_modified", "not_modified"), ("rate_limited", "rate_limited"),
                         ("retried", "retries")):
        requests.add_metric([label], float(sum(getattr(s, field) for s in stats)))
    known = [s.remaining for s in stats if s.remaining is not None]
    if known:
        left.add_metric([], float(min(known)))
    yield requests
    if known:
        yield left
