"""The README (English, under 250 lines, with README.zh-CN.md beside it) and docs/ say what is true: every shell
command they show runs — here, in a folder laid out like a deployment (the examples, a prhub.toml with a bound
channel and a webhook, the local fakes of Slack with Socket Mode, Feishu and a model, Redis db 15) — or is named
with where it runs instead (.ci/run, the slow install test, or a Docker engine this CI lacks); every TOML block is
a prhub.toml prhub accepts; every relative link resolves; the digest's JSON schema is the model's."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import ROOT
from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI
from fakes.llm_server import FakeLLMServer
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve
from fakes.slack_socket import APP_TOKEN, FakeSocketMode, serve_socket
from serve_support import free_port

from bot.config import load_settings
from bot.models import Digest

DOCS = [ROOT / "README.md", ROOT / "README.zh-CN.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = {"bash", "sh", "shell", "console"}
INSTALL_LINE = ("python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements.lock && "
                ".venv/bin/pip install --no-deps -e . && .venv/bin/prhub digest --source "
                "jsonl:examples/verl-2026-W12-W16.jsonl.gz --repo verl-project/verl --week 2026-W16")
DOCKER = ("needs a Docker engine, which this CI has not: tests/test_env_example.py checks docker-compose.yml, "
          "tests/test_install.py the Dockerfile")
ELSEWHERE = {
    INSTALL_LINE: "tests/test_install.py::test_readme_install_and_digest_in_a_fresh_venv (slow) runs it",
    "scripts/test": ".ci/run runs it",
    "docker compose up -d": DOCKER,
    "docker compose logs bot": DOCKER,
    "docker compose restart bot": DOCKER,
    "docker compose run --rm bot config check": DOCKER + "; its prhub config check runs here on the shipped file",
    ".venv/bin/python bench/bench_understand.py": "test_the_understanding_bench_runs below",
    ".venv/bin/python bench/bench_understand.py --corpus tuning2": "test_the_understanding_bench_runs below",
    ".venv/bin/python bench/bench_understand.py --corpus held_out4": "test_the_understanding_bench_runs below",
}
"""Documented commands this module does not run, and who does."""


def fenced(text: str) -> list[tuple[str, str]]:
    """The fenced code blocks of a Markdown text: (info string, body), indented blocks (in lists) too."""
    blocks, inside, info, indent, body = [], False, "", "", []
    for line in text.splitlines():
        match = re.match(r"^(\s*)(`{3,})(.*)$", line)
        if not inside and match:
            inside, indent, info, body = True, match.group(1), match.group(3).strip(), []
        elif inside and match and match.group(1) == indent and not match.group(3).strip():
            blocks.append((info, "\n".join(body)))
            inside = False
        elif inside:
            body.append(line[len(indent):] if line.startswith(indent) else line)
    return blocks


def commands(text: str) -> list[str]:
    """The shell commands of a text's shell blocks: one per line (continuations joined), comments dropped."""
    found = []
    for info, body in fenced(text):
        if info not in SHELLS:
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()  # a trailing comment (a '#' after spaces)
            if line and not line.startswith("#"):
                found.append(" ".join(line.split()))
    return found


def documented() -> list[str]:
    """Every documented command, once, in the order of the files."""
    return list(dict.fromkeys(c for path in DOCS for c in commands(path.read_text(encoding="utf-8"))))


def test_readme_is_short_english_with_the_two_commands_first() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert len(lines) < 250
    first = fenced(readme)[0]
    assert first[0] == "bash"
    assert commands(readme)[:2] == [INSTALL_LINE, "scripts/test"]
    assert readme.index("```bash") < readme.index("\n## ")  # the two commands are the first thing on the page
    prose = re.sub(r"```.*?```", "", readme, flags=re.DOTALL)
    prose = re.sub(r"`[^`]*`|\(https?://[^)]*\)", "", prose)
    cjk = sum(1 for ch in prose if "\u4e00" <= ch <= "\u9fff")
    assert cjk < 0.02 * len(prose), "the README's prose is English"
    for part in ("## Quick start: Slack", "## Quick start: Feishu", "docs/verl-2026-W16-page.png",
                 "docs/verl-2026-W16-weekly.png", "README.zh-CN.md", "docs/user-guide.md", "docs/operator-guide.md",
                 "docs/reference.md"):
        assert part in readme, part
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    assert commands(chinese)[:2] == [INSTALL_LINE, "scripts/test"]
    assert "## 快速开始：Slack" in chinese and "## 快速开始：飞书" in chinese  # noqa: PT018


