"""``prhub digest --release TAG`` (issue 29): the PRs first released in the tag (from the release before it) over a
real tagged git repository replaying verl 2026-W15/W16, with a release-notes section grouped by change kind, every
PR marked 已发布于 v0.7.1; a week digest marks each PR released or not; a snapshot (no releases) is refused clearly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLE
from fakes.git_repo import RepoBuilder
from release_support import REPO, release_records, tagged_repo
from typer.testing import CliRunner

from bot.cli import app


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoBuilder, dict[str, int]]:
    return tagged_repo(tmp_path_factory.mktemp("verl") / "verl", release_records())


@pytest.fixture(autouse=True)
def _config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "prhub.toml"
    config.write_text('timezone = "Asia/Shanghai"\n', encoding="utf-8")
    monkeypatch.setenv("PRHUB_CONFIG", str(config))


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["digest", "--repo", REPO, *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_release_digest_lists_what_the_tag_first_holds(tagged: tuple[RepoBuilder, dict[str, int]]) -> None:
    repo, _ = tagged
    expected = sorted(int(line.rsplit("(#", 1)[1].rstrip(")")) for line in
                      repo.git("log", "--format=%s", "v0.7.0..v0.7.1").splitlines() if "(#" in line)
    code, out, err = _run("--source", f"git:{repo.path}", "--release", "v0.7.1", "--format", "json")
    assert code == 0, err
    digest = json.loads(out)
    assert digest["release"] == "v0.7.1"
    assert digest["previous_release"] == "v0.7.0"
    assert sorted(pr["number"] for pr in digest["prs"]) == expected
    assert {pr["released_in"] for pr in digest["prs"]} == {"v0.7.1"}
    code, text, err = _run("--source", f"git:{repo.path}", "--release", "0.7.1")  # the v may be left out
    assert code == 0, err
    assert text.startswith("# v0.7.1 发布说明 · 自 v0.7.0 以来")
    notes = text.split("## 发布说明（v0.7.1，自 v0.7.0 以来，", 1)[1].split("\n## ", 1)[0]
    assert f"{len(expected)} 个 PR）" in notes
    groups = [line for line in notes.splitlines() if line.startswith("### ")]
    assert groups
    assert groups[0].startswith(("### 新功能", "### 性能", "### 修复"))
    for number in expected:  # each PR once in the notes: title, number, author
        assert notes.count(f"#{number}]") == 1
    assert "已发布于 v0.7.1" in text
    code, english, _ = _run("--source", f"git:{repo.path}", "--release", "v0.7.1", "--lang", "en")
    assert code == 0
    assert english.startswith("# v0.7.1 release notes · since v0.7.0")
    assert "## Release notes (v0.7.1, since v0.7.0," in english


def test_a_week_digest_says_released_or_not(tagged: tuple[RepoBuilder, dict[str, int]]) -> None:
    repo, _ = tagged
    code, out, err = _run("--source", f"git:{repo.path}", "--week", "2026-W16", "--format", "json", "--no-compare")
    assert code == 0, err
    states = [pr["released_in"] for pr in json.loads(out)["prs"]]
    assert (states.count("v0.7.1"), states.count(None)) == (20, 19)
    code, text, _ = _run("--source", f"git:{repo.path}", "--week", "2026-W16", "--no-compare")
    assert "已发布于 v0.7.1" in text
    assert "尚未发布" in text


def test_unknown_tags_and_sources_without_releases_are_said(tagged: tuple[RepoBuilder, dict[str, int]]) -> None:
    repo, _ = tagged
    code, _, err = _run("--source", f"git:{repo.path}", "--release", "v9.9")
    assert code == 1
    assert "没有发布版本 v9.9；最近的版本：v0.7.1, v0.7.0" in err
    code, _, err = _run("--source", f"jsonl:{EXAMPLE}", "--release", "v0.7.1")
    assert code == 1
    assert "这个数据源不知道仓库的发布版本" in err
    code, _, err = _run("--source", f"git:{repo.path}", "--release", "v0.7.1", "--week", "2026-W16")
    assert code == 2


def test_the_pr_answer_says_its_release(tagged: tuple[RepoBuilder, dict[str, int]]) -> None:
    repo, placed = tagged
    result = CliRunner().invoke(app, ["pr", str(placed["v0.7.1"]), "--source", f"git:{repo.path}", "--repo", REPO])
    assert result.exit_code == 0, result.stderr
    assert "· 已发布于 v0.7.1" in result.stdout
    later = CliRunner().invoke(app, ["pr", str(placed["nightly"]), "--source", f"git:{repo.path}", "--repo", REPO,
                                     "--lang", "en"])
    assert later.exit_code == 0, later.stderr
    assert "· not released yet" in later.stdout
