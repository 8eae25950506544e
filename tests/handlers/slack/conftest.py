"""The real bolt app in HTTP mode, served by uvicorn on 127.0.0.1, against the fake Slack API.

``bot`` starts the Starlette server of :func:`bot.handlers.server.build_server` in a
thread with its own event loop, with the services of :func:`bot.app.build_services` on a
Redis store (real Redis on DB 15, a unique key prefix per test; the test fails without
Redis when ``CI=true``, and is skipped otherwise) — or on a given store (a
:class:`~bot.store.MemoryStore` with an injected clock, to move time) — and the 2026-W16
example snapshot as the channels' source. Requests
are signed like Slack's (``v0`` HMAC-SHA256 of ``v0:{timestamp}:{body}``).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import httpx
import pytest
import redis
import redis.asyncio as aioredis
import uvicorn
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve

from bot.app import build_services
from bot.config import Settings, load_settings
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer
from bot.digest.service import Analyzer
from bot.handlers.server import build_server
from bot.handlers.slack.app import build_slack_app
from bot.handlers.slack.deps import SlackDeps
from bot.models import Analysis, PullRequest
from bot.store import RedisStore, Store

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "verl-2026-W16.jsonl"
REPO = "verl-project/verl"
REDIS_URL = "redis://127.0.0.1:6379/15"
SIGNING_SECRET = "test-signing-secret"
NOW = datetime(2026, 4, 22, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
"""Wednesday of 2026-W17: "last week" is the example's 2026-W16."""


class SlowAnalyzer:
    """The heuristic analyzer, but the first PR takes ``delay_s`` seconds (a slow model)."""

    name = "slow-heuristic"

    def __init__(self, delay_s: float) -> None:
        self._inner = HeuristicAnalyzer()
        self._delay_s = delay_s
        self._slept = False

    def analyze(self, pr: PullRequest, context: AnalysisContext) -> Analysis | None:
        if not self._slept:
            self._slept = True
            time.sleep(self._delay_s)
        return self._inner.analyze(pr, context)


class BotServer:
    """The bot's HTTP server in a thread; ``url`` once started."""

    def __init__(self, settings: Settings, *, prefix: str, analyzer: Analyzer | None, store: Store | None) -> None:
        self.settings = settings
        self.prefix = prefix
        self.analyzer = analyzer
        self.store = store
        self.url = ""
        self._ready = threading.Event()
        self._server: uvicorn.Server | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(10), "the bot server did not start"

    def stop(self) -> None:
        assert self._server is not None
        self._server.should_exit = True
        self._thread.join(15)

    async def _main(self) -> None:
        store = self.store or RedisStore(aioredis.Redis.from_url(REDIS_URL), key_prefix=self.prefix)
        services = build_services(self.settings, store, analyzer=self.analyzer, clock=lambda: NOW)
        assert services.slack is not None
        deps = SlackDeps(core=services.core, claims=services.claims, deliverer=services.slack)
        app = build_server(slack_app=build_slack_app(deps, signing_secret=SIGNING_SECRET))
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(app, lifespan="off", log_level="warning", ws="none")
        self._server = uvicorn.Server(config)
        self._ready.set()
        try:
            await self._server.serve(sockets=[sock])
        finally:
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            if pending:
                await asyncio.wait(pending, timeout=10)
            await services.aclose()
            await store.close()
            sock.close()


def _redis_or_skip() -> None:
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis at {REDIS_URL} is required in CI: {exc}")
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    finally:
        client.close()


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    _redis_or_skip()
    prefix = f"test-slack-{uuid.uuid4().hex[:10]}:"
    yield prefix
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=prefix + "*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture
def bot_settings(fake_slack: FakeSlack) -> Settings:
    return load_settings(
        slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=fake_slack.base_url + "/api",
        default_source=f"jsonl:{EXAMPLE}", default_repo=REPO, language="zh",
    )


StartBot = Callable[..., BotServer]


@pytest.fixture
def start_bot(bot_settings: Settings, redis_prefix: str) -> Iterator[StartBot]:
    """``start_bot(analyzer=None, store=None)`` -> a running :class:`BotServer` (stopped after the test)."""
    started: list[BotServer] = []

    def start(analyzer: Analyzer | None = None, store: Store | None = None) -> BotServer:
        server = BotServer(bot_settings, prefix=redis_prefix, analyzer=analyzer, store=store)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def signed_headers(body: str, *, secret: str = SIGNING_SECRET, content_type: str) -> dict[str, str]:
    """Headers of a request Slack signed with ``secret``."""
    timestamp = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest}",
            "Content-Type": content_type}


def post_command(bot: BotServer, text: str, *, response_url: str, channel: str = "C0CHAN",
                 secret: str = SIGNING_SECRET) -> httpx.Response:
    """POST ``/prhub text`` like Slack does (form-encoded, signed)."""
    body = urlencode({
        "token": "legacy", "team_id": "T0TEAM", "team_domain": "prhub-test", "channel_id": channel,
        "channel_name": "general", "user_id": "U0ALICE", "user_name": "alice", "command": "/prhub", "text": text,
        "api_app_id": "A0APP", "response_url": response_url, "trigger_id": "1.2.3",
    })
    headers = signed_headers(body, secret=secret, content_type="application/x-www-form-urlencoded")
    return httpx.post(f"{bot.url}/slack/events", content=body, headers=headers, timeout=10)


def event_body(event: dict[str, Any], *, event_id: str) -> str:
    return json.dumps({
        "token": "legacy", "team_id": "T0TEAM", "api_app_id": "A0APP", "type": "event_callback",
        "event_id": event_id, "event_time": 1713500000, "event": event,
        "authorizations": [{"team_id": "T0TEAM", "user_id": "U0BOT", "is_bot": True}],
    })


def post_event(bot: BotServer, event: dict[str, Any], *, event_id: str, retry: int | None = None) -> httpx.Response:
    """POST one Events API delivery (``X-Slack-Retry-Num`` when ``retry`` is given)."""
    body = event_body(event, event_id=event_id)
    headers = signed_headers(body, content_type="application/json")
    if retry is not None:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    return httpx.post(f"{bot.url}/slack/events", content=body, headers=headers, timeout=10)


def post_action(bot: BotServer, payload: dict[str, Any]) -> httpx.Response:
    """POST an interactivity payload (``payload=`` JSON, form-encoded, signed)."""
    body = urlencode({"payload": json.dumps(payload)})
    headers = signed_headers(body, content_type="application/x-www-form-urlencoded")
    return httpx.post(f"{bot.url}/slack/events", content=body, headers=headers, timeout=10)
