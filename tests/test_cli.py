"""The prhub command line: formats, stdout/stderr separation, one-line errors with exit code 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, REAL_DATA, ROOT
from typer.testing import CliRunner

from bot.cli import app
from bot.models import Digest

runner = CliRunner()
W16 = ["--source", f"jsonl:{EXAMPLE}", "--repo", "verl-project/verl", "--week", "2026-W16"]


@pytest.fixture(autouse=True)
def _verl_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRHUB_CONFIG", str(ROOT / "prhub.toml"))


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_markdown_digest_of_the_example() -> None:
    code, out, err = run("digest", *W16)
    assert code == 0, err
    assert out.startswith("# 2026 第 16 周 · 04-13 至 04-19 周报")
    assert "来源 PR：39" in out
    for section in ("本周亮点", "风险观察", "执行摘要", "模块与主题趋势", "重点 PR 速览", "后续建议"):
        assert section in out
    assert "#6046" in out
    assert "#6029" in out


def test_full_file_gives_the_same_week(tmp_path: Path) -> None:
    code, out, _ = run("digest", "--source", f"jsonl:{REAL_DATA}", "--repo", "verl-project/verl",
                       "--week", "2026-W16", "--format", "json")
    assert code == 0
    digest = Digest.model_validate_json(out)
    assert digest.stats.pr_count == 39


def test_json_slack_feishu_formats() -> None:
    code, out, _ = run("digest", *W16, "--format", "json")
    assert code == 0
    assert json.loads(out)["stats"]["pr_count"] == 39
    code, out, _ = run("digest", *W16, "--format", "slack")
    messages = json.loads(out)
    assert code == 0
    assert messages
    assert all(m["text"] and len(m["blocks"]) <= 50 for m in messages)
    code, out, _ = run("digest", *W16, "--format", "feishu")
    cards = json.loads(out)
    assert code == 0
    assert all(c["schema"] == "2.0" for c in cards)


def test_english_and_date_range() -> None:
    code, out, _ = run("digest", "--source", f"jsonl:{EXAMPLE}", "--since", "2026-04-13", "--until", "2026-04-19",
                       "--lang", "en", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["window"]["name"] == "2026-04-13..2026-04-19"
    assert data["language"] == "en"
    assert data["stats"]["pr_count"] == 39


def test_out_file(tmp_path: Path) -> None:
    target = tmp_path / "w16.md"
    code, out, err = run("digest", *W16, "--out", str(target))
    assert code == 0
    assert out == ""
    assert "来源 PR：39" in target.read_text(encoding="utf-8")
    assert "wrote" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--source", "jsonl:missing.jsonl", "--week", "2026-W16"], "snapshot not found: missing.jsonl"),
        (["--source", f"jsonl:{EXAMPLE}", "--week", "2026-W99"], "week 2026-W99 does not exist"),
        (["--source", f"jsonl:{EXAMPLE}", "--week", "next"], "2026-W16"),
        (["--source", f"jsonl:{EXAMPLE}", "--repo", "a/b", "--week", "2026-W16"], "unknown repository 'a/b'"),
        (["--source", "svn:trunk", "--week", "2026-W16"], "git:PATH"),
        (["--week", "2026-W16"], "--source or --repo is required"),
        (["--source", f"jsonl:{EXAMPLE}", "--tz", "Mars/Base", "--week", "2026-W16"], "Mars/Base"),
    ],
)
def test_errors_are_one_line_and_exit_1(args: list[str], message: str) -> None:
    code, out, err = run("digest", *args)
    assert code == 1
    assert out == ""
    assert message in err
    assert err.startswith("error:")
    assert err.count("\n") == 1


def test_malformed_line_is_reported_with_its_number(tmp_path: Path) -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:-5]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run("digest", "--source", f"jsonl:{bad}", "--week", "2026-W16")
    assert code == 1
    assert f"{bad}:3:" in err


def test_console_script_keeps_stdout_clean() -> None:
    """The installed `prhub` writes only the document to stdout."""
    env = {**os.environ, "PRHUB_CONFIG": str(ROOT / "prhub.toml")}
    exe = Path(sys.executable).with_name("prhub")
    proc = subprocess.run([str(exe), "digest", *W16, "--format", "json"], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["stats"]["pr_count"] == 39


def test_help_lists_the_options() -> None:
    code, out, _ = run("digest", "--help")
    assert code == 0
    for option in ("--source", "--repo", "--week", "--since", "--until", "--tz", "--lang", "--format", "--out"):
        assert option in out


def test_repo_spelling_is_normalised_to_the_source() -> None:
    code, out, err = run("digest", "--source", f"jsonl:{EXAMPLE}", "--repo", " Verl-Project/VERL ",
                         "--week", "2026-W16", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["repo"] == "verl-project/verl"
    assert data["stats"]["pr_count"] == 39
    assert data["stats"]["key_pr_count"] == 15  # prhub.toml's section applied despite the spelling (12 without)
    assert "config " in err
    assert "prhub.toml" in err


def test_summary_line_names_missing_config(no_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRHUB_CONFIG", raising=False)
    code, _, err = run("digest", *W16)
    assert code == 0
    assert "39 PRs" in err
    assert "built-in defaults" in err


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith("prhub 0.")
