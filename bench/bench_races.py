"""Issue 30's figures, each in one run against a baseline of the same run (imported by
``bench/bench_reliability.py``; also runnable alone)::

    .venv/bin/python bench/bench_races.py

- 40 simultaneous duplicate pairs per platform (Slack over HTTP through bolt; Feishu through lark-oapi's
  dispatcher): how many of the 40 are answered, and how many twice;
- 500 mentions at 100 concurrent on a private Redis: answered once, outages declared (false ones: Redis
  never stopped), ``/healthz`` p50/p99 during the burst against idle;
- 120 mentions in one channel behind Slack's pacing, scaled ten times faster (4 messages per 0.4 s, a
  6 s deadline on the work for the default 60 s): answered, and told "没能回答";
- a rate-limited GitHub channel beside a snapshot channel: the snapshot answer's time during the limit
  against the same answer's time with no limit (the delay, and the ratio).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import httpx  # noqa: E402
from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI  # noqa: E402
from fakes.github_server import FakeGitHub  # noqa: E402
from fakes.github_server import serve as serve_github  # noqa: E402
from fakes.slack_api import FakeSlack, serve  # noqa: E402
from reliability.conftest import EXAMPLE, REPO, Bot, PrivateRedis, bot_settings  # noqa: E402
from reliability.test_chat_faults import _body, _headers, answers, wait_until  # noqa: E402
from starlette.applications import Starlette  # noqa: E402

from bot.app import build_services  # noqa: E402
from bot.config import ChannelConfig  # noqa: E402
from bot.delivery.feishu import FeishuClient, FeishuDeliverer  # noqa: E402
from bot.delivery.pacing import Pacer  # noqa: E402
from bot.digest.window import date_window  # noqa: E402
from bot.handlers.feishu.app import FeishuBot  # noqa: E402
from bot.sources.jsonl import SnapshotSource  # noqa: E402
from bot.store import RedisStore  # noqa: E402


async def _at_once(url: str, requests: list[tuple[str, dict[str, str]]]) -> None:
    async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=200)) as http:
        gate = asyncio.Event()

        async def one(body: str, headers: dict[str, str]) -> None:
            await gate.wait()
            await http.post(f"{url}/slack/events", content=body, headers=headers)

        tasks = [asyncio.create_task(one(b, h)) for b, h in requests]
        await asyncio.sleep(0.05)
        gate.set()
        await asyncio.gather(*tasks)


def slack_pairs(fake: FakeSlack, redis: PrivateRedis) -> str:
    requests = []
    for n in range(40):
        body = _body(f"EvPair{n}", f"C0P{n:02d}", f"1713600000.{n:06d}", "帮助")
        requests += [(body, _headers(body)), (body, _headers(body, retry=1))]
    with Bot(bot_settings(fake), redis.url) as bot:
        asyncio.run(_at_once(bot.url, requests))
        wait_until(lambda: all(answers(fake, f"C0P{n:02d}", f"1713600000.{n:06d}") for n in range(40)), timeout=30)
        time.sleep(0.5)
    counts = [len(answers(fake, f"C0P{n:02d}", f"1713600000.{n:06d}")) for n in range(40)]
    return f"{sum(1 for c in counts if c)}/40 answered, {sum(1 for c in counts if c > 1)} twice"


async def feishu_pairs(redis: PrivateRedis) -> str:
    payload: dict[str, Any] = json.loads((ROOT / "tests/fixtures/feishu/p2p_text.json").read_text("utf-8"))
    with FakeFeishuAPI() as fake:
        store = RedisStore.from_url(redis.url, degrade=False, key_prefix="bench-feishu:")
        settings = bot_settings(FakeSlack())
        services = build_services(settings, store)
        client = FeishuClient(app_id=APP_ID, app_secret=APP_SECRET, base_url=fake.base_url, pacer=Pacer())
        bot = FeishuBot(deliverer=FeishuDeliverer(client), core=services.core, claims=services.claims,
                        verification_token=payload["header"]["token"])
        await bot.start()
        app = Starlette(routes=[bot.events_route()])
        bodies = []
        for n in range(40):
            one = json.loads(json.dumps(payload))
            one["header"]["event_id"] = f"ev_bench_{n}"
            one["event"]["message"]["message_id"] = f"om_bench_{n}"
            one["event"]["message"]["content"] = json.dumps({"text": "帮助"})
            bodies += [json.dumps(one).encode()] * 2
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot") as http:
            await asyncio.gather(*(http.post("/feishu/events", content=b,
                                             headers={"Content-Type": "application/json"}) for b in bodies))
            for _ in range(100):
                await bot.drain()
                if len({m.target for m in fake.replies()}) == 40:
                    break
                await asyncio.sleep(0.05)
        counts = Counter(m.target for m in fake.replies())
        await services.aclose()
        await store.close()
    return f"{len(counts)}/40 answered, {sum(1 for c in counts.values() if c > 1)} twice"


class BotProcess:
    """The bot (:class:`reliability.conftest.Bot`) in a process of its own, so the load this bench makes
    does not share the bot's interpreter lock; ``url`` once started, its store's counters on exit."""

    def __init__(self, fake: FakeSlack, redis: PrivateRedis) -> None:
        self._args = [sys.executable, str(Path(__file__).with_name("bot_process.py")), fake.base_url, redis.url]
        self.url = ""
        self.counters: dict[str, Any] = {}

    def __enter__(self) -> BotProcess:
        self._proc = subprocess.Popen(self._args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._proc.stdout is not None
        self.url = self._proc.stdout.readline().strip()
        return self

    def __exit__(self, *_: object) -> None:
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._proc.stdin.close()
        self.counters = json.loads(self._proc.stdout.readline() or "{}")
        self._proc.wait(30)


def burst(fake: FakeSlack, redis: PrivateRedis, total: int = 500, concurrency: int = 100) -> str:
    with BotProcess(fake, redis) as bot:
        async def run() -> tuple[list[float], list[float], float]:
            async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=concurrency + 10)) as http:
                idle = []
                for _ in range(30):
                    started = time.perf_counter()
                    await http.get(f"{bot.url}/healthz")
                    idle.append(time.perf_counter() - started)
                gate = asyncio.Semaphore(concurrency)
                during: list[float] = []
                done = asyncio.Event()

                async def one(n: int) -> None:
                    body = _body(f"EvBurst{n}", f"C0U{n:03d}", f"1713650000.{n:06d}", "帮助")
                    async with gate:
                        await http.post(f"{bot.url}/slack/events", content=body, headers=_headers(body))

                async def watch() -> None:
                    async with httpx.AsyncClient(timeout=30) as probe:  # its own connection, as a health check
                        while not done.is_set():
                            started = time.perf_counter()
                            await probe.get(f"{bot.url}/healthz")
                            during.append(time.perf_counter() - started)
                            await asyncio.sleep(0.05)

                watcher = asyncio.create_task(watch())
                started = time.perf_counter()
                await asyncio.gather(*(one(n) for n in range(total)))
                await asyncio.to_thread(wait_until, lambda: all(answers(fake, f"C0U{n:03d}", f"1713650000.{n:06d}")
                                                                for n in range(total)), 180)
                took = time.perf_counter() - started
                done.set()
                await watcher
                return idle, during, took

        idle, during, took = asyncio.run(run())
        time.sleep(0.5)
        once = sum(1 for n in range(total) if len(answers(fake, f"C0U{n:03d}", f"1713650000.{n:06d}")) == 1)
    outages = bot.counters.get("outages")

    def p99(values: list[float]) -> float:
        return statistics.quantiles(values, n=100)[98] if len(values) > 1 else values[0]

    return (f"{once}/{total} answered once in {took:.1f} s, {outages} Redis outages declared (Redis never stopped); "
            f"/healthz during p50 {statistics.median(during) * 1000:.0f} ms / p99 {p99(during) * 1000:.0f} ms "
            f"over {len(during)} probes vs idle p50 {statistics.median(idle) * 1000:.1f} ms "
            f"(p99 x{p99(during) / p99(idle):.1f})")


def busy_channel(fake: FakeSlack, redis: PrivateRedis, total: int = 120) -> str:
    pacer = Pacer({"slack": ((4, 0.4),)})  # Slack's 4 per 4 s, ten times faster
    settings = bot_settings(fake, answer_deadline_s=6.0)  # the default 60 s, ten times shorter
    requests = []
    for n in range(total):
        body = _body(f"EvBusy{n}", "C0BUSY", f"1713660000.{n:06d}", "帮助")
        requests.append((body, _headers(body)))
    with Bot(settings, redis.url, pacer=pacer) as bot:
        started = time.perf_counter()
        asyncio.run(_at_once(bot.url, requests))
        wait_until(lambda: all(answers(fake, "C0BUSY", f"1713660000.{n:06d}") for n in range(total)), timeout=120)
        took = time.perf_counter() - started
        time.sleep(0.5)
    answered = sum(1 for n in range(total) if answers(fake, "C0BUSY", f"1713660000.{n:06d}"))
    failed = sum(1 for c in fake.of("chat.postEphemeral") if c.args.get("channel") == "C0BUSY"
                 and "没能回答" in str(c.args.get("text", "")))
    return (f"{answered}/{total} answered, {failed} told 没能回答, the last after {took:.1f} s "
            f"(the pacing alone: {total * 0.1:.1f} s; x{took / (total * 0.1):.2f})")


def slow_neighbour(fake: FakeSlack, redis: PrivateRedis) -> str:
    snapshot = SnapshotSource(Path(str(EXAMPLE)))
    prs = snapshot.merged_prs(REPO, date_window(date(2000, 1, 1), date(2100, 1, 1), "UTC"))
    github = FakeGitHub(prs)
    with serve_github(github) as url:
        settings = bot_settings(fake, github_token=github.token, github_api_url=url,
                                channels={"slack:C0GH": ChannelConfig(repo=REPO, source="github")})
        with Bot(settings, redis.url) as bot:
            def snapshot_answer(n: int) -> float:
                body = _body(f"EvSn{n}", "C0SN", f"1713670000.{n:06d}", "PR #6046 值得读吗")
                started = time.perf_counter()
                httpx.post(f"{bot.url}/slack/events", content=body, headers=_headers(body), timeout=30)
                wait_until(lambda: answers(fake, "C0SN", f"1713670000.{n:06d}"), timeout=60)
                return time.perf_counter() - started

            base = statistics.median(snapshot_answer(n) for n in range(5))
            github.limit_until(time.time() + 8)
            for n in range(12):
                body = _body(f"EvGh{n}", "C0GH", f"1713680000.{n:06d}", "PR #6046 值得读吗")
                httpx.post(f"{bot.url}/slack/events", content=body, headers=_headers(body), timeout=30)
            time.sleep(0.5)
            limited = statistics.median(snapshot_answer(n) for n in range(5, 10))
            def told_count() -> int:
                return sum(1 for c in fake.of("chat.postEphemeral") if "GitHub 限流中" in str(c.args.get("text", "")))

            wait_until(lambda: told_count() >= 12, timeout=10)
            told = told_count()
            wait_until(lambda: all(answers(fake, "C0GH", f"1713680000.{n:06d}", ("chat.postMessage",))
                                   for n in range(12)), timeout=60)
            later = sum(1 for n in range(12) if answers(fake, "C0GH", f"1713680000.{n:06d}", ("chat.postMessage",)))
    return (f"snapshot channel answered in {limited * 1000:.0f} ms while GitHub is rate-limited "
            f"vs {base * 1000:.0f} ms without (delay {max(0.0, limited - base) * 1000:.0f} ms, "
            f"x{limited / base:.2f}); the 12 GitHub askers: "
            f"{told} told 'GitHub 限流中', {later}/12 answered after the limit")


def run_all() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        redis = PrivateRedis(Path(tmp))
        redis.start()
        try:
            for name, step in (("40 duplicate pairs, Slack", lambda fake: slack_pairs(fake, redis)),
                               ("40 duplicate pairs, Feishu", lambda fake: asyncio.run(feishu_pairs(redis))),
                               ("500 mentions at 100 concurrent", lambda fake: burst(fake, redis)),
                               ("120 mentions in one channel", lambda fake: busy_channel(fake, redis)),
                               ("a rate-limited neighbour", lambda fake: slow_neighbour(fake, redis))):
                fake = FakeSlack()
                with serve(fake):
                    print(f"{name}: {step(fake)}", flush=True)
                redis.client().flushall()
        finally:
            redis.kill()


if __name__ == "__main__":
    run_all()
