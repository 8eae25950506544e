"""The digest pages through the real server of ``prhub serve``: the command itself runs (a subprocess,
Slack in HTTP mode against the fake Slack API, the real Redis on DB 15 under a unique prefix, the
five-week example as the channels' source), a person asks for the digest, the card's 完整报告 button
links to the page and the server serves it; a tampered, expired or missing signature gets 403. A push
made by another process (``prhub push``) links to a page the serving process serves: the digest is
kept in Redis, so any replica can serve it."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from page_support import FIVE_WEEKS, ROOT
from redis_support import REDIS_URL

from bot.cards.actions import ACTION_OPEN_PAGE
from bot.web import links as links_module
from bot.web.links import PageLinks
from bot.web.pages import MESSAGES

SECRET = "serve-test-page-secret-0123456789"
SIGNING_SECRET = "serve-test-signing-secret"
PRHUB = Path(sys.executable).parent / "prhub"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _LastMonth(TimestampSigner):
    """Signs as if 31 days ago (past the default 30-day life of a link)."""

    def get_timestamp(self) -> int:
        return int(time.time()) - 31 * 24 * 3600


@pytest.fixture
def prefix() -> Iterator[str]:
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis at {REDIS_URL} is required in CI: {exc}")
        pytest.skip(f"no Redis at {REDIS_URL}: {exc}")
    name = f"test-serve-{uuid.uuid4().hex[:10]}:"
    yield name
    keys = list(client.scan_iter(match=name + "*"))
    if keys:
        client.delete(*keys)
    client.close()


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake


def _environment(fake: FakeSlack, prefix: str, public_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRHUB_", "SLACK_", "FEISHU_", "GITHUB_"))}
    env.update({
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "PRHUB_SLACK_API_URL": fake.base_url + "/api",
        "PRHUB_REDIS_URL": REDIS_URL, "PRHUB_REDIS_KEY_PREFIX": prefix,
        "PRHUB_PAGE_SECRET": SECRET, "PRHUB_PUBLIC_URL": public_url,
        "PRHUB_CONFIG": str(ROOT / "prhub.toml"),
        "PRHUB_DEFAULT_SOURCE": f"jsonl:{FIVE_WEEKS}", "PRHUB_DEFAULT_REPO": "verl-project/verl",
    })
    return env


def _signed_event(event: dict[str, Any], event_id: str) -> tuple[str, dict[str, str]]:
    body = json.dumps({"token": "legacy", "team_id": "T0TEAM", "api_app_id": "A0APP", "type": "event_callback",
                       "event_id": event_id, "event_time": int(time.time()), "event": event,
                       "authorizations": [{"team_id": "T0TEAM", "user_id": "U0BOT", "is_bot": True}]})
    stamp = str(int(time.time()))
    signature = hmac.new(SIGNING_SECRET.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return body, {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={signature}",
                  "Content-Type": "application/json"}


def _wait_healthy(base: str, process: subprocess.Popen[str], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"prhub serve exited with {process.returncode}: {log.read_text()[-3000:]}")
        try:
            if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("prhub serve did not answer /healthz within 60 s")


def _page_button(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    [actions] = [b for b in blocks if b["type"] == "actions"]
    button: dict[str, Any] = actions["elements"][0]
    assert button["action_id"] == ACTION_OPEN_PAGE
    return button


def test_prhub_serve_serves_signed_pages_and_refuses_the_rest(fake_slack: FakeSlack, prefix: str,
                                                              tmp_path: Path) -> None:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = _environment(fake_slack, prefix, base)
    log = tmp_path / "serve.log"
    with log.open("w") as sink:
        process = subprocess.Popen([str(PRHUB), "serve", "--slack", "http", "--feishu", "off", "--host", "127.0.0.1",
                                    "--port", str(port)], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                   stdout=sink, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_healthy(base, process, log)
        mention = {"type": "app_mention", "user": "U0ALICE", "text": "<@U0BOT> 周报 2026-W16",
                   "ts": "1713500001.000200", "channel": "C0CHAN", "event_ts": "1713500001.000200"}
        body, headers = _signed_event(mention, "Ev0PAGE")
        assert httpx.post(base + "/slack/events", content=body, headers=headers, timeout=10).status_code == 200
        [card] = fake_slack.wait_for("chat.postMessage", 1, timeout=60)
        time.sleep(0.5)
        assert len(fake_slack.of("chat.postMessage")) == 1  # the card alone: the report is on the page
        blocks = card.args["blocks"]
        sections = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
        # one screen in chat: the comparison with the weeks before (no LLM) is on the page, its charts on the card
        assert "*周环比*" not in sections
        shared = {f.id for f in fake_slack.uploaded() if f.channel == "C0CHAN"}
        assert {b["slack_file"]["id"] for b in blocks if b["type"] == "image"} == shared
        assert len(shared) == 2
        url = _page_button(blocks)["url"]
        assert url.startswith(base + "/pages/")

        page = httpx.get(url, timeout=60)
        assert page.status_code == 200, page.text
        assert page.headers["content-type"].startswith("text/html")
        assert "2026 第 16 周 · 04-13 至 04-19 周报" in page.text
        assert "周环比" in page.text
        assert "上周 27 个（+12）" in page.text
        assert "data:image/svg+xml;base64," in page.text  # the charts, inline

        token = url.rsplit("/", 1)[1]
        payload = token.split(".")[0]
        page_id = PageLinks(SECRET).page_id(token)
        refused = {
            "tampered": httpx.get(f"{base}/pages/{token[:-4]}AAAA", timeout=10),
            "other key": httpx.get(base + "/pages/" + URLSafeTimedSerializer(
                "not-the-page-secret-0123456789", salt=links_module._SALT).dumps(page_id), timeout=10),
            "expired": httpx.get(base + "/pages/" + URLSafeTimedSerializer(
                SECRET, salt=links_module._SALT, signer=_LastMonth).dumps(page_id), timeout=10),
            "unsigned": httpx.get(f"{base}/pages/{payload}", timeout=10),
            "missing": httpx.get(f"{base}/pages", timeout=10),
        }
        for name, answer in refused.items():
            assert answer.status_code == 403, (name, answer.status_code, answer.text[:200])
            assert answer.headers["content-type"].startswith("text/plain")
            reason = {"other key": "tampered", "missing": "unsigned"}.get(name, name)
            assert answer.text.strip() == MESSAGES[reason], name
            assert "周环比" not in answer.text

        # a push from another process (prhub push) links to a page this server serves
        pushed = subprocess.run([str(PRHUB), "push", "--channel", "slack:C0PUSH", "--week", "2026-W16"], cwd=ROOT,
                                env=env, capture_output=True, text=True, timeout=300, check=False)
        assert pushed.returncode == 0, pushed.stderr
        assert "posted verl-project/verl 2026-W16 to slack:C0PUSH: 39 PRs" in pushed.stderr
        [push_card] = [c for c in fake_slack.of("chat.postMessage") if c.args["channel"] == "C0PUSH"]
        push_url = _page_button(push_card.args["blocks"])["url"]
        assert push_url.startswith(base + "/pages/")
        assert [b for b in push_card.args["blocks"] if b["type"] == "image"]
        pushed_page = httpx.get(push_url, timeout=60)
        assert pushed_page.status_code == 200, pushed_page.text
        assert "2026 第 16 周 · 04-13 至 04-19 周报" in pushed_page.text
        assert "上周 27 个（+12）" in pushed_page.text  # the push compared with the weeks before, too
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
