"""The example GitHub Actions workflow (examples/github-action/prhub-weekly.yml, docs/github-action.md) run end to end:
its steps executed as GitHub's runner executes them (each ``run:`` with ``bash -eo pipefail``, the job's ``env:`` with
every ``${{ … }}`` evaluated from the contexts a scheduled run has, ``$GITHUB_PATH`` and ``$GITHUB_STEP_SUMMARY``),
against the fake GitHub API (the job's token), the fake Slack incoming webhook, the fake Feishu webhook (signed) and
the fake model; ``actions/cache`` is played by keeping ``.prhub-cache`` between two runs in two fresh workspaces.

Steps that fetch code (``actions/checkout``, ``actions/setup-python`` and the ``install`` step, which runs pip
against the package index) are not run here: this checkout's installed ``prhub`` is put on ``$GITHUB_PATH`` as the
install step does (tests/test_install.py installs from requirements.lock in a fresh environment)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import EXAMPLE, ROOT
from fakes.feishu_api import FakeFeishuAPI
from fakes.github_server import FakeGitHub
from fakes.github_server import serve as serve_github
from fakes.llm_server import FakeLLMServer
from fakes.slack_api import FakeSlack
from fakes.slack_api import serve as serve_slack

from bot.digest.window import date_window
from bot.sources.jsonl import SnapshotSource

WORKFLOW = ROOT / "examples" / "github-action" / "prhub-weekly.yml"
REPO = "verl-project/verl"
TOKEN = "ghs-job-token"
SECRET = "feishu-webhook-secret"
FETCHING = {"actions/checkout", "actions/setup-python"}
_EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


def _workflow() -> dict[Any, Any]:
    loaded = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def evaluate(text: str, contexts: dict[str, str]) -> str:
    """``text`` with each ``${{ a || 'b' }}`` replaced as Actions does: the first operand that is not empty."""

    def one(match: re.Match[str]) -> str:
        for operand in (o.strip() for o in match.group(1).split("||")):
            value = operand[1:-1] if operand[:1] == "'" else contexts.get(operand, "")
            if value:
                return value
        return ""

    return _EXPRESSION.sub(one, text)


class Runner:
    """One run of the workflow's job in ``workspace``; ``cache`` is what actions/cache keeps between runs."""

    def __init__(self, workspace: Path, cache: Path, contexts: dict[str, str]) -> None:
        self.workspace, self.cache, self.contexts = workspace, cache, contexts
        workspace.mkdir(parents=True)
        self.path_file = workspace.parent / f"{workspace.name}.path"
        self.summary = workspace.parent / f"{workspace.name}.summary.md"
        self.path_file.write_text("")
        self.summary.write_text("")
        self.cached: list[str] = []

    def run(self) -> list[subprocess.CompletedProcess[str]]:
        job = _workflow()["jobs"]["digest"]
        env = {k: evaluate(str(v), self.contexts) for k, v in job["env"].items()}
        done = []
        for step in job["steps"]:
            uses = str(step.get("uses", "")).split("@")[0]
            if uses in FETCHING:
                continue
            if uses == "actions/cache":
                self.cached.append(str(step["with"]["path"]))
                kept = self.cache / step["with"]["path"]
                if kept.exists():  # restore-keys: the latest cache of the repository
                    shutil.copytree(kept, self.workspace / step["with"]["path"])
                continue
            assert uses == "", f"a step the test cannot play: {uses}"
            if step.get("id") == "install":
                assert "$GITHUB_PATH" in step["run"]
                with self.path_file.open("a") as fh:  # what the install step leaves: prhub on the PATH
                    fh.write(str(Path(sys.executable).parent) + "\n")
                continue
            paths = [line for line in self.path_file.read_text().splitlines() if line]
            step_env = {**os.environ, **env, "GITHUB_PATH": str(self.path_file),
                        "GITHUB_STEP_SUMMARY": str(self.summary), "GITHUB_WORKSPACE": str(self.workspace),
                        "PATH": os.pathsep.join([*reversed(paths), os.environ["PATH"]])}
            step_env.pop("PRHUB_CONFIG", None)
            result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                                     evaluate(step["run"], self.contexts)], cwd=self.workspace, env=step_env,
                                    capture_output=True, text=True, timeout=300, check=False)
            done.append(result)
            assert result.returncode == 0, f"step {step.get('name')} failed:\n{result.stdout}\n{result.stderr}"
        for path in self.cached:  # the post-job save of actions/cache
            shutil.rmtree(self.cache / path, ignore_errors=True)
            if (self.workspace / path).exists():
                shutil.copytree(self.workspace / path, self.cache / path)
        return done


