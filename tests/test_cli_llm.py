"""``prhub digest`` with PRHUB_LLM_MODEL set: the fake LLM server, real Redis, and Redis down."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator

import pytest
import redis
from conftest import EXAMPLE, ROOT
from fakes.llm_server import FakeLLMServer
from typer.testing import CliRunner

from bot.cli import app
from bot.models import Digest

DIGEST_ARGS = ["digest", "--source", f"jsonl:{EXAMPLE}", "--repo", "verl-project/verl", "--week", "2026-W16",
               "--format", "json"]


@pytest.fixture
def fake_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.setenv("PRHUB_CONFIG", str(ROOT / "prhub.toml"))
    with FakeLLMServer() as fake:
        monkeypatch.setenv("PRHUB_LLM_MODEL", f"openai/fake-{uuid.uuid4().hex[:8]}")  # a fresh cache namespace
        monkeypatch.setenv("PRHUB_LLM_API_BASE", fake.base_url)
        monkeypatch.setenv("PRHUB_LLM_API_KEY", "test-key")
        monkeypatch.setenv("PRHUB_LLM_TIMEOUT_S", "5")
        yield fake


def _run() -> tuple[int, str, str]:
    result = CliRunner().invoke(app, DIGEST_ARGS)
    return result.exit_code, result.stdout, result.stderr


def _redis_db15(monkeypatch: pytest.MonkeyPatch) -> redis.Redis:
    """The real local Redis, DB 15, set as PRHUB_REDIS_URL; fails in CI and skips elsewhere without it."""
    monkeypatch.setenv("PRHUB_REDIS_URL", "redis://127.0.0.1:6379/15")
    client = redis.Redis.from_url("redis://127.0.0.1:6379/15")
    try:
        client.ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis is required in CI: {exc}")
        pytest.skip(f"Redis does not answer: {exc}")
    return client


def _drop_model_keys(client: redis.Redis, model: str) -> None:
    """Delete the cache keys of the test's one-off model name, and close the client."""
    keys = [k for k in client.scan_iter(match="prhub:*") if model.split("/")[1].encode() in k]
    if keys:
        client.delete(*keys)
    client.close()


def test_cli_llm_digest_with_redis_reports_usage_and_caches(
    fake_env: FakeLLMServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = _redis_db15(monkeypatch)
    model = os.environ["PRHUB_LLM_MODEL"]
    try:
        code, out, err = _run()
        assert code == 0, err
        digest = Digest.model_validate_json(out)
        assert digest.narrative_source == "llm"
        assert digest.usage.llm_calls == 40
        assert "LLM: 40 calls, 0 cache hits" in err
        assert "warning" not in err
        code, out, err = _run()
        assert code == 0, err
        assert "LLM: 0 calls, 40 cache hits" in err
        assert json.loads(out)["usage"]["llm_calls"] == 0
    finally:
        _drop_model_keys(client, model)


def test_cli_redis_down_warns_once_and_still_digests(
    fake_env: FakeLLMServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PRHUB_REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens there
    code, out, err = _run()
    assert code == 0, err
    assert err.count("warning:") == 1
    assert "does not answer" in err
    digest = Digest.model_validate_json(out)
    assert digest.stats.pr_count == 39
    assert all(p.analysis is not None and p.analysis.status == "llm" for p in digest.prs)


def test_cli_quota_stop_gives_the_heuristic_digest_and_says_so(
    fake_env: FakeLLMServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As the chat bots and the push do (the decision is the digest service's): the whole digest, each
    analysis marked as a fallback, and one warning line on stderr."""
    from fakes.llm_server import quota_exceeded

    monkeypatch.setenv("PRHUB_REDIS_URL", "")
    fake_env.responder = lambda request: quota_exceeded()
    code, out, err = _run()
    assert code == 0, err
    assert err.count("warning:") == 1
    assert "quota" in err
    assert "heuristic" in err
    digest = Digest.model_validate_json(out)
    assert digest.stats.pr_count == 39
    assert all(p.analysis is not None and p.analysis.status == "heuristic" and p.analysis.fallback_reason
               for p in digest.prs)
    assert digest.usage.fallbacks >= 39
    markdown = CliRunner().invoke(app, [*DIGEST_ARGS[:-2], "--format", "markdown"])
    assert "其中 39 个为模型失败后的启发式回退" in markdown.stdout


def test_cli_pr_reuses_the_digest_analysis_from_the_cache(
    fake_env: FakeLLMServer, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """"PR #6046 值得读吗" after the week's digest: answered from Redis, no model call."""
    client = _redis_db15(monkeypatch)
    model = os.environ["PRHUB_LLM_MODEL"]
    pr_args = ["pr", "6046", "--source", f"jsonl:{EXAMPLE}", "--format", "json"]
    try:
        result = CliRunner().invoke(app, pr_args)  # cold: one call for this PR
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["analysis"]["status"] == "llm"
        assert "LLM: 1 calls, 0 cache hits" in result.stderr
        assert _run()[0] == 0  # the digest finds #6046 cached, asks for the other 38 and the narrative
        calls_before = len(fake_env.requests)
        result = CliRunner().invoke(app, pr_args)
        assert result.exit_code == 0, result.stderr
        assert "LLM: 0 calls, 1 cache hits" in result.stderr
        assert len(fake_env.requests) == calls_before
        missing = CliRunner().invoke(app, ["pr", "99999", "--source", f"jsonl:{EXAMPLE}", "--lang", "en"])
        assert missing.exit_code == 1
        assert "PR #99999 not found in this source" in missing.stderr
        assert len(fake_env.requests) == calls_before
    finally:
        _drop_model_keys(client, model)
