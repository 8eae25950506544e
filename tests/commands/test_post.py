"""``prhub digest … --post``: the digest posted to a Slack incoming webhook and a Feishu custom-bot webhook, no bot and
no Redis; the local fakes check what the platforms check (Slack: 50 blocks, block schemas, text length, no callback
buttons; Feishu: the signature, 20 KB a body, the card schema), and refused posts end the command with one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXAMPLE, REPO
from fakes.feishu_api import FakeFeishuAPI
from fakes.slack_api import FakeSlack, serve
from typer.testing import CliRunner

from bot.cli import app

SECRET = "feishu-signing-secret"
ARGS = ["digest", "--source", f"jsonl:{EXAMPLE}", "--repo", REPO, "--week", "2026-W16", "--no-compare"]


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake


@pytest.fixture
def feishu() -> Iterator[FakeFeishuAPI]:
    with FakeFeishuAPI() as fake:
        fake.webhook_secret = SECRET
        yield fake


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "prhub.toml"
    config.write_text('timezone = "Asia/Shanghai"\n', encoding="utf-8")
    monkeypatch.setenv("PRHUB_CONFIG", str(config))


def test_both_webhooks_take_the_whole_digest(slack: FakeSlack, feishu: FakeFeishuAPI,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRHUB_FEISHU_WEBHOOK_SECRET", SECRET)
    hook = f"{feishu.base_url}/open-apis/bot/v2/hook/team"
    result = CliRunner().invoke(app, [*ARGS, "--format", "json", "--post", f"slack-webhook:{slack.incoming_webhook()}",
                                      "--post", f"feishu-webhook:{hook}"])
    assert result.exit_code == 0, result.output
    digest = json.loads(result.stdout)
    assert digest["stats"]["pr_count"] == 39
    posted = slack.webhook_posts
    assert f"posted {len(posted)} messages to slack-webhook" in result.stderr
    assert len(posted) >= 2  # the card, then the full report: a webhook cannot thread, so one after another
    assert all(len(m["blocks"]) <= 50 for m in posted)
    slack_text = json.dumps(posted, ensure_ascii=False)
    assert f"posted {len(feishu.webhook_posts)} messages to feishu-webhook" in result.stderr
    feishu_text = json.dumps(feishu.webhook_posts, ensure_ascii=False)
    for number in digest["key_prs"]:  # every key PR reached both, nothing cut
        assert f"#{number}" in slack_text
        assert f"#{number}" in feishu_text
    assert all(p["sign"] for p in feishu.webhook_posts)  # signed (the fake refuses a wrong signature: code 19021)
    assert all(len(json.dumps(p, ensure_ascii=False).encode()) <= 20_000 for p in feishu.webhook_posts)


def test_a_configured_webhook_is_named_and_a_wrong_secret_is_refused(feishu: FakeFeishuAPI, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    hook = f"{feishu.base_url}/open-apis/bot/v2/hook/team"
    config = tmp_path / "prhub.toml"
    config.write_text(f'[feishu_webhooks.team]\nurl = "{hook}"\nsecret = "{SECRET}"\n'
                      f'[feishu_webhooks.stale]\nurl = "{hook}"\nsecret = "old"\n', encoding="utf-8")
    monkeypatch.setenv("PRHUB_CONFIG", str(config))
    ok = CliRunner().invoke(app, [*ARGS, "--post", "feishu-webhook:team"])
    assert ok.exit_code == 0, ok.output
    assert "posted" in ok.stderr
    assert feishu.webhook_posts
    refused = CliRunner().invoke(app, [*ARGS, "--post", "feishu-webhook:stale"])
    assert refused.exit_code == 1
    assert "19021" in refused.stderr
    assert hook not in refused.stderr  # the URL is the webhook's secret: never printed


def test_bad_targets_are_refused_before_anything_is_read(slack: FakeSlack) -> None:
    unknown = CliRunner().invoke(app, [*ARGS, "--post", "teams-webhook:https://example.invalid/x"])
    assert unknown.exit_code == 2
    assert "错误" in unknown.stderr
    assert "slack-webhook:URL" in unknown.stderr
    missing = CliRunner().invoke(app, [*ARGS, "--post", "feishu-webhook:nope", "--lang", "en"])
    assert missing.exit_code == 2
    assert "no [feishu_webhooks.nope]" in missing.stderr
    gone = CliRunner().invoke(app, [*ARGS, "--post", f"slack-webhook:{slack.base_url}/services/T0/B0/revoked"])
    assert gone.exit_code == 1
    assert "404 no_service" in gone.stderr
    assert slack.webhook_posts == []


def test_a_rate_limit_is_waited_out(slack: FakeSlack) -> None:
    slack.rate_limit_next("incoming-webhook", retry_after=0)
    result = CliRunner().invoke(app, [*ARGS, "--post", f"slack-webhook:{slack.incoming_webhook()}"])
    assert result.exit_code == 0, result.output
    assert len([c for c in slack.calls if c.method == "incoming-webhook"]) == len(slack.webhook_posts) + 1