def test_every_documented_command_is_run_somewhere() -> None:
    shown = documented()
    assert len(shown) > 20
    assert set(ELSEWHERE) <= set(shown), "an entry of ELSEWHERE is no longer documented"
    unrunnable = [c for c in shown if c not in ELSEWHERE and _runner(c) is None]
    assert unrunnable == [], "documented commands that no test runs"


def test_every_toml_block_is_a_config_prhub_accepts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith("PRHUB_")]:
        monkeypatch.delenv(name, raising=False)
    seen = 0
    for path in [*DOCS, ROOT / "prhub.toml"]:
        text = path.read_text(encoding="utf-8")
        blocks = [body for info, body in fenced(text) if info == "toml"] if path.suffix == ".md" else [text]
        for body in blocks:
            file = tmp_path / "prhub.toml"
            file.write_text(body, encoding="utf-8")
            load_settings(config=file)  # unknown keys and bad values at any level raise, with their line
            seen += 1
    assert seen >= 8


def test_every_relative_link_resolves() -> None:
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "mailto:", "#")):
                continue
            file = target.split("#", 1)[0]
            assert (path.parent / file).exists(), f"{path.name} links to {target}, which does not exist"


def test_the_json_schema_is_the_models() -> None:
    schema = json.loads((ROOT / "docs" / "digest.schema.json").read_text(encoding="utf-8"))
    assert schema == Digest.model_json_schema(), "docs/digest.schema.json is stale: regenerate it from Digest"


def test_the_settings_reference_names_every_setting() -> None:
    from test_env_example import TOML_ONLY, env_names

    from bot.config import Settings

    reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    missing = [f for f in Settings.model_fields if f not in TOML_ONLY and f"| `{f}` |" not in reference]
    assert missing == []
    for field in Settings.model_fields:
        if field not in TOML_ONLY:
            assert all(f"`{name}`" in reference for name in env_names(field)), field


# -- running the documented commands ----------------------------------------------------------------------------

