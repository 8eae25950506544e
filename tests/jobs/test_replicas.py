"""Three `prhub serve` replicas and two workers on one Redis, driven by GitHub webhooks: each merged PR is
analysed once per language, alerted once per subscriber however its delivery is repeated, and the
week's push posts once with every analysis ready — no per-PR model call at push time."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from zoneinfo import ZoneInfo

import httpx
import pytest
from fakes.llm_server import FakeLLMServer
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve
from llm_support import llm_settings
from pydantic import SecretStr
from redis_support import REDIS_URL
from worker_support import WorkerProcess, wait_alive

from bot.app import Services, build_services
from bot.config import ChannelConfig, ConfiguredSubscription, Settings
from bot.delivery.pacing import Pacer
from bot.digest.window import parse_week
from bot.handlers.github import signature
from bot.handlers.server import build_server
from bot.jobs.queue import JobQueue
from bot.sources.jsonl import SnapshotSource
from bot.store import RedisStore

from .conftest import EXAMPLE, REPO

SECRET = "webhook-secret-for-tests"
PUSHED = "slack:C0PUSH"
ALERTED = "slack:C0ALERT"
FAST = {"slack": ((1, 0.02),)}
"""One message per 20 ms to a chat: paced as Slack is, without its real seconds."""
MONDAY_W17 = datetime(2026, 4, 20, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake


@pytest.fixture
def cluster_settings(verl_settings: Settings, fake_llm: FakeLLMServer, fake_slack: FakeSlack, prefix: str,
                     settings: Settings) -> Settings:
    base = llm_settings(verl_settings, fake_llm.base_url, redis_url=REDIS_URL, redis_key_prefix=prefix,
                        jobs_queue=settings.jobs_queue, jobs_heartbeat_timeout_s=2, llm_timeout_s=15.0)
    return base.model_copy(update={
        "slack_bot_token": SecretStr(BOT_TOKEN), "slack_api_url": fake_slack.base_url + "/api",
        "github_webhook_secret": SecretStr(SECRET), "alerts_batch_s": 0, "charts": False,
        "channels": {PUSHED: ChannelConfig(repo=REPO, source=f"jsonl:{EXAMPLE}", language="zh",
                                           timezone="Asia/Shanghai", push="mon 10:00"),
                     ALERTED: ChannelConfig(repo=REPO, source=f"jsonl:{EXAMPLE}", language="en")},
        "subscriptions": (ConfiguredSubscription(subscriber=ALERTED, repo=REPO, filter=""),),
    })


def client_of(services: Services) -> httpx.AsyncClient:
    app = build_server(routes=services.webhook_routes())
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot")


async def deliver(client: httpx.AsyncClient, number: int, delivery: str) -> int:
    body = json.dumps({"action": "closed", "number": number, "repository": {"full_name": REPO},
                       "pull_request": {"number": number, "merged": True}}).encode()
    answer = await client.post("/github/webhook", content=body, headers={
        "X-GitHub-Event": "pull_request", "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": signature(SECRET, body)})
    return answer.status_code


async def test_webhooks_at_three_replicas_with_two_workers(
        cluster_settings: Settings, store: RedisStore, fake_llm: FakeLLMServer, fake_slack: FakeSlack) -> None:
    week = parse_week("2026-W16", tz="Asia/Shanghai", now=MONDAY_W17)
    numbers = [pr.number for pr in SnapshotSource(EXAMPLE).merged_prs(REPO, week)]
    workers = [WorkerProcess(cluster_settings) for _ in range(2)]
    queue = JobQueue(cluster_settings)
    wait_alive(queue, {w.pid for w in workers})
    replicas = [build_services(cluster_settings, store, jobs=True, clock=lambda: MONDAY_W17, pacer=Pacer(FAST))
                for _ in range(3)]
    clients = [client_of(r) for r in replicas]
    try:
        # each delivery reaches replicas 0 and 1; every fifth is redelivered to replica 2 as well
        statuses: list[int] = []
        for n in numbers:
            statuses += await asyncio.gather(deliver(clients[0], n, f"del-{n}"), deliver(clients[1], n, f"del-{n}"))
            if n % 5 == 0:
                statuses.append(await deliver(clients[2], n, f"del-{n}"))
        assert statuses.count(202) == len(numbers)  # one replica took each delivery
        for replica in replicas:
            assert replica.webhook is not None
        await asyncio.gather(*(r.webhook.idle() for r in replicas if r.webhook is not None))

        # one analysis per PR and language (zh for the push channel, en for the alerted one), made by the workers
        asked = Counter((r.pr_number, "zh" if "简体中文" in r.text else "en") for r in fake_llm.pr_requests())
        assert set(asked.values()) == {1}
        assert len(asked) == 2 * len(numbers)
        assert queue.stats() == {"stored": 2 * len(numbers)}
        assert all(r.llm is not None and r.llm.meter.llm_calls == 0 for r in replicas)

        # one alert per PR to the subscriber
        # deliveries that found the queue locked by another replica's delivery: the next poll sends them
        await replicas[2].poller().poll()
        alerted = Counter(int(m) for c in fake_slack.of("chat.postMessage") if c.args["channel"] == "C0ALERT"
                          for m in set(re.findall(r"/pull/(\d+)", json.dumps(c.args))))
        assert sorted(alerted) == sorted(numbers)
        assert set(alerted.values()) == {1}

        # the Monday push, by all three replicas at once: posted once, every analysis ready, no per-PR call
        before = len(fake_llm.pr_requests())
        outcomes = await asyncio.gather(*(r.pusher().push(PUSHED, fire=MONDAY_W17) for r in replicas))
        assert sorted(o.status for o in outcomes).count("posted") == 1
        posted = next(o for o in outcomes if o.status == "posted")
        assert posted.prs == len(numbers)
        assert posted.pending == 0
        assert len(fake_llm.pr_requests()) == before
        assert len([r for r in fake_llm.requests if r.kind == "digest"]) <= 1
        roots = [c for c in fake_slack.of("chat.postMessage") if c.args["channel"] == "C0PUSH"
                 and not c.args.get("thread_ts")]
        assert len(roots) == 1
    finally:
        for client in clients:
            await client.aclose()
        for replica in replicas:
            if replica.webhook is not None:
                await replica.webhook.aclose()
            await replica.aclose()
        for worker in workers:
            assert worker.stop() == 0
        assert queue.workers() == []  # a stopped worker takes its heartbeat with it
        queue.close()
