"""For verl 2026-W16 the snapshot, the GitHub source (fake API) and the git source (a repository
replayed from the same 39 records) give the same PRs, files and statistics; export round-trips."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import REPO, SHANGHAI
from fakes.git_repo import repo_from_prs
from fakes.github_server import FakeGitHub, serve
from typer.testing import CliRunner

from bot.cli import app
from bot.commands.export import snapshot_lines
from bot.digest.window import week_window
from bot.models import PullRequest
from bot.sources.git import GitSource
from bot.sources.github import GitHubSource
from bot.sources.jsonl import SnapshotSource
from sources.test_github import facts

W16 = week_window(2026, 16, SHANGHAI)


def without_sha(pr: PullRequest) -> tuple[object, ...]:
    return facts(pr.model_copy(update={"merge_commit_sha": None}))


@pytest.fixture(scope="module")
def week(real_source: SnapshotSource) -> list[PullRequest]:
    return real_source.merged_prs(REPO, W16)


@pytest.fixture(scope="module")
def git_clone(week: list[PullRequest], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("verl")
    repo_from_prs(path, week, merge_every=4)
    return path


@pytest.fixture(scope="module")
def github_url(all_prs: list[PullRequest]) -> Iterator[str]:
    with serve(FakeGitHub(all_prs)) as url:
        yield url


def test_three_sources_agree(week: list[PullRequest], git_clone: Path, github_url: str) -> None:
    assert len(week) == 39
    git_prs = GitSource(git_clone, repo=REPO).merged_prs(REPO, W16)
    with httpx.Client() as client:
        github_prs = GitHubSource("test-token", github_url, client).merged_prs(REPO, W16)
    expected = [facts(pr) for pr in week]
    assert [facts(pr) for pr in github_prs] == expected
    # The replayed history has its own commit shas; everything else agrees.
    assert [without_sha(pr) for pr in git_prs] == [without_sha(pr) for pr in week]
    assert all(f.patch for pr in git_prs for f in pr.files if f.changed_lines)


def test_export_round_trip(git_clone: Path, week: list[PullRequest], tmp_path: Path) -> None:
    out = tmp_path / "w16.jsonl"
    result = CliRunner().invoke(app, ["export", "--source", f"git:{git_clone}", "--repo", REPO,
                                      "--week", "2026-W16", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    back = SnapshotSource(out).merged_prs(REPO, W16)
    original = GitSource(git_clone, repo=REPO).merged_prs(REPO, W16)
    assert back == original
    assert [without_sha(pr) for pr in back] == [without_sha(pr) for pr in week]
    assert any(f.patch for pr in back for f in pr.files)
    assert snapshot_lines(back) == out.read_text(encoding="utf-8")


def test_digest_defaults_to_github_with_repo(github_url: str, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("PRHUB_GITHUB_API_URL", github_url)
    monkeypatch.setenv("GITHUB_TOKEN", "test-token")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["digest", "--repo", REPO, "--week", "2026-W16", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert '"pr_count": 39' in result.stdout
    # 1 search + 39 file lists, plus 11 count searches of the earlier weeks (week over week) and 3 GraphQL
    # queries of the history before them (core files: 300 PRs, 100 a query, file paths only).
    assert "54 GitHub API requests" in result.stderr
