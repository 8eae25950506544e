"""``prhub serve`` as a process: Slack and Feishu over HTTP on one server, refused start without a platform."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest
import redis
from conftest import EXAMPLE, ROOT
from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve
from serve_support import running_serve
from typer.testing import CliRunner

from bot.cli import app


def _require_redis() -> None:
    try:
        redis.Redis.from_url("redis://127.0.0.1:6379/15", socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis is required in CI: {exc}")
        pytest.skip(f"Redis does not answer: {exc}")


def test_serve_without_any_platform_is_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SLACK_BOT_TOKEN", "FEISHU_APP_ID", "PRHUB_SLACK_BOT_TOKEN", "PRHUB_FEISHU_APP_ID"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(app, ["serve", "--lang", "en"])
    assert result.exit_code == 1
    assert result.stderr.strip() == ("error: nothing to serve: no chat platform is set up; set SLACK_BOT_TOKEN and "
                                     "SLACK_APP_TOKEN (Slack) or FEISHU_APP_ID and FEISHU_APP_SECRET (Feishu), e.g. "
                                     "in .env (see .env.example)")


def test_slack_and_feishu_share_one_http_server(tmp_path: Path) -> None:
    _require_redis()
    with FakeFeishuAPI() as feishu, serve(FakeSlack()) as slack_url:
        env = {
            **os.environ, "PRHUB_CONFIG": str(ROOT / "prhub.toml"), "PRHUB_REDIS_URL": "redis://127.0.0.1:6379/15",
            "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": "signing-secret",
            "PRHUB_SLACK_API_URL": f"{slack_url}/api/", "FEISHU_APP_ID": APP_ID, "FEISHU_APP_SECRET": APP_SECRET,
            "FEISHU_VERIFICATION_TOKEN": "v-token-test", "PRHUB_FEISHU_API_URL": feishu.base_url,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        with running_serve(["--slack", "http", "--feishu", "http", "--source", f"jsonl:{EXAMPLE}",
                            "--repo", "verl-project/verl"], env) as bot:
            challenge = json.loads((ROOT / "tests/fixtures/feishu/url_challenge.json").read_text(encoding="utf-8"))
            answer = httpx.post(f"{bot.base}/feishu/events", json=challenge, timeout=10)
            assert answer.status_code == 200
            assert answer.json() == {"challenge": challenge["challenge"]}
            unsigned = httpx.post(f"{bot.base}/slack/events", data={"command": "/prhub", "text": "help"}, timeout=10)
            assert unsigned.status_code == 401
        err = bot.err
        assert "Slack http · Feishu http" in err
        assert "Traceback" not in err, err[-3000:]
