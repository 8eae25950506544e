"""Benchmark: 200 PR analyses as jobs, run by one and by three ``prhub worker`` processes, against the fake LLM.

Run: ``.venv/bin/python bench/bench_jobs.py [--prs 200] [--latency 1.0] [--concurrency 4] [--redis URL]``
(Redis must answer; default ``redis://127.0.0.1:6379/15``, under a unique key prefix and queue, deleted
afterwards).

The fake server (``tests/fakes/llm_server.py``) answers every request after L seconds. Each worker runs
``--concurrency`` jobs at once and is started, and seen alive, before the clock starts. Reported, in one run:

- ``in-process``  the bot alone, no worker: the LLM analyzer in one process (``llm_concurrency`` = C)
                  analyses the PRs — the baseline of today;
- ``1 worker``    the same PRs queued as jobs (job id = cache key), waited for until every analysis is in
                  Redis; the lower bound is ceil(N / C) x L;
- ``3 workers``   the same with three workers; its speed-up over one worker should be near 3 (>= 2.5);
- ``3, one killed``  three workers, one SIGKILLed when a third of the analyses are stored: every analysis
                  is still stored exactly once (the jobs' ``stored`` count), and the model is asked at most
                  N + C times (the killed worker's jobs in flight are asked again by another worker, after
                  its heartbeat is ``jobs_heartbeat_timeout_s`` = 5 s old).

Each scenario starts with an empty cache (its own key prefix). The PRs are the first N of verl's real
records in ``tests/data/verl-prs.jsonl.gz`` (with their per-file patches).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
import uuid
from datetime import date
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("PRHUB_CONFIG", str(ROOT / "prhub.toml"))

import redis  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from fakes.llm_server import FakeLLMServer  # noqa: E402
from pydantic import SecretStr  # noqa: E402
from worker_support import WorkerProcess, wait_alive  # noqa: E402

from bot.config import Settings, load_settings  # noqa: E402
from bot.digest.heuristic import AnalysisContext  # noqa: E402
from bot.digest.llm import llm_runtime  # noqa: E402
from bot.digest.window import date_window  # noqa: E402
from bot.jobs.queue import JobQueue  # noqa: E402
from bot.models import PullRequest  # noqa: E402
from bot.sources.jsonl import SnapshotSource  # noqa: E402
from bot.store import MemoryStore, RedisStore  # noqa: E402

REPO = "verl-project/verl"


def scenario_settings(base: Settings, redis_url: str) -> Settings:
    """``base`` under a fresh key prefix and queue (an empty cache)."""
    tag = uuid.uuid4().hex[:10]
    return base.model_copy(update={"redis_url": redis_url, "redis_key_prefix": f"bench-jobs-{tag}:",
                                   "jobs_queue": f"bench{tag}"})


def cleanup(settings: Settings) -> None:
    client = redis.Redis.from_url(settings.redis_url)
    keys = list(client.scan_iter(match=settings.redis_key_prefix + "*", count=1000))
    for start in range(0, len(keys), 500):
        client.delete(*keys[start:start + 500])
    client.close()


async def in_process(prs: list[PullRequest], settings: Settings) -> float:
    client = aioredis.Redis.from_url(settings.redis_url)
    store = RedisStore(client, key_prefix=settings.redis_key_prefix)
    runtime = llm_runtime(settings, store)
    context = AnalysisContext(repo=settings.repo(REPO), language="zh")
    started = time.perf_counter()
    await asyncio.gather(*(runtime.analyzer.analyze_async(pr, context) for pr in prs))
    took = time.perf_counter() - started
    await client.aclose()
    return took


def stored(queue: JobQueue, keys: list[str]) -> int:
    pipe = queue.client.pipeline(transaction=False)
    for key in keys:
        pipe.exists(queue.key(key))
    return sum(int(x) for x in pipe.execute())


def run_workers(prs: list[PullRequest], settings: Settings, *, workers: int, concurrency: int,
                kill_after: int | None = None, logs: Path | None = None) -> tuple[float, JobQueue]:
    """Start ``workers`` processes, then (clock on) queue every PR and wait until all are stored."""
    keyer = llm_runtime(settings, MemoryStore()).analyzer
    keys = [keyer.key(pr, "zh") for pr in prs]
    queue = JobQueue(settings)
    procs = [WorkerProcess(settings, concurrency=concurrency,
                           log=(logs / f"worker-{n}.log") if logs else None) for n in range(workers)]
    try:
        wait_alive(queue, {p.pid for p in procs}, timeout_s=120)
        context = AnalysisContext(repo=settings.repo(REPO), language="zh")
        started = time.perf_counter()
        for pr, key in zip(prs, keys, strict=True):
            queue.enqueue(pr, context, key)
        killed = False
        deadline = started + 600
        while (done := stored(queue, keys)) < len(keys):
            if kill_after is not None and not killed and done >= kill_after:
                procs[0].kill()
                killed = True
            if time.perf_counter() > deadline:
                raise SystemExit(f"only {done} of {len(keys)} analyses after 600 s")
            time.sleep(0.05)
        took = time.perf_counter() - started
    finally:
        for proc in procs:
            proc.stop()
    return took, queue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prs", type=int, default=200)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15")
    parser.add_argument("--logs", type=Path, default=None, help="write each worker's output into this folder")
    args = parser.parse_args()
    if args.logs:
        args.logs.mkdir(parents=True, exist_ok=True)
    every = SnapshotSource(ROOT / "tests" / "data" / "verl-prs.jsonl.gz").merged_prs(
        REPO, date_window(date(2000, 1, 1), date(2100, 12, 31), "UTC"))
    prs = [pr for pr in every if pr.files]
    prs = sorted(prs, key=lambda p: p.number)[: args.prs]
    n, c, latency = len(prs), args.concurrency, args.latency
    results: dict[str, float] = {}
    with FakeLLMServer(latency_s=latency) as fake:
        base = load_settings().model_copy(update={
            "llm_model": "openai/fake-model", "llm_api_base": fake.base_url, "llm_api_key": SecretStr("bench"),
            "llm_concurrency": c, "llm_timeout_s": 30 + 4 * latency, "jobs_heartbeat_timeout_s": 5,
        })
        s = scenario_settings(base, args.redis)
        try:
            asyncio.run(in_process(prs[:1], scenario_settings(base, args.redis)))  # imports, connections
            fake.reset()
            results["in-process"] = asyncio.run(in_process(prs, s))
        finally:
            cleanup(s)
        for workers in (1, 3):
            fake.reset()
            s = scenario_settings(base, args.redis)
            try:
                results[f"{workers} worker{'s' if workers > 1 else ''}"], queue = run_workers(
                    prs, s, workers=workers, concurrency=c, logs=args.logs)
                assert queue.stats().get("stored") == n, queue.stats()
                assert len(fake.pr_requests()) == n, len(fake.pr_requests())
                queue.close()
            finally:
                cleanup(s)
        fake.reset()
        s = scenario_settings(base, args.redis)
        try:
            results["3, one killed"], queue = run_workers(prs, s, workers=3, concurrency=c, kill_after=n // 3,
                                                          logs=args.logs)
            stats = queue.stats()
            asked = len(fake.pr_requests())
            queue.close()
        finally:
            cleanup(s)
    bound = math.ceil(n / c) * latency
    one = results["1 worker"]
    print(f"{n} PR analyses, fake LLM latency {latency:g} s, {c} jobs at once per worker "
          f"(one-worker lower bound ceil({n}/{c}) x {latency:g} = {bound:.1f} s)")
    for name, took in results.items():
        print(f"  {name:<14} {took:7.2f} s   {one / took:5.2f}x one worker   "
              f"{results['in-process'] / took:5.2f}x in-process")
    print(f"  3 workers vs 1: {one / results['3 workers']:.2f}x (target >= 2.5x); "
          f"1 worker vs its bound: {one / bound:.2f}")
    print(f"  one killed: stored {stats.get('stored', 0)} of {n} (each once), found cached {stats.get('cached', 0)}, "
          f"model asked {asked} times = {n} + {asked - n} repeated (limit {n} + {c} in flight)")
    ok = one / results["3 workers"] >= 2.5 and stats.get("stored") == n and asked <= n + c
    print("  PASS" if ok else "  FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
