"""The bot under issue 14's faults, measured: ratios to the same bot's healthy figures in the same run.

Runs the Slack bot (real bolt app over HTTP, :class:`bot.store.ResilientStore`) against the fake Slack
API and a private ``redis-server`` on a free port (stopped and paused here, never the shared one)::

    .venv/bin/python bench/bench_reliability.py [--burst 200] [--concurrency 50]

Prints, each against a baseline taken in the same run:

- ``/healthz`` and another mention's ack while a 40,000-digit mention is handled / idle;
- a burst of mentions (a pool of 8 Redis connections): answered, each once, and its time;
- Redis stopped, then hung (``CLIENT PAUSE``): a mention's answer time / a healthy one's;
- five 20 MB bodies: the statuses and the RSS growth;
- then issue 30's figures (:mod:`bench_races`): duplicate pairs per platform, 500 mentions at 100
  concurrent with /healthz p99, 120 mentions in one channel, a rate-limited neighbour.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import httpx  # noqa: E402
from fakes.slack_api import FakeSlack, serve  # noqa: E402
from reliability.conftest import Bot, PrivateRedis, bot_settings  # noqa: E402
from reliability.test_access_and_limits import _rss_kb, _send_big  # noqa: E402
from reliability.test_chat_faults import _body, _headers, answers, wait_until  # noqa: E402


def _median_get(url: str, n: int = 15) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        httpx.get(url, timeout=30)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _answer_time(bot: Bot, fake: FakeSlack, n: int, channel: str) -> float:
    ts = f"1713509000.{n:06d}"
    body = _body(f"EvT{channel}{n}", channel, ts, "帮助")
    started = time.perf_counter()
    httpx.post(f"{bot.url}/slack/events", content=body, headers=_headers(body), timeout=30)
    assert wait_until(lambda: answers(fake, channel, ts), timeout=30)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burst", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()
    fake = FakeSlack()
    with tempfile.TemporaryDirectory() as tmp, serve(fake):
        redis = PrivateRedis(Path(tmp))
        redis.start()
        try:
            with Bot(bot_settings(fake), redis.url, max_connections=8) as bot:
                _run(bot, fake, redis, args.burst, args.concurrency)
        finally:
            redis.kill()


def _run(bot: Bot, fake: FakeSlack, redis: PrivateRedis, burst: int, concurrency: int) -> None:
    _median_get(f"{bot.url}/healthz", 5)  # warm up

    async def during_huge() -> tuple[float, float, float]:
        async with httpx.AsyncClient(timeout=60) as http:
            idle = []
            for _ in range(20):
                started = time.perf_counter()
                await http.get(f"{bot.url}/healthz")
                idle.append(time.perf_counter() - started)
            body = _body("EvHuge", "C0HUGE", "1713508000.000001", "1" * 40_000)
            huge = asyncio.create_task(http.post(f"{bot.url}/slack/events", content=body, headers=_headers(body)))
            await asyncio.sleep(0.02)
            started = time.perf_counter()
            await http.get(f"{bot.url}/healthz")
            health = time.perf_counter() - started
            other = _body("EvOther", "C0OTHER", "1713508000.000002", "帮助")
            started = time.perf_counter()
            await http.post(f"{bot.url}/slack/events", content=other, headers=_headers(other))
            ack = time.perf_counter() - started
            await huge
            return statistics.median(idle), health, ack

    idle_health, health, ack = asyncio.run(during_huge())
    print(f"40,000-digit mention: /healthz {health * 1000:.1f} ms meanwhile vs {idle_health * 1000:.1f} ms idle "
          f"(x{health / idle_health:.2f}); another mention's ack {ack * 1000:.1f} ms (x{ack / idle_health:.2f})")

    healthy = statistics.median(_answer_time(bot, fake, n, "C0BASE") for n in range(5))

    async def storm() -> float:
        gate = asyncio.Semaphore(concurrency)
        started = time.perf_counter()
        async with httpx.AsyncClient(timeout=60) as http:
            async def one(n: int) -> None:
                body = _body(f"EvB{n}", f"C0S{n:04d}", f"1713507000.{n:06d}", "帮助")
                async with gate:
                    await http.post(f"{bot.url}/slack/events", content=body, headers=_headers(body))
            await asyncio.gather(*(one(n) for n in range(burst)))
        wait_until(lambda: sum(1 for method in ("chat.postMessage", "chat.postEphemeral") for c in fake.of(method)
                               if str(c.args.get("channel", "")).startswith("C0S")) >= burst, timeout=120)
        return time.perf_counter() - started

    took = asyncio.run(storm())
    once = sum(1 for n in range(burst) if len(answers(fake, f"C0S{n:04d}", f"1713507000.{n:06d}")) == 1)
    print(f"{burst} mentions at {concurrency} concurrent (8 Redis connections): {once}/{burst} answered once, "
          f"in {took:.1f} s = x{took / (healthy * burst):.2f} of {burst} healthy answers one after another")

    redis.stop()
    down = statistics.median(_answer_time(bot, fake, n, "C0DOWN") for n in range(5))
    print(f"Redis stopped: a mention answered in {down * 1000:.0f} ms vs {healthy * 1000:.0f} ms healthy "
          f"(x{down / healthy:.2f}); /healthz {bot.health()['status']}")
    redis.start()
    wait_until(lambda: bot.health()["redis"] == "ok", timeout=10)
    redis.pause(6)
    hung = _answer_time(bot, fake, 0, "C0HUNG")
    print(f"Redis hung (CLIENT PAUSE 6 s): a mention answered in {hung * 1000:.0f} ms (x{hung / healthy:.2f} "
          "of healthy; bounded by the 0.5 s socket timeout, not the pause)")
    time.sleep(6)

    before = _rss_kb()
    results = [_send_big(bot.url, "/slack/events", chunked=False) for _ in range(5)]
    print(f"five 20 MB bodies: statuses {sorted({s for s, _ in results})}, "
          f"RSS {(_rss_kb() - before) / 1024:+.1f} MB, slowest answer {max(t for _, t in results) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_races import run_all

    run_all()
