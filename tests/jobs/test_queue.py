"""Analyses as jobs: queued once per cache key, run by `prhub worker` processes, waited for by the bot,
retried by another worker when one dies — and the bot as before when no worker runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from dramatiq import Message
from fakes.llm_server import FakeLLMServer, prose_reply
from pydantic import SecretStr
from worker_support import WorkerProcess, wait_alive

from bot.app import build_services
from bot.config import Settings
from bot.digest.heuristic import AnalysisContext
from bot.digest.window import parse_week
from bot.handlers.server import build_server
from bot.jobs.queue import ACTOR, JobQueue, failed_key, queued_key
from bot.models import PullRequest
from bot.sources.jsonl import SnapshotSource
from bot.store import RedisStore

from .conftest import EXAMPLE, REPO

W16 = parse_week("2026-W16", tz="Asia/Shanghai", now=datetime(2026, 4, 20, tzinfo=UTC))


@pytest.fixture
def prs() -> list[PullRequest]:
    return SnapshotSource(EXAMPLE).merged_prs(REPO, W16)


@pytest.fixture
def queue(settings: Settings) -> Iterator[JobQueue]:
    made = JobQueue(settings)
    yield made
    made.close()


@pytest.fixture
def worker(settings: Settings, queue: JobQueue) -> Iterator[WorkerProcess]:
    running = WorkerProcess(settings)
    try:
        wait_alive(queue, {running.pid})
        yield running
    finally:
        running.stop()


async def wait_for(check: Callable[[], bool], timeout_s: float = 30.0, what: Callable[[], object] = str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await asyncio.to_thread(check):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out: {what()}")


async def test_a_digest_with_a_worker_alive_is_analysed_by_the_worker(
        settings: Settings, store: RedisStore, queue: JobQueue, worker: WorkerProcess, fake_llm: FakeLLMServer,
        prs: list[PullRequest]) -> None:
    services = build_services(settings, store, jobs=True)
    try:
        assert services.jobs is not None
        assert [b.pid for b in services.jobs.workers()] == [worker.pid]
        digest = await services.digests.digest(prs, repo=REPO, window=W16, deadline_s=60)
        assert digest.pending == ()
        assert all(p.analysis is not None and p.analysis.status == "llm" for p in digest.prs)
        # every per-PR call was the worker's; the bot made only the narrative call
        assert len(fake_llm.pr_requests()) == len(prs)
        assert services.llm is not None
        assert services.llm.meter.snapshot().llm_calls == len([r for r in fake_llm.requests if r.kind == "digest"])
        assert queue.stats() == {"stored": len(prs)}
        # the same week again: everything from the cache, no job, no call
        before = len(fake_llm.requests)
        again = await services.digests.digest(prs, repo=REPO, window=W16, deadline_s=60)
        assert again.pending == ()
        assert len(fake_llm.requests) == before
        assert queue.stats() == {"stored": len(prs)}
    finally:
        await services.aclose()


async def test_without_a_worker_the_bot_analyses_in_process(
        settings: Settings, store: RedisStore, queue: JobQueue, fake_llm: FakeLLMServer,
        prs: list[PullRequest]) -> None:
    services = build_services(settings, store, jobs=True)
    try:
        digest = await services.digests.digest(prs[:5], repo=REPO, window=W16, deadline_s=30)
        assert all(p.analysis is not None and p.analysis.status == "llm" for p in digest.prs)
        assert len(fake_llm.pr_requests()) == 5
        assert queue.pending() == 0  # nothing was queued
        assert queue.stats() == {}
    finally:
        await services.aclose()


async def test_a_pr_asked_by_many_is_one_job_and_one_call(
        settings: Settings, store: RedisStore, queue: JobQueue, worker: WorkerProcess, fake_llm: FakeLLMServer,
        prs: list[PullRequest]) -> None:
    fake_llm.latency_s = 0.5
    pr = prs[0]
    replicas = [build_services(settings, store, jobs=True) for _ in range(3)]
    try:
        answers = await asyncio.gather(*(s.digests.pr(pr, language="en") for s in replicas for _ in range(2)))
        assert len({a.analysis.summary for a in answers if a.analysis}) == 1  # one analysis, shared
        assert all(a.analysis is not None and a.analysis.status == "llm" for a in answers)
        assert len(fake_llm.pr_requests()) == 1
        assert queue.stats() == {"stored": 1}
        key = replicas[0].llm.analyzer.key(pr, "en")  # type: ignore[union-attr]
        assert await store.get_json(queued_key(key)) is None  # the job ended: a later ask may queue again
    finally:
        for services in replicas:
            await services.aclose()


async def test_a_dead_workers_jobs_are_run_by_another(
        settings: Settings, store: RedisStore, queue: JobQueue, fake_llm: FakeLLMServer,
        prs: list[PullRequest], tmp_path: Path) -> None:
    settings = settings.model_copy(update={"jobs_maintenance_chance": 500_000})
    services = build_services(settings, store, jobs=True)
    assert services.llm is not None
    analyzer = services.llm.analyzer
    context = AnalysisContext(repo=settings.repo(REPO), language="zh")
    keys = [analyzer.key(pr, "zh") for pr in prs[:6]]
    for pr, key in zip(prs[:6], keys, strict=True):
        assert queue.enqueue(pr, context, key)
        assert not queue.enqueue(pr, context, key)  # queued already: not sent twice
    # a worker that fetched jobs and died: Dramatiq holds them in its ack set until its heartbeat is old
    dead = JobQueue(settings)
    consumer = dead.broker.consume(settings.jobs_queue, prefetch=10, timeout=100)
    taken = [m for m in (next(consumer) for _ in range(3)) if m is not None]
    assert taken
    assert queue.pending() == 0
    dead.close()
    running = WorkerProcess(settings, log=tmp_path / "worker.log")
    try:
        await asyncio.to_thread(wait_alive, queue, {running.pid})
        # counted after the analysis is stored
        await wait_for(lambda: queue.stats().get("stored") == 6, 120, what=lambda: (
            queue.stats(), queue.pending(), len(fake_llm.pr_requests()),
            (tmp_path / "worker.log").read_text()[-3000:]))
        assert all(queue.client.exists(settings.redis_key_prefix + k) for k in keys)
        assert len(fake_llm.pr_requests()) == 6
        assert queue.stats() == {"stored": 6}
    finally:
        running.stop()
        await services.aclose()


async def test_a_job_whose_model_fails_is_retried_then_gives_the_heuristic_with_the_reason(
        settings: Settings, store: RedisStore, queue: JobQueue, worker: WorkerProcess, fake_llm: FakeLLMServer,
        prs: list[PullRequest]) -> None:
    fake_llm.responder = lambda req: prose_reply()
    services = build_services(settings, store, jobs=True)
    try:
        answer = await services.digests.pr(prs[0], language="zh")
        assert answer.analysis is not None
        assert answer.analysis.status != "llm"
        assert answer.analysis.fallback_reason
        assert queue.stats() == {"failed": 1}
        # asked and re-asked once, then all again by Dramatiq's Retries (jobs_max_retries = 1)
        assert len(fake_llm.pr_requests()) == 4
        key = services.llm.analyzer.key(prs[0], "zh")  # type: ignore[union-attr]
        assert await store.get_json(key) is None  # a fallback is never cached
        assert await store.get_json(failed_key(key)) is not None
    finally:
        await services.aclose()


async def test_a_job_that_cannot_run_tells_its_waiters_who_then_analyse_themselves(
        settings: Settings, store: RedisStore, queue: JobQueue, worker: WorkerProcess, fake_llm: FakeLLMServer,
        prs: list[PullRequest]) -> None:
    """A message the worker cannot read (an older bot's, a bug) is retried, then given up; the bot that
    waits for it analyses the PR itself instead of waiting for ever."""
    services = build_services(settings, store, jobs=True)
    assert services.llm is not None
    key = services.llm.analyzer.key(prs[0], "zh")
    try:
        # what a broken producer would queue: the job id of prs[0], a body the worker cannot read
        assert queue.client.set(queue.key(queued_key(key)), "1", nx=True, ex=600)
        queue.broker.enqueue(Message(queue_name=settings.jobs_queue, actor_name=ACTOR, args=(),
                                     kwargs={"key": key, "pr": {"number": "not a PR"}, "language": "zh",
                                             "hot_files": []}, options={}, message_id=key))
        answer = await services.digests.pr(prs[0], language="zh")
        assert answer.analysis is not None
        assert answer.analysis.status == "llm"  # made by the bot itself, after the job gave up
        assert queue.stats() == {"failed": 1}
        assert len(fake_llm.pr_requests()) == 1
    finally:
        await services.aclose()


PAGE_SECRET = "page-secret-of-enough-length-0123"


async def test_healthz_workers_reads_the_heartbeats(settings: Settings, store: RedisStore,
                                                    worker: WorkerProcess) -> None:
    settings = settings.model_copy(update={"page_secret": SecretStr(PAGE_SECRET)})
    services = build_services(settings, store, jobs=True)
    alone = build_services(settings, store)  # no queue (prhub digest, or a bot without a model)
    try:
        for made, alive in ((services, 1), (alone, 0)):
            app = build_server(routes=made.health_routes())
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot") as client:
                answer = await client.get("/healthz/workers")
                owner = await client.get("/healthz/workers", headers={"Authorization": f"Bearer {PAGE_SECRET}"})
                forged = await client.get("/healthz/workers", headers={"Authorization": "Bearer guess"})
                assert (await client.get("/healthz")).json()["status"] == "ok"
            assert answer.status_code == 200
            body = answer.json()
            assert body["alive"] == alive
            if alive:  # host names and process ids only with the pages' access
                assert [w["pid"] for w in owner.json()["workers"]] == [worker.pid]
                assert all("pid" not in w and "host" not in w for w in body["workers"] + forged.json()["workers"])
                assert body["queue"] == settings.jobs_queue
    finally:
        await services.aclose()
        await alone.aclose()


def test_a_message_that_does_not_decode_is_dead_lettered_not_fatal(settings: Settings, queue: JobQueue,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    namespace = queue.broker.namespace
    name = settings.jobs_queue
    queue.client.hset(f"{namespace}:{name}.msgs", "bad-1", b"\xff not json {")
    queue.client.rpush(f"{namespace}:{name}", "bad-1")
    consumer = queue.broker.consume(name, prefetch=10, timeout=100)
    for _ in range(3):  # a consumer that meets it goes on (Dramatiq's own raises and stops the worker's thread)
        assert next(consumer) is None
    assert queue.client.zscore(f"{namespace}:{name}.XQ", "bad-1") is not None  # in the dead letters
    assert not queue.client.hexists(f"{namespace}:{name}.msgs", "bad-1")
    assert any("does not decode" in r.getMessage() for r in caplog.records)
