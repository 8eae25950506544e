"""CODEOWNERS: parsing (the codeowners package, GitHub semantics) and reading it from a git clone,
the fake GitHub API and a snapshot (which cannot)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fakes.git_repo import RepoBuilder
from fakes.github_server import FakeGitHub, serve

from bot.codeowners import CODEOWNERS_PATHS, CodeOwners, read_codeowners
from bot.errors import CodeownersError
from bot.models import PullRequest
from bot.sources.git import GitSource
from bot.sources.github import GitHubSource
from bot.sources.jsonl import SnapshotSource

TEXT = """\
# owners
*               @acme/core
/verl/          @Alice @acme/rl-team
/verl/trainer/  @bob
/docs/          docs@acme.example
/broken[        @nobody
/vendor/
"""


def test_last_matching_line_wins_and_owners_compare_case_insensitively() -> None:
    owners = CodeOwners(text=TEXT, repo="acme/rocket", path=".github/CODEOWNERS")
    assert owners.owners_of("setup.py") == ("@acme/core",)
    assert owners.owners_of("verl/workers/a.py") == ("@Alice", "@acme/rl-team")
    assert owners.owners_of("verl/trainer/ppo.py") == ("@bob",)
    assert owners.owners_of("/docs/index.md") == ("docs@acme.example",)
    assert owners.owners_of("vendor/lib.c") == ()
    assert owners.owns("alice", "verl/a.py")
    assert owners.owns("@ALICE", "verl/a.py")
    assert not owners.owns("@alice", "verl/trainer/ppo.py")
    assert owners.owns("@ACME/RL-TEAM", "verl/a.py")
    assert owners.owns("Docs@Acme.Example", "docs/a.md")
    assert owners.owned("@bob", ["verl/trainer/a.py", "verl/b.py", "verl/trainer/c/d.py"]) == [
        "verl/trainer/a.py", "verl/trainer/c/d.py"]


def test_the_paths_an_owner_owns_and_invalid_lines() -> None:
    owners = CodeOwners(text=TEXT)
    assert owners.patterns_of("@alice") == ("/verl/",)
    assert owners.patterns_of("@acme/core") == ("*",)
    assert owners.patterns_of("@nobody") == ()  # its only line is invalid and skipped
    assert owners.skipped_lines == (6,)
    assert owners.owners() == ("@acme/core", "@acme/rl-team", "@Alice", "@bob", "docs@acme.example")
    assert CodeOwners.model_validate_json(owners.model_dump_json()) == owners


def _git_repo(tmp_path: Path, where: str | None) -> Path:
    repo = RepoBuilder(tmp_path / "clone")
    repo.write("README.md", "hello\n")
    if where is not None:
        repo.write(where, TEXT)
        if where != "docs/CODEOWNERS":
            repo.write("docs/CODEOWNERS", "* @someone-else\n")  # GitHub takes the first location found
    repo.commit("Initial commit", datetime(2026, 4, 1, tzinfo=UTC))
    repo.commit("feat: x (#1)", datetime(2026, 4, 2, tzinfo=UTC))
    return repo.path


@pytest.mark.parametrize("where", CODEOWNERS_PATHS)
def test_read_from_a_git_clone_at_head(tmp_path: Path, where: str) -> None:
    source = GitSource(_git_repo(tmp_path, where), repo="acme/rocket")
    owners = read_codeowners(source, "acme/rocket")
    assert owners.path == where
    assert owners.repo == "acme/rocket"
    assert owners.owns("@bob", "verl/trainer/ppo.py")
    assert owners.text == TEXT


def test_git_clone_without_codeowners(tmp_path: Path) -> None:
    source = GitSource(_git_repo(tmp_path, None), repo="acme/rocket")
    assert source.file_text("acme/rocket", "CODEOWNERS") is None
    assert source.file_text("acme/rocket", "README.md") == "hello\n"
    with pytest.raises(CodeownersError) as caught:
        read_codeowners(source, "acme/rocket")
    assert "has no CODEOWNERS file" in str(caught.value)
    assert "没有 CODEOWNERS 文件" in caught.value.message("zh")


def test_git_clone_sees_head_not_the_working_tree(tmp_path: Path) -> None:
    path = _git_repo(tmp_path, "CODEOWNERS")
    (path / "CODEOWNERS").write_text("* @uncommitted\n", encoding="utf-8")
    owners = read_codeowners(GitSource(path, repo="acme/rocket"), "acme/rocket")
    assert owners.owns("@bob", "verl/trainer/a.py")
    assert not owners.owns("@uncommitted", "x")


def _record() -> PullRequest:
    return PullRequest(repo="acme/rocket", number=1, title="feat: x", merged_at=datetime(2026, 4, 2, tzinfo=UTC))


def test_read_from_the_github_contents_api() -> None:
    fake = FakeGitHub([_record()], files={".github/CODEOWNERS": TEXT, "docs/CODEOWNERS": "* @late\n"})
    with serve(fake) as url, httpx.Client() as client:
        source = GitHubSource(token="test-token", api_url=url, client=client)
        owners = read_codeowners(source, "acme/rocket")
        assert owners.path == ".github/CODEOWNERS"
        assert owners.text == TEXT
        assert owners.owns("@alice", "verl/x.py")
        assert ("GET", "/repos/acme/rocket/contents/.github/CODEOWNERS", 200) in fake.log
        again = read_codeowners(source, "acme/rocket")  # conditional request: 304 from the ETag cache
        assert again == owners
        assert fake.log[-1][2] == 304


def test_github_falls_through_the_locations_and_reports_none() -> None:
    fake = FakeGitHub([_record()], files={"docs/CODEOWNERS": TEXT})
    with serve(fake) as url, httpx.Client() as client:
        source = GitHubSource(token=None, api_url=url, client=client)
        assert read_codeowners(source, "acme/rocket").path == "docs/CODEOWNERS"
        assert [p for _, p, s in fake.log if s == 404] == ["/repos/acme/rocket/contents/.github/CODEOWNERS",
                                                           "/repos/acme/rocket/contents/CODEOWNERS"]
    empty = FakeGitHub([_record()])
    with serve(empty) as url, httpx.Client() as client, pytest.raises(CodeownersError, match="has no CODEOWNERS"):
        read_codeowners(GitHubSource(token=None, api_url=url, client=client), "acme/rocket")


def test_a_snapshot_cannot_see_codeowners() -> None:
    source = SnapshotSource(Path(__file__).resolve().parents[2] / "examples" / "verl-2026-W16.jsonl")
    with pytest.raises(CodeownersError) as caught:
        read_codeowners(source, "verl-project/verl")
    assert "cannot see CODEOWNERS" in str(caught.value)
    assert "git:PATH" in str(caught.value)
    assert "看不到 CODEOWNERS" in caught.value.message("zh")
