"""From a fresh clone to a running team bot (issue 27), as a newcomer does it without Docker: ``cp .env.example .env``,
fill in Slack and a repository, ``prhub serve`` in that folder (it reads ``./.env`` as docker compose does).

With nothing filled the bot stops at once with one line; filled in (Slack in HTTP mode against the local fake
Slack) it answers a mention, says in ``/healthz`` which repositories its channels see, counts what it did in
``/metrics`` (read back with the Prometheus client's own parser), and turns ``/readyz`` not ready while Slack
refuses its token. With no repository bound it starts, says so, and tells the first mention how to bind one. A
``git:`` source sees a PR merged upstream after start-up within the fetch interval.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import EXAMPLE, ROOT
from fakes.git_repo import RepoBuilder
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve
from fakes.slack_socket import APP_TOKEN, FakeSocketMode, serve_socket
from prometheus_client.parser import text_string_to_metric_families
from serve_support import ServeProcess, running_serve

from .test_serve import _require_redis

SIGNING_SECRET = "first-run-signing-secret"
PRHUB = Path(sys.executable).with_name("prhub")


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake


def _clean_env() -> dict[str, str]:
    """The test process's environment without any prhub or platform variable (the .env provides them)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("PRHUB_", "SLACK_", "FEISHU_", "GITHUB_"))} | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def _dot_env(folder: Path, **filled: str) -> Path:
    """``cp .env.example .env`` in ``folder``, then the values of ``filled`` written into their lines (a name
    the example does not hold is appended, as a newcomer adds a line)."""
    lines = (ROOT / ".env.example").read_text(encoding="utf-8").splitlines()
    left = dict(filled)
    out = []
    for line in lines:
        name = line.lstrip("# ").split("=", 1)[0]
        if "=" in line and name in left:
            out.append(f"{name}={left.pop(name)}")
        else:
            out.append(line)
    out += [f"{name}={value}" for name, value in left.items()]
    target = folder / ".env"
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return target


def _mention(bot: ServeProcess, text: str, *, channel: str = "C0CHAN") -> None:
    """POST one signed ``app_mention`` to the bot, as Slack delivers it."""
    ts = f"{time.time():.6f}"
    event = {"type": "app_mention", "user": "U0ALICE", "text": f"<@U0BOT> {text}", "ts": ts, "channel": channel,
             "event_ts": ts}
    body = json.dumps({"token": "legacy", "team_id": "T0TEAM", "api_app_id": "A0APP", "type": "event_callback",
                       "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()), "event": event,
                       "authorizations": [{"team_id": "T0TEAM", "user_id": "U0BOT", "is_bot": True}]})
    stamp = str(int(time.time()))
    signature = hmac.new(SIGNING_SECRET.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    answer = httpx.post(f"{bot.base}/slack/events", content=body, timeout=10, headers={
        "X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={signature}",
        "Content-Type": "application/json"})
    assert answer.status_code == 200, answer.text


def _metrics(bot: ServeProcess) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics``, parsed by the Prometheus client's parser: (name, labels) -> value."""
    answer = httpx.get(f"{bot.base}/metrics", timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text) for s in family.samples}


