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
    ("args", "code", "english", "chinese"),
    [
        (["--source", "jsonl:missing.jsonl", "--week", "2026-W16"], 1, "snapshot not found: missing.jsonl",
         "找不到快照文件：missing.jsonl"),
        (["--source", f"jsonl:{EXAMPLE}", "--repo", "a/b", "--week", "2026-W16"], 1, "unknown repository 'a/b'",
         "没有仓库 'a/b'"),
        (["--source", f"jsonl:{EXAMPLE}", "--week", "2026-W99"], 2, "week 2026-W99 does not exist",
         "没有 2026-W99 这一周"),
        (["--source", f"jsonl:{EXAMPLE}", "--week", "next"], 2, "2026-W16", "读不懂的周 'next'"),
        (["--source", "svn:trunk", "--week", "2026-W16"], 2, "git:PATH", "git:PATH"),
        (["--week", "2026-W16"], 2, "--source or --repo is required", "需要 --source 或 --repo"),
        (["--source", f"jsonl:{EXAMPLE}", "--tz", "Mars/Base", "--week", "2026-W16"], 2, "Mars/Base",
         "不认识的时区 'Mars/Base'"),
        (["--source", f"jsonl:{EXAMPLE}", "--since", "2026-13-01"], 2, "--since '2026-13-01' is not a date",
         "--since 的值 '2026-13-01' 不是日期"),
        (["--source", f"jsonl:{EXAMPLE}", "--since", "2026-04-19", "--until", "2026-04-13"], 2,
         "--since 2026-04-19 is after --until 2026-04-13", "开始日期不能晚于结束日期"),
        (["--source", f"jsonl:{EXAMPLE}", "--format", "xml"], 2, "--format takes markdown | json",
         "--format 只能是 markdown、json"),
        (["--source", f"jsonl:{EXAMPLE}", "--weak", "2026-W16"], 2, "no such option --weak (did you mean --week?)",
         "没有选项 --weak（是不是 --week？）"),
    ],
)
def test_errors_are_one_line_in_the_readers_language(args: list[str], code: int, english: str,
                                                     chinese: str) -> None:
    """Usage errors exit 2, failures 1; one line on stderr, no typer box, in the configured language
    (prhub.toml says zh) or the one --lang names."""
    for lang, head, message in (("zh", "错误：", chinese), ("en", "error: ", english)):
        got_code, out, err = run("digest", *args, "--lang", lang) if "--lang" not in args else run("digest", *args)
        assert got_code == code, err
        assert out == ""
        assert err.startswith(head), err
        assert message in err
        assert err.count("\n") == 1
        assert "╭" not in err
        assert "Traceback" not in err


def test_bad_lang_is_a_usage_error_in_the_configured_language() -> None:
    code, out, err = run("digest", "--source", f"jsonl:{EXAMPLE}", "--lang", "fr")
    assert code == 2
    assert out == ""
    assert err.strip() == "错误：--lang 只能是 zh、en，不能是 'fr'。运行 prhub digest --help 查看用法"


def test_usage_errors_follow_prhub_language(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRHUB_LANGUAGE", "en")
    code, _, err = run("digest", "--source", f"jsonl:{EXAMPLE}", "--lang", "fr")
    assert code == 2
    assert err.strip() == "error: --lang takes zh | en, not 'fr'; see prhub digest --help"


def test_empty_file_says_it_is_empty(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    for args in ([], ["--repo", "verl-project/verl"]):
        code, out, err = run("digest", "--source", f"jsonl:{empty}", "--week", "2026-W16", "--lang", "en", *args)
        assert code == 1
        assert out == ""
        assert err.strip() == f"error: snapshot {empty} is empty: it holds no PR records"


def test_empty_window_says_which_weeks_have_data() -> None:
    five_weeks = ROOT / "examples" / "verl-2026-W12-W16.jsonl.gz"
    code, out, err = run("digest", "--source", f"jsonl:{five_weeks}", "--week", "2026-W20", "--lang", "en")
    assert code == 0
    assert "No pull requests were merged in this period." in out
    assert ("note: no PR of verl-project/verl was merged in 2026-W20; this source has 164 PRs of it, merged "
            "2026-W12 to 2026-W16 (latest week with merges: 2026-W16, last merge 2026-04-19)") in err
    code, _, err = run("digest", "--source", f"jsonl:{five_weeks}", "--week", "2026-W20", "--lang", "zh")
    assert "提示：2026-W20 没有 verl-project/verl 合并的 PR；这个数据源里它有 164 个 PR，合并于 2026-W12 至 2026-W16" \
        in err


def test_help_shows_placeholders_not_types() -> None:
    for command in (["digest"], ["pr"], ["export"], ["serve"], ["push"], ["alerts"], ["worker"], ["subscriptions"],
                    ["subscriptions", "import"], ["subscriptions", "log"], ["config", "check"], ["config", "init"]):
        code, out, _ = run(*command, "--help")
        assert code == 0, command
        for placeholder in ("<str>", "<bool>", "<int>", "<path>"):
            assert placeholder not in out, (command, out)
        assert "╭" not in out
        if command != ["config", "init"]:  # init writes the file --out names
            assert "--config FILE" in out, command


def test_malformed_line_is_reported_with_its_number(tmp_path: Path) -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2][:-5]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run("digest", "--source", f"jsonl:{bad}", "--week", "2026-W16", "--lang", "en")
    assert code == 1
    assert f"{bad}:3:" in err
    assert " at at " not in err


def test_unterminated_string_is_reported_once(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"repo": "a/b", "title": "unterminated', encoding="utf-8")
    code, _, err = run("digest", "--source", f"jsonl:{bad}", "--week", "2026-W16", "--lang", "en")
    assert code == 1
    assert err.strip() == f"error: {bad}:1: not valid JSON at column 26: Unterminated string starting"


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
    assert data["stats"]["key_pr_count"] == 15  # prhub.toml's section applied despite the spelling (11 without)
    assert "config " in err
    assert "prhub.toml" in err


def test_summary_line_names_missing_config(no_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRHUB_CONFIG", raising=False)
    code, out, err = run("digest", *W16)
    assert code == 0
    assert "39 PRs" in err
    assert "built-in defaults" in err
    assert "生成于 " in out
    assert " · 无配置文件\n" in out


def test_config_option_is_the_file_read_wherever_one_runs(no_config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same command gives the same digest in any folder with --config (15 key PRs with verl's prhub.toml,
    11 without it), and the digest's metadata line names the file."""
    monkeypatch.delenv("PRHUB_CONFIG", raising=False)
    code, out, err = run("digest", *W16, "--format", "json")
    assert code == 0
    assert json.loads(out)["stats"]["key_pr_count"] == 11
    assert json.loads(out)["config_file"] is None
    code, out, err = run("digest", *W16, "--format", "json", "--config", str(ROOT / "prhub.toml"))
    assert code == 0, err
    assert json.loads(out)["stats"]["key_pr_count"] == 15
    assert json.loads(out)["config_file"] == "prhub.toml"
    code, out, _ = run("digest", *W16, "--lang", "en", "--config", str(ROOT / "prhub.toml"))
    assert " · config: prhub.toml\n" in out
    code, _, err = run("digest", *W16, "--config", "nowhere.toml")
    assert code == 1
    assert err.strip() == "错误：找不到配置文件：nowhere.toml（来自 --config）"


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.startswith("prhub 0.")
