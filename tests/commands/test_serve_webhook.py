"""``prhub serve`` as a process with ``GITHUB_WEBHOOK_SECRET``: ``POST /github/webhook`` and ``GET /healthz/workers``
on its HTTP server."""

from __future__ import annotations

import json
import os
import uuid

import httpx
from conftest import EXAMPLE, ROOT
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve
from serve_support import running_serve

from bot.handlers.github import signature

from .test_serve import _require_redis

SECRET = "a-webhook-secret"


def test_serve_takes_github_webhooks_and_reports_workers() -> None:
    _require_redis()
    with serve(FakeSlack()) as slack_url:
        env = {
            **os.environ, "PRHUB_CONFIG": str(ROOT / "prhub.toml"), "PRHUB_REDIS_URL": "redis://127.0.0.1:6379/15",
            "PRHUB_REDIS_KEY_PREFIX": f"test-serve-hook-{uuid.uuid4().hex[:8]}:",
            "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": "signing-secret",
            "PRHUB_SLACK_API_URL": f"{slack_url}/api/", "GITHUB_WEBHOOK_SECRET": SECRET,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        with running_serve(["--slack", "http", "--feishu", "off", "--source", f"jsonl:{EXAMPLE}",
                            "--repo", "verl-project/verl"], env) as bot:
            body = json.dumps({"zen": "Design for failure.", "hook_id": 7}).encode()
            headers = {"X-GitHub-Event": "ping", "X-GitHub-Delivery": str(uuid.uuid4())}
            pong = httpx.post(f"{bot.base}/github/webhook", content=body, timeout=10,
                              headers=headers | {"X-Hub-Signature-256": signature(SECRET, body)})
            assert pong.status_code == 200
            unsigned = httpx.post(f"{bot.base}/github/webhook", content=body, headers=headers, timeout=10)
            assert unsigned.status_code == 401
            workers = httpx.get(f"{bot.base}/healthz/workers", timeout=10).json()
            assert workers["alive"] == 0  # no model, no queue: the bot analyses in its own process
        err = bot.err
        assert "Traceback" not in err, err[-3000:]
