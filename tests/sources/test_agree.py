"""For verl 2026-W16 the snapshot, the GitHub source (fake API) and the git source (a repository
replayed from the same 39 records) give the same PRs, files and statistics; export round-trips."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import REPO, ROOT, SHANGHAI
from fakes.git_repo import repo_from_prs
from fakes.github_server import FakeGitHub, serve
from typer.testing import CliRunner

from bot.cli import app
from bot.commands.export import snapshot_lines
from bot.digest.window import week_window
from bot.models import PullRequest, Window
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
                                      "--week", "2026-W16", "--no-history", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    back = SnapshotSource(out).merged_prs(REPO, W16)
    original = GitSource(git_clone, repo=REPO).merged_prs(REPO, W16)
    assert back == original
    assert [without_sha(pr) for pr in back] == [without_sha(pr) for pr in week]
    assert any(f.patch for pr in back for f in pr.files)
    assert snapshot_lines(back) == out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def three_weeks_clone(real_source: SnapshotSource, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """verl 2026-W14 … W16 (97 PRs) replayed as a git history."""
    path = tmp_path_factory.mktemp("verl-w14-w16")
    span = Window(start=week_window(2026, 14, SHANGHAI).start, end=W16.end, timezone=SHANGHAI, name="W14..W16")
    repo_from_prs(path, real_source.merged_prs(REPO, span), merge_every=5)
    return path


def test_export_reproduces_the_digest_offline(three_weeks_clone: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest of the export (the week and the history it reads for core files and week over week) is the
    digest of the clone; without the history it is not (fewer core-path risks, no comparison)."""
    monkeypatch.setenv("PRHUB_CONFIG", str(ROOT / "prhub.toml"))
    exported, bare = tmp_path / "w16.jsonl", tmp_path / "w16-bare.jsonl"
    for target, extra in ((exported, []), (bare, ["--no-history"])):
        result = CliRunner().invoke(app, ["export", "--source", f"git:{three_weeks_clone}", "--repo", REPO,
                                          "--week", "2026-W16", "--out", str(target), *extra])
        assert result.exit_code == 0, result.stderr

    def digest(source: str) -> dict[str, object]:
        result = CliRunner().invoke(app, ["digest", "--source", source, "--repo", REPO, "--week", "2026-W16",
                                          "--format", "json"])
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)
        data.pop("generated_at")
        return dict(data)

    online, offline, without = digest(f"git:{three_weeks_clone}"), digest(f"jsonl:{exported}"), digest(f"jsonl:{bare}")
    assert online["stats"]["pr_count"] == 39  # type: ignore[index]
    assert online["week_over_week"] is not None
    assert offline == online
    assert without != online
    assert without["week_over_week"]["gap"] == "not_covered"  # type: ignore[index]


def test_digest_defaults_to_github_with_repo(github_url: str, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("PRHUB_GITHUB_API_URL", github_url)
    monkeypatch.setenv("GITHUB_TOKEN", "test-token")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["digest", "--repo", REPO, "--week", "2026-W16", "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert '"pr_count": 39' in result.stdout
    # 1 search + 39 file lists, plus 11 count searches of the earlier weeks (week over week) and 3 GraphQL
    # queries of the history before them (core files: 300 PRs, 100 a query, file paths only), and the releases
    # and tags (released_in: the repository has none here, so no compare).
    assert "56 GitHub API requests" in result.stderr
