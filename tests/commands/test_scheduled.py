"""``prhub push`` twice posts once; ``prhub subscriptions`` over the same Redis lists (and first migrates)
subscriptions written in the old layout. Each test has its own ``PRHUB_REDIS_KEY_PREFIX`` on DB 15."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from conftest import EXAMPLE, REPO
from fakes.slack_api import BOT_TOKEN, FakeSlack
from redis_support import REDIS_URL, redis_client
from typer.testing import CliRunner

from bot.cli import app


@pytest.fixture
def channel_id() -> str:
    return f"C{uuid.uuid4().hex[:10].upper()}"


@pytest.fixture
def prefix() -> str:
    return f"test-cli-{uuid.uuid4().hex[:10]}:"


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_slack: FakeSlack, channel_id: str,
        prefix: str) -> Iterator[Path]:
    asyncio.run(_ping())
    config = tmp_path / "prhub.toml"
    config.write_text(
        f'[channels."slack:{channel_id}"]\nrepo = "{REPO}"\nsource = "jsonl:{EXAMPLE}"\n'
        f'language = "en"\ntimezone = "Asia/Shanghai"\npush = "mon 10:00"\n', encoding="utf-8")
    monkeypatch.setenv("PRHUB_CONFIG", str(config))
    monkeypatch.setenv("PRHUB_REDIS_URL", REDIS_URL)
    monkeypatch.setenv("PRHUB_REDIS_KEY_PREFIX", prefix)
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("PRHUB_SLACK_API_URL", fake_slack.base_url + "/api")
    yield config
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


async def _ping() -> None:
    client = await redis_client()  # fails in CI, skips elsewhere, without Redis
    await client.aclose()


def test_push_twice_posts_once(env: Path, fake_slack: FakeSlack, channel_id: str) -> None:
    runner = CliRunner()
    first = runner.invoke(app, ["push", "--channel", f"slack:{channel_id}", "--week", "2026-W16"])
    assert first.exit_code == 0, first.output
    assert f"posted {REPO} 2026-W16 to slack:{channel_id}: 39 PRs" in first.output
    second = runner.invoke(app, ["push", "--channel", f"slack:{channel_id}", "--week", "2026-W16"])
    assert second.exit_code == 0, second.output
    assert "already posted" in second.output
    roots = [c for c in fake_slack.of("chat.postMessage") if c.args["channel"] == channel_id
             and not c.args.get("thread_ts")]
    assert len(roots) == 1


def test_push_to_an_unknown_webhook_fails_with_one_line(env: Path) -> None:
    result = CliRunner().invoke(app, ["push", "--channel", "feishu-webhook:nope", "--week", "2026-W16"])
    assert result.exit_code == 1
    assert "no [feishu_webhooks.nope]" in result.output


def test_subscriptions_migrates_the_old_layout_then_lists_and_checks(env: Path, channel_id: str,
                                                                   prefix: str) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    member = f"slack:{channel_id}"
    try:  # what the bots of the old layout wrote: a JSON list per subscriber and a JSON index
        client.set(f"{prefix}prhub:sub-index", json.dumps([member]))
        client.set(f"{prefix}prhub:sub:slack:{channel_id}", json.dumps([[REPO, "npu"], [REPO, "quantum"]]))
        result = CliRunner().invoke(app, ["subscriptions", "--subscriber", member, "--check"])
        assert result.exit_code == 0, result.output
        lines = [line for line in result.stdout.splitlines() if line.startswith(member)]
        assert lines[0] == f"{member}\t{REPO}\tnpu\t[label:npu]"
        assert lines[1].startswith(f"{member}\t{REPO}\tquantum\t[label:quantum]\t(unknown label quantum; known: ")
        assert ", npu," in lines[1]
        assert client.get(f"{prefix}prhub:sub-index") is None  # moved, not copied
        assert client.smembers(f"{prefix}prhub:subscribers") == {member.encode()}
        again = CliRunner().invoke(app, ["subscriptions"])
        assert again.exit_code == 0, again.output
        assert [line for line in again.stdout.splitlines() if line.startswith(member)] == [
            f"{member}\t{REPO}\tnpu\t[label:npu]", f"{member}\t{REPO}\tquantum\t[label:quantum]"]
    finally:
        client.close()
