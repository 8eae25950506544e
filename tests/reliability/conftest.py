"""The bot under faults: a private ``redis-server`` that tests stop, pause and restart, the real bolt app
over HTTP on the bot's own store (:class:`~bot.store.ResilientStore`), and the fake Slack API.

:class:`PrivateRedis` runs on a free port of 127.0.0.1 with its data in a temporary directory (so a
stop with ``SHUTDOWN SAVE`` and a start keep it, as a restarted Redis would); the shared Redis on 6379
is never touched by these faults. Without ``redis-server`` a test fails when ``CI=true`` and is
skipped otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
import uvicorn
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve

from bot.app import build_services
from bot.config import Settings, load_settings
from bot.delivery.pacing import Pacer
from bot.digest.heuristic import HeuristicAnalyzer
from bot.handlers.server import build_server
from bot.handlers.slack.app import build_slack_app
from bot.handlers.slack.deps import SlackDeps
from bot.store import RedisStore, ResilientStore

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "verl-2026-W16.jsonl"
REPO = "verl-project/verl"
SIGNING_SECRET = "test-signing-secret"
FAST = Pacer({"slack": ((50, 1.0),), "feishu": ((50, 1.0),)})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivateRedis:
    """A ``redis-server`` of this test alone (see the module docstring)."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.dir = workdir
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            if os.environ.get("CI") == "true":
                pytest.fail("redis-server is required in CI (apt-get install redis-server)")
            pytest.skip("no redis-server on PATH")
        self._proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir), "--dbfilename",
             "dump.rdb", "--appendonly", "no", "--save", "", "--protected-mode", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.client().ping():
                    return
            except redis.RedisError:
                time.sleep(0.05)
        raise AssertionError("the private redis-server did not start")

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, socket_timeout=2, socket_connect_timeout=1)

    def stop(self) -> None:
        """``SHUTDOWN SAVE``: the data is written, then the server is gone (connections refused)."""
        assert self._proc is not None
        with contextlib.suppress(redis.RedisError):  # it closes the connection as it stops
            self.client().shutdown(save=True)
        self._proc.wait(10)
        self._proc = None

    def pause(self, seconds: float) -> None:
        """Every client's commands hang for ``seconds`` (``CLIENT PAUSE … ALL``): a hung Redis."""
        self.client().execute_command("CLIENT", "PAUSE", int(seconds * 1000), "ALL")

    def kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait(10)
            self._proc = None


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake


def bot_settings(fake: FakeSlack, **update: Any) -> Settings:
    return load_settings(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET,
                         slack_api_url=fake.base_url + "/api", default_source=f"jsonl:{EXAMPLE}", default_repo=REPO,
                         language="zh", **update)


class Bot:
    """The bot's HTTP server (Slack events) in a thread of its own loop, on a :class:`ResilientStore` of
    ``redis_url`` with short timeouts; ``url`` once started."""

    def __init__(self, settings: Settings, redis_url: str, *, max_connections: int = 64,
                 pacer: Pacer | None = None, pool_timeout_s: float = 2.0,
                 socket_timeout_s: float = 0.5) -> None:
        self.settings = settings
        self.socket_timeout_s = socket_timeout_s
        self.pool_timeout_s = pool_timeout_s
        self.pacer = pacer or FAST
        self.redis_url = redis_url
        self.max_connections = max_connections
        self.url = ""
        self.store: ResilientStore | None = None
        self._ready = threading.Event()
        self._server: uvicorn.Server | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), daemon=True)

    def __enter__(self) -> Bot:
        self._thread.start()
        assert self._ready.wait(15), "the bot did not start"
        deadline = time.monotonic() + 15
        while True:  # serving once /healthz answers
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the bot did not answer /healthz"
            time.sleep(0.05)

    def __exit__(self, *_: object) -> None:
        assert self._server is not None
        self._server.should_exit = True
        self._thread.join(20)

    async def _main(self) -> None:
        redis_store = RedisStore.from_url(self.redis_url, degrade=False, max_connections=self.max_connections,
                                          pool_timeout_s=self.pool_timeout_s,
                                          socket_timeout_s=self.socket_timeout_s)
        self.store = store = ResilientStore(redis_store, retry_after_s=0.5)
        services = build_services(self.settings, store, analyzer=HeuristicAnalyzer(), pacer=self.pacer)
        assert services.slack is not None
        deps = SlackDeps(core=services.core, claims=services.claims, deliverer=services.slack)
        app = build_server(slack_app=build_slack_app(deps, signing_secret=SIGNING_SECRET), health=services.health,
                           max_body_bytes=self.settings.max_body_bytes)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_level="warning", ws="none"))
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

    def health(self) -> dict[str, Any]:
        answer = httpx.get(f"{self.url}/healthz", timeout=5)
        assert answer.status_code == 200
        return dict(answer.json())
