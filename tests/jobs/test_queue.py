"""Analyses as jobs: queued once per cache key, run by workers, waited for by the bot, retried by
another worker when one dies — and the bot as before when no worker runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fakes.llm_server import FakeLLMServer, prose_reply

from bot.app import build_services
from bot.config import Settings
from bot.digest.heuristic import AnalysisContext
from bot.digest.window import parse_week
from bot.jobs import queue as queue_module
from bot.jobs.queue import JobQueue, failed_key, queued_key
from bot.jobs.worker import AnalysisWorker
from bot.models import PullRequest
from bot.sources.jsonl import SnapshotSource
from bot.store import RedisStore

from .conftest import EXAMPLE, REPO

W16 = parse_week("2026-W16", tz="Asia/Shanghai", now=datetime(2026, 4, 20, tzinfo=UTC))


@pytest.fixture
def prs() -> list[PullRequest]:
    return SnapshotSource(EXAMPLE).merged_prs(REPO, W16)


def started(settings: Settings, **kwargs: object) -> AnalysisWorker:
    worker = AnalysisWorker(settings, poll_ms=100, **kwargs)  # type: ignore[arg-type]
    worker.start()
    return worker


@pytest.fixture
def worker(settings: Settings) -> Iterator[AnalysisWorker]:
    running = started(settings)
    yield running
    running.stop(timeout_s=10)


async def wait_for(check: object, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await asyncio.to_thread(check):  # type: ignore[arg-type]
            return
        await asyncio.sleep(0.1)
    raise AssertionError("timed out")


async def test_a_digest_with_a_worker_alive_is_analysed_by_the_worker(
        settings: Settings, store: RedisStore, worker: AnalysisWorker, fake_llm: FakeLLMServer,
        prs: list[PullRequest]) -> None:
    services = build_services(settings, store, jobs=True)
    try:
        assert services.jobs is not None
        assert [b.id for b in services.jobs.workers()] == [worker.id]
        digest = await services.digests.digest(prs, repo=REPO, window=W16, deadline_s=60)
        assert digest.pending == ()
        assert all(p.analysis is not None and p.analysis.status == "llm" for p in digest.prs)
        # every per-PR call was the worker's; the bot made only the narrative call
        assert len(fake_llm.pr_requests()) == len(prs)
        assert services.llm is not None
        usage = services.llm.meter.snapshot()
        assert usage.llm_calls == len([r for r in fake_llm.requests if r.kind == "digest"]) == 1
        assert worker.counts["stored"] == len(prs)
        assert services.jobs.stats()["stored"] == len(prs)
        # the same week again: everything from the cache, no job, no call
        before = len(fake_llm.requests)
        again = await services.digests.digest(prs, repo=REPO, window=W16, deadline_s=60)
        assert again.pending == ()
        assert len(fake_llm.requests) == before
    finally:
        await services.aclose()


async def test_without_a_worker_the_bot_analyses_in_process(
        settings: Settings, store: RedisStore, fake_llm: FakeLLMServer, prs: list[PullRequest]) -> None:
    services = build_services(settings, store, jobs=True)
    try:
        digest = await services.digests.digest(prs[:5], repo=REPO, window=W16, deadline_s=30)
        assert all(p.analysis is not None and p.analysis.status == "llm" for p in digest.prs)
        assert len(fake_llm.pr_requests()) == 5
        assert services.jobs is not None
        assert services.jobs.pending() == 0  # nothing was queued
        assert services.jobs.stats() == {}
    finally:
        await services.aclose()


async def test_a_pr_asked_by_many_is_one_job_and_one_call(
        settings: Settings, store: RedisStore, fake_llm: FakeLLMServer, prs: list[PullRequest]) -> None:
    fake_llm.latency_s = 0.5
    pr = prs[0]
    replicas = [build_services(settings, store, jobs=True) for _ in range(3)]
    running = started(settings)
    try:
        answers = await asyncio.gather(*(s.digests.pr(pr, language="en") for s in replicas for _ in range(2)))
        assert len({a.analysis.summary for a in answers if a.analysis}) == 1  # one analysis, shared
        assert all(a.analysis is not None and a.analysis.status == "llm" for a in answers)
        assert len(fake_llm.pr_requests()) == 1
        assert running.counts == {"stored": 1, "cached": 0, "failed": 0}
        assert await store.get_json(queued_key(replicas[0].llm.analyzer.key(pr, "en"))) is None  # type: ignore[union-attr]
    finally:
        running.stop(timeout_s=10)
        for services in replicas:
            await services.aclose()


async def test_a_dead_workers_jobs_are_run_by_another(
        settings: Settings, store: RedisStore, fake_llm: FakeLLMServer, prs: list[PullRequest],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queue_module, "MAINTENANCE_CHANCE", 500_000)
    queue = JobQueue(settings)
    services = build_services(settings, store, jobs=True)
    assert services.llm is not None
    analyzer = services.llm.analyzer
    context = AnalysisContext(repo=settings.repo(REPO), language="zh")
    keys = [analyzer.key(pr, "zh") for pr in prs[:6]]
    for pr, key in zip(prs[:6], keys, strict=True):
        assert queue.enqueue(pr, context, key)
        assert not queue.enqueue(pr, context, key)  # queued already: not sent twice
    # a worker that fetched every job and died: Dramatiq holds them in its ack set
    dead = JobQueue(settings)
    consumer = dead.broker.consume(settings.jobs_queue, prefetch=10, timeout=100)
    taken = [m for m in (next(consumer) for _ in range(3)) if m is not None]
    assert taken
    assert queue.pending() == 0
    running = started(settings)
    try:
        await wait_for(lambda: all(queue.client.exists(settings.redis_key_prefix + k) for k in keys), 30)
        assert len(fake_llm.pr_requests()) == 6
        assert running.counts["stored"] == 6
    finally:
        running.stop(timeout_s=10)
        dead.close()
        queue.close()
        await services.aclose()


async def test_a_job_whose_model_fails_is_retried_then_gives_the_heuristic_with_the_reason(
        settings: Settings, store: RedisStore, fake_llm: FakeLLMServer, prs: list[PullRequest]) -> None:
    fake_llm.responder = lambda req: prose_reply()
    services = build_services(settings, store, jobs=True)
    running = started(settings)
    try:
        answer = await services.digests.pr(prs[0], language="zh")
        assert answer.analysis is not None
        assert answer.analysis.status != "llm"
        assert answer.analysis.fallback_reason
        assert running.counts["failed"] == 1
        # asked and re-asked once, then all again by Dramatiq's Retries (jobs_max_retries = 1)
        assert len(fake_llm.pr_requests()) == 4
        key = services.llm.analyzer.key(prs[0], "zh")  # type: ignore[union-attr]
        assert await store.get_json(key) is None  # a fallback is never cached
        assert await store.get_json(failed_key(key)) is not None
    finally:
        running.stop(timeout_s=10)
        await services.aclose()


async def test_healthz_workers_reads_the_heartbeats(settings: Settings, store: RedisStore,
                                                    worker: AnalysisWorker) -> None:
    import httpx

    from bot.handlers.server import build_server

    services = build_services(settings, store, jobs=True)
    alone = build_services(settings, store)  # no queue (prhub digest, or a bot without a model)
    try:
        for made, alive in ((services, 1), (alone, 0)):
            app = build_server(routes=made.health_routes())
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot") as client:
                answer = await client.get("/healthz/workers")
                assert (await client.get("/healthz")).text == "ok"
            assert answer.status_code == 200
            body = answer.json()
            assert body["alive"] == alive
            if alive:
                assert [w["id"] for w in body["workers"]] == [worker.id]
                assert body["queue"] == settings.jobs_queue
    finally:
        await services.aclose()
        await alone.aclose()
