"""/healthz, /readyz and the scrape-time metrics (bot/handlers/health.py): each platform's last call and
credentials check, Redis, the scheduler; the LLM meter and the GitHub sources' requests in /metrics."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from bot.config import Settings
from bot.delivery.health import PlatformState
from bot.digest.usage import UsageMeter
from bot.errors import DeliveryError
from bot.handlers.health import Health
from bot.handlers.server import build_server
from bot.sources.github import GitHubSource
from bot.store import MemoryStore

NOW = datetime(2026, 4, 20, 1, 3, tzinfo=UTC)


def _health(state: PlatformState, *, refuse: bool, scheduler: str = "running", **kwargs: object) -> Health:
    async def check() -> None:
        if refuse:
            raise DeliveryError("Slack refused the bot token: invalid_auth", code="invalid_auth")

    return Health(settings=Settings(), store=MemoryStore(), platforms={"slack": (state, check)},
                  parts={"scheduler": lambda: scheduler, "slack": lambda: "http"}, jobs=None,
                  bound={"channels": {}, "default_repo": "o/n", "repositories": ["o/n"]}, **kwargs)  # type: ignore[arg-type]


async def test_a_refused_token_makes_the_bot_alive_but_not_ready() -> None:
    state = PlatformState("slack", mode="http", clock=lambda: NOW)
    health = _health(state, refuse=True)
    assert await health.check_platforms() is False
    live = await health.live()
    assert live["status"] == "degraded"
    assert live["platforms"]["slack"]["auth"] == "failed"
    assert live["platforms"]["slack"]["auth_error"] == "invalid_auth"
    ready, report = await health.ready()
    assert ready is False
    assert report["checks"]["slack"]["ok"] is False
    assert report["checks"]["scheduler"] == {"ok": True, "state": "running"}
    app = build_server(health=health.live, ready=health.ready)
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 503


async def test_calls_and_a_passed_check_make_it_ready_and_are_reported() -> None:
    state = PlatformState("slack", mode="socket", clock=lambda: NOW)
    state.called(True)
    state.called(False, "ratelimited")
    health = _health(state, refuse=False)
    assert await health.check_platforms() is True
    ready, report = await health.ready()
    assert ready is True
    slack = report["checks"]["slack"]
    assert (slack["auth"], slack["last_ok_at"], slack["last_error"], slack["calls"], slack["failures"]) == (
        "ok", "2026-04-20T01:03:00+00:00", "ratelimited", 2, 1)
    stopped = _health(state, refuse=False, scheduler="stopped")
    await stopped.check_platforms()
    assert (await stopped.ready())[0] is False
    assert (await stopped.live())["status"] == "degraded"


async def test_scrape_time_metrics_read_the_meter_and_the_github_sources() -> None:
    meter = UsageMeter(llm_calls=3, cache_hits=2, prompt_tokens=1200, completion_tokens=300, cost_usd=0.01)
    with httpx.Client() as client:
        github = GitHubSource("token", "http://127.0.0.1:9", client)
        github.stats.requests, github.stats.not_modified, github.stats.remaining = 7, 2, 4993
        state = PlatformState("slack")
        health = _health(state, refuse=False, meter=meter, sources=lambda: [github])
        await health.check_platforms()
        samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
                   for family in health.collect() for s in family.samples}
    assert samples[("prhub_llm_calls_total", (("outcome", "sent"),))] == 3
    assert samples[("prhub_llm_calls_total", (("outcome", "cached"),))] == 2
    assert samples[("prhub_llm_tokens_total", (("kind", "prompt"),))] == 1200
    assert samples[("prhub_llm_cost_usd_total", ())] == 0.01
    assert samples[("prhub_github_requests_total", (("outcome", "sent"),))] == 7
    assert samples[("prhub_github_requests_total", (("outcome", "not_modified"),))] == 2
    assert samples[("prhub_github_rate_limit_remaining", ())] == 4993
    assert samples[("prhub_platform_ready", (("platform", "slack"),))] == 1
    app = build_server(health=health.live, ready=health.ready)
    from bot import metrics

    metrics.add_collector("test-health", health.collect)
    try:
        with TestClient(app) as client:
            text = client.get("/metrics").text
    finally:
        metrics.add_collector("test-health", lambda: [])
    families = {f.name for f in text_string_to_metric_families(text)}
    assert {"prhub_events_received", "prhub_answer_seconds", "prhub_failures", "prhub_llm_calls",
            "prhub_github_requests", "prhub_platform_ready"} <= families