@pytest.fixture
def fakes() -> Iterator[tuple[str, FakeGitHub, FakeSlack, FakeFeishuAPI, FakeLLMServer]]:
    prs = SnapshotSource(EXAMPLE).merged_prs(REPO, date_window(date(2026, 4, 13), date(2026, 4, 19), "Asia/Shanghai"))
    github = FakeGitHub(prs, token=TOKEN)
    slack = FakeSlack()
    with serve_github(github) as github_url, serve_slack(slack), FakeFeishuAPI() as feishu, FakeLLMServer() as llm:
        feishu.webhook_secret = SECRET
        yield github_url, github, slack, feishu, llm


def test_the_workflow_is_scheduled_with_a_read_only_token() -> None:
    flow = _workflow()
    flow["on"] = flow.pop(True)  # YAML 1.1 reads the key `on` as true
    assert flow["on"]["schedule"] == [{"cron": "0 1 * * 1"}]
    assert "workflow_dispatch" in flow["on"]
    assert flow["permissions"] == {"contents": "read", "pull-requests": "read"}
    steps = flow["jobs"]["digest"]["steps"]
    assert [s.get("uses", "").split("@")[0] for s in steps if s.get("uses")] == [
        "actions/checkout", "actions/setup-python", "actions/cache"]


def test_the_workflow_posts_the_week_and_the_cache_saves_the_second_run_its_model_calls(
        tmp_path: Path, fakes: tuple[str, FakeGitHub, FakeSlack, FakeFeishuAPI, FakeLLMServer]) -> None:
    github_url, github, slack, feishu, llm = fakes
    contexts = {
        "secrets.GITHUB_TOKEN": TOKEN, "github.api_url": github_url, "github.repository": REPO,
        "github.run_id": "1", "inputs.week": "2026-W16",
        "vars.PRHUB_LLM_MODEL": f"openai/fake-{uuid.uuid4().hex[:8]}", "vars.PRHUB_LLM_API_BASE": llm.base_url,
        "secrets.PRHUB_LLM_API_KEY": "test-key",
        "secrets.SLACK_WEBHOOK_URL": slack.incoming_webhook(),
        "secrets.FEISHU_WEBHOOK_URL": f"{feishu.base_url}/open-apis/bot/v2/hook/team",
        "secrets.FEISHU_WEBHOOK_SECRET": SECRET,
    }
    cache = tmp_path / "actions-cache"
    cache.mkdir()
    first = Runner(tmp_path / "run1", cache, contexts)
    first.run()
    assert len(llm.pr_requests()) == 39  # every PR of the week analysed by the model once
    assert any(path.startswith("/repos/verl-project/verl") or path == "/graphql" for _, path, _ in github.log)
    slack_posts, feishu_posts = len(slack.webhook_posts), len(feishu.webhook_posts)
    assert slack_posts >= 2
    assert feishu_posts >= 1
    assert all(p["sign"] for p in feishu.webhook_posts)
    summary = first.summary.read_text(encoding="utf-8")
    assert summary.startswith("# 2026 第 16 周")
    assert "本周合并 39 个 PR" in summary
    assert (cache / ".prhub-cache" / "analyses.json").stat().st_size > 10_000

    llm.reset()
    second = Runner(tmp_path / "run2", cache, {**contexts, "github.run_id": "2"})
    second.run()
    assert llm.pr_requests() == []  # the analyses came from the Actions cache, not the model
    assert len(slack.webhook_posts) == 2 * slack_posts
    assert len(feishu.webhook_posts) == 2 * feishu_posts
    assert second.summary.read_text(encoding="utf-8").startswith("# 2026 第 16 周")


def test_without_a_webhook_the_job_fails_saying_what_to_set(
        tmp_path: Path, fakes: tuple[str, FakeGitHub, FakeSlack, FakeFeishuAPI, FakeLLMServer]) -> None:
    github_url = fakes[0]
    contexts = {"secrets.GITHUB_TOKEN": TOKEN, "github.api_url": github_url, "github.repository": REPO,
                "inputs.week": "2026-W16"}
    with pytest.raises(AssertionError, match="set the SLACK_WEBHOOK_URL or FEISHU_WEBHOOK_URL secret"):
        Runner(tmp_path / "run", tmp_path, contexts).run()
