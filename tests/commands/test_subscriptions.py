"""``prhub subscriptions`` over a real Redis (DB 15, its own ``PRHUB_REDIS_KEY_PREFIX``): each filter said back,
the config file's marked; ``--format json`` exports, ``import`` reads it back (into an empty Redis, again without
doubling, and with ``--replace``); ``log`` lists who changed what and when."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis
from conftest import EXAMPLE, REPO
from redis_support import REDIS_URL, redis_client
from typer.testing import CliRunner

from bot.cli import app
from bot.filters import parse_filter
from bot.store import RedisStore
from bot.subscriptions import Subscriber, Subscriptions

WHEN = datetime(2026, 4, 20, 2, 0, tzinfo=UTC)


@pytest.fixture
def prefix() -> str:
    return f"test-cli-subs-{uuid.uuid4().hex[:10]}:"


def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, prefix: str) -> None:
    config = tmp_path / "prhub.toml"
    config.write_text(
        f'default_repo = "{REPO}"\ndefault_source = "jsonl:{EXAMPLE}"\ntimezone = "Asia/Shanghai"\n'
        '[[subscriptions]]\nsubscriber = "slack:CCONFIG"\nfilter = "path:verl/trainer/** -label:ci"\n',
        encoding="utf-8")
    monkeypatch.setenv("PRHUB_CONFIG", str(config))
    monkeypatch.setenv("PRHUB_REDIS_URL", REDIS_URL)
    monkeypatch.setenv("PRHUB_REDIS_KEY_PREFIX", prefix)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, prefix: str) -> Iterator[Path]:
    asyncio.run(_ping())
    _env(monkeypatch, tmp_path, prefix)
    yield tmp_path
    _clean(prefix)


def _clean(prefix: str) -> None:
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


async def _seed(prefix: str) -> None:
    client = await redis_client()
    try:
        subs = Subscriptions(RedisStore(client, key_prefix=prefix))
        await subs.add(Subscriber("slack", "D0ALICE"), REPO, parse_filter("path:@me -author:dependabot"),
                       by="U0ALICE", now=WHEN)
        await subs.add(Subscriber("slack", "C0TEAM"), REPO, parse_filter("npu rollout -ci"), by="U0BOB", now=WHEN)
        await subs.add(Subscriber("feishu", "oc_team"), "other/repo", parse_filter("importance>=6"), by="ou_x",
                       now=WHEN)
        await subs.remove(Subscriber("feishu", "oc_team"), "other/repo", parse_filter("importance>=6"), by="ou_y",
                          now=WHEN)
    finally:
        await client.aclose()


def test_list_says_each_filter_back_and_marks_the_config_file(env: Path, prefix: str) -> None:
    asyncio.run(_seed(prefix))
    result = CliRunner().invoke(app, ["subscriptions"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"slack:C0TEAM\t{REPO}\tnpu 或 rollout，排除 ci\t[label:npu label:rollout -label:ci]",
        f"slack:CCONFIG\t{REPO}\t路径 verl/trainer/**，排除 ci\t[path:verl/trainer/** -label:ci]\t(config file)",
        f"slack:D0ALICE\t{REPO}\t我负责的路径（CODEOWNERS），排除 作者 dependabot\t[path:@me -author:dependabot]",
    ]
    english = CliRunner().invoke(app, ["subscriptions", "--subscriber", "slack:C0TEAM", "--lang", "en"])
    assert english.stdout.splitlines() == [f"slack:C0TEAM\t{REPO}\tnpu or rollout, except ci\t"
                                           "[label:npu label:rollout -label:ci]"]


def test_export_and_import_back(env: Path, prefix: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asyncio.run(_seed(prefix))
    exported = CliRunner().invoke(app, ["subscriptions", "--format", "json"])
    assert exported.exit_code == 0, exported.output
    document = json.loads(exported.stdout)
    assert document["format"] == "prhub-subscriptions"
    assert [(e["subscriber"], e["filter"], e["created_by"]) for e in document["subscriptions"]] == [
        ("slack:C0TEAM", "label:npu label:rollout -label:ci", "U0BOB"),
        ("slack:D0ALICE", "path:@me -author:dependabot", "U0ALICE"),  # the config file's is not exported
    ]
    file = tmp_path / "subscriptions.json"
    file.write_text(exported.stdout, encoding="utf-8")

    fresh = f"test-cli-subs-{uuid.uuid4().hex[:10]}:"  # another deployment: an empty Redis
    monkeypatch.setenv("PRHUB_REDIS_KEY_PREFIX", fresh)
    try:
        imported = CliRunner().invoke(app, ["subscriptions", "import", str(file)])
        assert imported.exit_code == 0, imported.output
        assert "2 subscription(s) in the file: 2 added, 0 already there" in imported.output
        again = CliRunner().invoke(app, ["subscriptions", "import", str(file)])
        assert "0 added, 2 already there" in again.output
        back = CliRunner().invoke(app, ["subscriptions", "--format", "json"])
        restored = json.loads(back.stdout)["subscriptions"]
        assert [{k: e[k] for k in ("subscriber", "repo", "filter", "created_at", "created_by")} for e in restored] \
            == [{k: e[k] for k in ("subscriber", "repo", "filter", "created_at", "created_by")}
                for e in document["subscriptions"]]  # who made it and when survive: path:@me still means Alice
        edited = {**document, "subscriptions": [{**document["subscriptions"][0], "filter": "npu"}]}
        file.write_text(json.dumps(edited), encoding="utf-8")
        replaced = CliRunner().invoke(app, ["subscriptions", "import", str(file), "--replace"])
        assert "1 subscription(s) in the file: 1 added, 0 already there, 1 removed" in replaced.output
        listed = CliRunner().invoke(app, ["subscriptions"])
        assert [line.split("\t")[:3] for line in listed.stdout.splitlines()] == [
            ["slack:C0TEAM", REPO, "npu"], ["slack:CCONFIG", REPO, "路径 verl/trainer/**，排除 ci"],
            ["slack:D0ALICE", REPO, "我负责的路径（CODEOWNERS），排除 作者 dependabot"]]  # not in the file: kept
        log = CliRunner().invoke(app, ["subscriptions", "log"])
        assert [line.split("\t")[1:] for line in log.stdout.splitlines()] == [
            ["cli", "subscribe", "slack:C0TEAM", REPO, "[label:npu label:rollout -label:ci]", "(import)"],
            ["cli", "subscribe", "slack:D0ALICE", REPO, "[path:@me -author:dependabot]", "(import)"],
            ["cli", "subscribe", "slack:C0TEAM", REPO, "[label:npu]", "(import)"],
            ["cli", "unsubscribe", "slack:C0TEAM", REPO, "[label:npu label:rollout -label:ci]", "(import)"],
        ]
    finally:
        _clean(fresh)


def test_import_refuses_a_bad_file_with_one_line(env: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "prhub-subscriptions", "version": 1, "subscriptions": [
        {"subscriber": "slack:C1", "repo": REPO, "filter": "flavour:npu"}]}), encoding="utf-8")
    result = CliRunner().invoke(app, ["subscriptions", "import", str(bad)])
    assert result.exit_code == 1
    assert "subscriptions[0]: filter 'flavour:npu': unknown filter key flavour:" in result.output
    bad.write_text("[1, 2", encoding="utf-8")
    result = CliRunner().invoke(app, ["subscriptions", "import", str(bad)])
    assert result.exit_code == 1
    assert "the file is not JSON" in result.output


def test_the_change_log_lists_who_when_and_what(env: Path, prefix: str) -> None:
    asyncio.run(_seed(prefix))
    result = CliRunner().invoke(app, ["subscriptions", "log"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"2026-04-20T10:00:00+08:00\tU0ALICE\tsubscribe\tslack:D0ALICE\t{REPO}\t[path:@me -author:dependabot]",
        f"2026-04-20T10:00:00+08:00\tU0BOB\tsubscribe\tslack:C0TEAM\t{REPO}\t[label:npu label:rollout -label:ci]",
        "2026-04-20T10:00:00+08:00\tou_x\tsubscribe\tfeishu:oc_team\tother/repo\t[importance>=6]",
        "2026-04-20T10:00:00+08:00\tou_y\tunsubscribe\tfeishu:oc_team\tother/repo\t[importance>=6]",
    ]
    as_json = CliRunner().invoke(app, ["subscriptions", "log", "--limit", "1", "--format", "json"])
    [last] = json.loads(as_json.stdout)
    assert (last["by"], last["action"], last["subscriber"]) == ("ou_y", "unsubscribe", "feishu:oc_team")
