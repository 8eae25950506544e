"""Benchmark: the LLM digest of verl 2026-W16 (39 PRs) against the fake LLM server.

Run: ``.venv/bin/python bench/bench_llm.py [--latency 0.5] [--concurrency 8] [--redis URL]``.

The fake server (``tests/fakes/llm_server.py``) answers every request after a
fixed latency L; the analyzer keeps at most C requests in flight. Reported:

- ``cold``  the digest with an empty cache: 39 per-PR calls, then the narrative
            call; the lower bound is ceil(39 / C) x L for the analyses plus L for
            the narrative, and the ratio cold / bound shows our overhead;
- ``warm``  the same digest again, every analysis and the narrative from the
            cache (0 calls).

By default the cache is the in-process store; ``--redis URL`` uses Redis (under
a unique key prefix, deleted afterwards). litellm is imported and one request
is made before timing, so import cost is not measured.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import time
import uuid
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import redis.asyncio as aioredis  # noqa: E402
from fakes.llm_server import FakeLLMServer  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from bot.config import Settings, load_settings  # noqa: E402
from bot.digest.llm import llm_runtime  # noqa: E402
from bot.digest.service import build_digest_async  # noqa: E402
from bot.digest.window import week_window  # noqa: E402
from bot.models import Digest, PullRequest, Window  # noqa: E402
from bot.sources.jsonl import SnapshotSource  # noqa: E402
from bot.store import MemoryStore, RedisStore, Store  # noqa: E402

REPO = "verl-project/verl"


async def _digest(prs: list[PullRequest], window: Window, settings: Settings, store: Store) -> tuple[float, Digest]:
    runtime = llm_runtime(settings, store)
    started = time.perf_counter()
    digest = await build_digest_async(prs, repo=REPO, window=window, settings=settings, analyzer=runtime.analyzer,
                                      narrator=runtime.narrator, meter=runtime.meter)
    return time.perf_counter() - started, digest


async def main_async(latency: float, concurrency: int, redis_url: str | None) -> None:
    os.environ.setdefault("PRHUB_CONFIG", str(ROOT / "prhub.toml"))
    window = week_window(2026, 16, "Asia/Shanghai")
    prs = SnapshotSource(ROOT / "examples" / "verl-2026-W16.jsonl").merged_prs(REPO, window)
    store: Store
    client = None
    if redis_url:
        client = aioredis.Redis.from_url(redis_url)
        prefix = f"bench-{uuid.uuid4().hex[:8]}:"
        store = RedisStore(client, key_prefix=prefix)
    else:
        store = MemoryStore()
    with FakeLLMServer(latency_s=latency) as fake:
        settings = load_settings().model_copy(update={
            "llm_model": "openai/fake-model", "llm_api_base": fake.base_url, "llm_api_key": SecretStr("bench"),
            "llm_concurrency": concurrency, "llm_timeout_s": 30 + 4 * latency,
        })
        await _digest(prs[:1], window, settings, MemoryStore())  # warm-up: imports, connection set-up
        fake.reset()
        cold, digest = await _digest(prs, window, settings, store)
        calls = len(fake.requests)
        warm, again = await _digest(prs, window, settings, store)
    if client is not None:
        keys = [k async for k in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
    n = len(prs)
    bound = math.ceil(n / concurrency) * latency + latency
    print(f"LLM digest of {REPO} 2026-W16: {n} PRs, latency L={latency:g}s, concurrency C={concurrency}, "
          f"cache {'redis' if redis_url else 'memory'}")
    print(f"  cold  {cold:7.3f}s  ({calls} requests, {digest.usage.llm_calls} calls counted; "
          f"bound ceil({n}/{concurrency})xL + L = {bound:.3f}s; cold/bound = {cold / bound:.2f})")
    print(f"  warm  {warm:7.3f}s  ({again.usage.llm_calls} calls, {again.usage.cache_hits} cache hits)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the fake LLM takes per reply (L)")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight (C)")
    parser.add_argument("--redis", default=None, help="Redis URL for the cache (default: in-process)")
    args = parser.parse_args()
    asyncio.run(main_async(args.latency, args.concurrency, args.redis))


if __name__ == "__main__":
    main()
