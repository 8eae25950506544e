"""``prhub serve`` as a process with its Redis stopped: it starts degraded and says so in ``/healthz``, finds
Redis once it answers, logs INFO lines that name the event, and stops cleanly on SIGTERM."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fakes.slack_api import BOT_TOKEN, FakeSlack

from .conftest import EXAMPLE, REPO, SIGNING_SECRET, PrivateRedis, free_port

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def _health(base: str) -> dict[str, str] | None:
    try:
        answer = httpx.get(f"{base}/healthz", timeout=2)
    except httpx.HTTPError:
        return None
    return dict(answer.json()) if answer.status_code == 200 else None


def test_serve_starts_without_redis_degraded_and_recovers(tmp_path: Path, private_redis: PrivateRedis,
                                                          fake_slack: FakeSlack) -> None:
    private_redis.stop()
    port = free_port()
    env = {**os.environ, "PRHUB_CONFIG": str(tmp_path / "none.toml"), "PRHUB_REDIS_URL": private_redis.url,
           "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
           "PRHUB_SLACK_API_URL": f"{fake_slack.base_url}/api/", "PRHUB_REDIS_TIMEOUT_S": "0.5",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    exe = Path(sys.executable).with_name("prhub")
    proc = subprocess.Popen([str(exe), "serve", "--slack", "http", "--host", "127.0.0.1", "--port", str(port),
                             "--source", f"jsonl:{EXAMPLE}", "--repo", REPO], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while (health := _health(base)) is None:
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "prhub serve did not come up without Redis"
            time.sleep(0.2)
        assert (health["status"], health["redis"], health["scheduler"]) == ("degraded", "down", "running")

        event = {"type": "app_mention", "user": "U0ALICE", "text": "<@U0BOT> 帮助", "ts": "1713500500.000100",
                 "channel": "C0SERVE", "event_ts": "1713500500.000100"}
        body = json.dumps({"token": "t", "team_id": "T0TEAM", "api_app_id": "A0APP", "type": "event_callback",
                           "event_id": "EvServe", "event_time": 1713500000, "event": event,
                           "authorizations": [{"team_id": "T0TEAM", "user_id": "U0BOT", "is_bot": True}]})
        stamp = str(int(time.time()))
        digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
        answer = httpx.post(f"{base}/slack/events", content=body, timeout=10, headers={
            "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}",
            "Content-Type": "application/json"})
        assert answer.status_code == 200
        assert fake_slack.wait_for("chat.postEphemeral", 1)  # answered while degraded (the help: to the asker)

        private_redis.start()
        deadline = time.monotonic() + 15
        while (_health(base) or {}).get("status") != "ok":
            assert time.monotonic() < deadline, "prhub serve did not find Redis again"
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"prhub serve did not stop on SIGTERM:\n{err[-2000:]}")
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert "starting degraded" in err
    assert "slack event EvServe" in err
    assert "answered in" in err
    assert BOT_TOKEN not in err
    assert SIGNING_SECRET not in err