class Deployment:
    """A folder laid out like a team's deployment, the fakes it talks to, and the processes started from it."""

    def __init__(self, root: Path, slack: FakeSlack, socket: FakeSocketMode, feishu: FakeFeishuAPI,
                 llm: FakeLLMServer) -> None:
        self.root = root
        self.slack, self.socket, self.feishu, self.llm = slack, socket, feishu, llm
        (root / "examples").symlink_to(ROOT / "examples")
        (root / ".venv").symlink_to(Path(sys.executable).parents[1])
        shutil.copy(ROOT / ".env.example", root / ".env.example")
        config = (ROOT / "prhub.toml").read_text(encoding="utf-8")
        config += (
            '\n[channels."slack:C0123456789"]\nrepo = "verl-project/verl"\n'
            'source = "jsonl:examples/verl-2026-W16.jsonl"\npush = "mon 10:00"\n\n[feishu_webhooks.team]\n'
            f'url = "{feishu.base_url}/open-apis/bot/v2/hook/team"\n\n'
            '[channels."feishu-webhook:team"]\nrepo = "verl-project/verl"\n'
            'source = "jsonl:examples/verl-2026-W16.jsonl"\n')
        (root / "prhub.toml").write_text(config, encoding="utf-8")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("PRHUB_", "SLACK_", "FEISHU_", "GITHUB_"))} | {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PRHUB_ENV_FILE": "", "PRHUB_LOG_LEVEL": "WARNING",
            "PRHUB_REDIS_URL": "redis://127.0.0.1:6379/15",
            "PRHUB_REDIS_KEY_PREFIX": f"test-docs-{uuid.uuid4().hex[:8]}:",
            "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN,
            "PRHUB_SLACK_API_URL": f"{slack.base_url}/api/", "PRHUB_LLM_API_BASE": llm.base_url,
            "PRHUB_FEISHU_API_URL": feishu.base_url,
        }
        self.background: list[subprocess.Popen[str]] = []
        self.bot_port: int | None = None

    def run(self, command: str, **extra: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["bash", "-c", command], cwd=self.root, env=self.env | extra, capture_output=True,
                              text=True, timeout=300, check=False)
        assert done.returncode == 0, f"{command!r} exited {done.returncode}:\n{done.stderr[-2000:]}"
        return done

    def start(self, command: str, **extra: str) -> subprocess.Popen[str]:
        assignments = re.match(r"^((?:[A-Z_]+=\S*\s+)*)(.*)$", command)
        assert assignments is not None
        script = f"{assignments.group(1)}exec {assignments.group(2)}" if not assignments.group(1) else \
            f"export {assignments.group(1).strip()}; exec {assignments.group(2)}"
        proc = subprocess.Popen(["bash", "-c", script], cwd=self.root, env=self.env | extra,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.background.append(proc)
        return proc

    def stop(self, proc: subprocess.Popen[str]) -> str:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            pytest.fail(f"did not stop on SIGINT:\n{err[-2000:]}")
        self.background.remove(proc)
        return err

    def serve(self, command: str) -> str:
        """Start a documented ``prhub serve`` on a free port (its ``--port``, or one added), wait until /readyz
        is 200, stop it; its stderr."""
        port = free_port()
        command = command.replace("--port 3000", f"--port {port}")
        if "--port" not in command:
            command += f" --port {port}"
        extra = {"PRHUB_SERVE_HEALTH": "true"}
        if "--slack http" in command:
            extra["SLACK_SIGNING_SECRET"] = "docs-signing-secret"
        if "--feishu http" in command:
            extra |= {"FEISHU_APP_ID": APP_ID, "FEISHU_APP_SECRET": APP_SECRET, "FEISHU_VERIFICATION_TOKEN": "v-token"}
        proc = self.start(f"{command} --host 127.0.0.1", **extra)
        self.wait_ready(proc, port)
        return self.stop(proc)

    def wait_ready(self, proc: subprocess.Popen[str], port: int) -> None:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "not ready within 60 s"
            time.sleep(0.3)

    def curl(self, command: str) -> str:
        """A documented ``curl … localhost:3000 …`` against a bot started for them (Socket Mode, the example)."""
        if self.bot_port is None:
            self.bot_port = free_port()
            proc = self.start(f"prhub serve --source jsonl:examples/verl-2026-W16.jsonl --repo verl-project/verl "
                              f"--host 127.0.0.1 --port {self.bot_port}")
            self.wait_ready(proc, self.bot_port)
        return self.run(command.replace("localhost:3000", f"127.0.0.1:{self.bot_port}")).stdout


def _runner(command: str) -> str | None:
    """How a documented command is run here (``None``: not at all)."""
    words = command.split()
    prhub = next((i for i, w in enumerate(words) if w in ("prhub", ".venv/bin/prhub")), None)
    if words[0] == "curl":
        return "curl"
    if command == "cp .env.example .env":
        return "copy"
    if prhub is None:
        return None
    verb = words[prhub + 1] if len(words) > prhub + 1 else ""
    if verb == "serve":
        return "serve"
    if verb == "worker" and "--status" not in words:
        return "worker"
    return "run"


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    from commands.test_serve import _require_redis

    _require_redis()
    slack, socket = FakeSlack(), FakeSocketMode()
    with serve(slack), serve_socket(slack, socket), FakeFeishuAPI() as feishu, FakeLLMServer() as llm:
        place = Deployment(tmp_path, slack, socket, feishu, llm)
        try:
            yield place
        finally:
            for proc in list(place.background):
                place.stop(proc)


@pytest.mark.slow
def test_every_documented_command_runs(deployment: Deployment) -> None:
    """Each command of README.md, README.zh-CN.md and docs/, in the order shown, as written (a serve's port
    and a curl's address aside): exit status 0, a bot ready."""
    for command in documented():
        kind = _runner(command)
        if command in ELSEWHERE:
            if command == "docker compose run --rm bot config check":  # what it runs in the image
                deployment.run("prhub config check", PRHUB_CONFIG=str(ROOT / "prhub.toml"))
            continue
        if kind == "copy":
            deployment.run(command)
            assert (deployment.root / ".env").read_text() == (ROOT / ".env.example").read_text()
            (deployment.root / ".env").unlink()  # the next commands run on the environment alone
        elif kind == "serve":
            err = deployment.serve(command)
            assert "Traceback" not in err, err[-3000:]
        elif kind == "curl":
            assert deployment.curl(command).strip(), command
        elif kind == "worker":
            deployment.start(command)
            deadline = time.monotonic() + 60
            while subprocess.run(["bash", "-c", "prhub worker --status"], cwd=deployment.root, env=deployment.env,
                                 capture_output=True, check=False).returncode != 0:
                assert time.monotonic() < deadline, "the documented worker never beat"
                time.sleep(0.5)
        else:
            deployment.run(command)
    assert [c for c in deployment.slack.of("chat.postMessage") if c.args.get("channel") == "C0123456789"]
    assert deployment.feishu.webhook_posts  # prhub push --channel feishu-webhook:team


@pytest.mark.parametrize("corpus", ["tuning", "tuning2", "held_out4"])
def test_the_understanding_bench_runs(corpus: str) -> None:
    """docs/understanding.md's three bench commands (one round each) score a corpus and exit 0; a held-out set's
    texts are never printed."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_understand.py"), "--repeat", "1",
                           "--corpus", corpus], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "hostile" in done.stdout
    assert corpus != "held_out4" or "✗" not in done.stdout