def _sample(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def _text_of(call: Any) -> str:
    return json.dumps(call.args.get("blocks") or call.args.get("text"), ensure_ascii=False)


def _slack_env(fake: FakeSlack, **more: str) -> dict[str, str]:
    return {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "PRHUB_SLACK_API_URL": f"{fake.base_url}/api/", "PRHUB_REDIS_URL": "redis://127.0.0.1:6379/15",
            "PRHUB_REDIS_KEY_PREFIX": f"test-first-run-{uuid.uuid4().hex[:8]}:", "PRHUB_LOG_LEVEL": "WARNING",
            **more}


def test_with_nothing_filled_serve_stops_at_once_with_one_line(tmp_path: Path) -> None:
    _dot_env(tmp_path)
    started = time.monotonic()
    done = subprocess.run([str(PRHUB), "serve"], cwd=tmp_path, env=_clean_env(), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1
    assert time.monotonic() - started < 30  # at once: no Redis, no platform, nothing waited for
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("错误：没有可以服务的平台：没有配置任何聊天平台；请设置 SLACK_BOT_TOKEN 和 "
                                  "SLACK_APP_TOKEN")
    english = subprocess.run([str(PRHUB), "serve", "--lang", "en"], cwd=tmp_path, env=_clean_env(),
                             capture_output=True, text=True, timeout=60)
    assert english.stderr.startswith("error: nothing to serve: no chat platform is set up; set SLACK_BOT_TOKEN")


def test_filled_env_answers_a_mention_and_counts_it(tmp_path: Path, fake_slack: FakeSlack) -> None:
    _require_redis()
    _dot_env(tmp_path, **_slack_env(fake_slack, PRHUB_DEFAULT_REPO="verl-project/verl",
                                    PRHUB_DEFAULT_SOURCE=f"jsonl:{EXAMPLE}"))
    with running_serve(["--slack", "http"], _clean_env(), cwd=tmp_path) as bot:
        health = httpx.get(f"{bot.base}/healthz", timeout=10).json()
        assert health["bindings"]["repositories"] == ["verl-project/verl"]
        assert "unbound" not in health["bindings"]
        ready = httpx.get(f"{bot.base}/readyz", timeout=10)
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"]["slack"]["auth"] == "ok"
        before = _metrics(bot)
        _mention(bot, "PR #6046 值得读吗")
        [reply] = fake_slack.wait_for("chat.postMessage", 1, timeout=60)
        assert "#6046" in _text_of(reply)
        after = _metrics(bot)
    for name, labels in (("prhub_events_received_total", {"platform": "slack", "intent": "pr"}),
                         ("prhub_events_answered_total", {"platform": "slack", "intent": "pr", "outcome": "ok"}),
                         ("prhub_answer_seconds_count", {"platform": "slack", "intent": "pr"})):
        assert _sample(after, name, **labels) == _sample(before, name, **labels) + 1, name
    assert _sample(after, "prhub_platform_calls_total", platform="slack", outcome="ok") > \
        _sample(before, "prhub_platform_calls_total", platform="slack", outcome="ok")
    assert _sample(after, "prhub_platform_ready", platform="slack") == 1.0
    assert any(name == "prhub_llm_calls_total" for name, _ in after)  # present (zero without a model)
    assert "Traceback" not in bot.err


def test_quick_start_socket_mode_without_a_signing_secret_answers_a_mention(tmp_path: Path,
                                                                            fake_slack: FakeSlack) -> None:
    """The README's quick start as written: a .env with the two Slack tokens and a repository, `prhub serve` —
    Socket Mode, no signing secret, no public address — answers a mention pushed over the socket."""
    _require_redis()
    socket = FakeSocketMode()
    with serve_socket(fake_slack, socket):
        values = _slack_env(fake_slack, SLACK_APP_TOKEN=APP_TOKEN, PRHUB_DEFAULT_REPO="verl-project/verl",
                            PRHUB_DEFAULT_SOURCE=f"jsonl:{EXAMPLE}")
        del values["SLACK_SIGNING_SECRET"]
        _dot_env(tmp_path, **values)
        with running_serve([], _clean_env(), cwd=tmp_path) as bot:
            assert socket.wait_connected()
            deadline = time.monotonic() + 30
            while (ready := httpx.get(f"{bot.base}/readyz", timeout=10)).status_code != 200:
                assert time.monotonic() < deadline, ready.text
                time.sleep(0.5)
            assert ready.json()["checks"]["slack"]["mode"] == "socket"
            ts = f"{time.time():.6f}"
            envelope = socket.push({
                "token": "legacy", "team_id": "T0TEAM", "api_app_id": "A0APP", "type": "event_callback",
                "event_id": f"Ev{uuid.uuid4().hex[:10]}", "event_time": int(time.time()),
                "authorizations": [{"team_id": "T0TEAM", "user_id": "U0BOT", "is_bot": True}],
                "event": {"type": "app_mention", "user": "U0ALICE", "text": "<@U0BOT> PR #6046 值得读吗", "ts": ts,
                          "channel": "C0CHAN", "event_ts": ts}})
            [reply] = fake_slack.wait_for("chat.postMessage", 1, timeout=60)
            assert "#6046" in _text_of(reply)
            assert envelope in socket.acks
    assert "Slack socket" in bot.err
    assert "Traceback" not in bot.err


def test_readyz_is_not_ready_while_slack_refuses_the_token(tmp_path: Path, fake_slack: FakeSlack) -> None:
    _require_redis()
    _dot_env(tmp_path, **_slack_env(fake_slack, SLACK_BOT_TOKEN="xoxb-revoked", PRHUB_DEFAULT_REPO="verl-project/verl",
                                    PRHUB_DEFAULT_SOURCE=f"jsonl:{EXAMPLE}"))
    refused = {"slack": "failed"}

    def checked(health: dict[str, Any]) -> bool:
        return bool(health["platforms"]["slack"]["auth"] == refused["slack"])

    with running_serve(["--slack", "http"], _clean_env(), cwd=tmp_path, up=checked) as bot:
        health = httpx.get(f"{bot.base}/healthz", timeout=10)
        assert health.status_code == 200  # alive: an orchestrator must not restart it for a wrong token
        assert health.json()["status"] == "degraded"
        ready = httpx.get(f"{bot.base}/readyz", timeout=10)
        assert ready.status_code == 503
        slack = ready.json()["checks"]["slack"]
        assert (slack["ok"], slack["auth"], slack["auth_error"]) == (False, "failed", "invalid_auth")
        assert ready.json()["checks"]["redis"]["ok"] is True
        assert _sample(_metrics(bot), "prhub_platform_ready", platform="slack") == 0.0
    assert "refused the bot's credentials" in bot.err


def test_unbound_bot_starts_says_so_and_tells_the_first_mention_how_to_bind(tmp_path: Path,
                                                                            fake_slack: FakeSlack) -> None:
    _require_redis()
    _dot_env(tmp_path, **_slack_env(fake_slack, PRHUB_DEFAULT_SOURCE=f"jsonl:{tmp_path / 'none.jsonl'}"))
    (tmp_path / "none.jsonl").write_text("", encoding="utf-8")
    with running_serve(["--slack", "http"], _clean_env(), cwd=tmp_path) as bot:
        bindings = httpx.get(f"{bot.base}/healthz", timeout=10).json()["bindings"]
        assert bindings["repositories"] == []
        assert "no channel is bound to a repository" in bindings["unbound"]
        _mention(bot, "本周周报")
        [reply] = fake_slack.wait_for("chat.postMessage", 1, timeout=30)
        text = _text_of(reply)
        assert "这个频道还没有绑定仓库" in text
        assert '[channels.\\"slack:C0CHAN\\"]' in text  # the lines to add, naming this channel
    assert "no channel is bound to a repository" in bot.err


def test_git_source_sees_a_pr_merged_upstream_after_start(tmp_path: Path, fake_slack: FakeSlack) -> None:
    """The clone is fetched every PRHUB_GIT_FETCH_INTERVAL_S: a PR merged upstream after the bot started is
    answered once the next fetch ran (counted in /metrics), without a restart."""
    _require_redis()
    upstream = RepoBuilder(tmp_path / "upstream")
    upstream.write("src/a.py", "a = 1\n")
    upstream.commit("Add a (#1)", datetime(2026, 4, 14, 9, 0, tzinfo=UTC), author="alice")
    clone = tmp_path / "widgets.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream.path), str(clone)], check=True)
    _dot_env(tmp_path, **_slack_env(fake_slack, PRHUB_DEFAULT_REPO="acme/widgets",
                                    PRHUB_DEFAULT_SOURCE=f"git:{clone}", PRHUB_GIT_FETCH_INTERVAL_S="1"))
    with running_serve(["--slack", "http"], _clean_env(), cwd=tmp_path) as bot:
        upstream.write("src/b.py", "b = 2\nc = 3\n")
        upstream.commit("Add the widget cache (#2)", datetime.now(UTC), author="bob")
        seen = _sample(_metrics(bot), "prhub_git_fetches_total", outcome="ok")
        deadline = time.monotonic() + 30
        while _sample(_metrics(bot), "prhub_git_fetches_total", outcome="ok") < seen + 2:  # one began after it
            assert time.monotonic() < deadline, "no fetch within 30 s of a 1 s interval"
            time.sleep(0.3)
        _mention(bot, "PR #2 值得读吗")
        [reply] = fake_slack.wait_for("chat.postMessage", 1, timeout=60)
        assert "Add the widget cache" in _text_of(reply)
