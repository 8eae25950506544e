"""Releases (issue 29): every PR of verl 2026-W16 carries ``released_in``, the first release whose tag holds its merge
commit, from the git source (version tags reachable from the default branch) and from the GitHub API source (the
fake's releases, tags and compare), both checked against ``git tag --contains`` on a real repository that replays
verl's PRs of 2026-W15 and W16 with tags placed on them."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fakes.git_repo import RepoBuilder, repo_from_prs
from fakes.github_server import FakeGitHub, serve
from release_support import REPO, W16, release_records, tagged_repo

from bot.models import PullRequest
from bot.sources.git import GitSource
from bot.sources.github import GitHubSource

VERSION = re.compile(r"v?\d+(?:\.\d+)+(?:[.+-]?[0-9A-Za-z]+)*")


@pytest.fixture(scope="module")
def records() -> list[PullRequest]:
    return release_records()


@pytest.fixture(scope="module")
def tagged(records: list[PullRequest], tmp_path_factory: pytest.TempPathFactory) -> tuple[RepoBuilder, dict[str, int]]:
    return tagged_repo(tmp_path_factory.mktemp("verl") / "verl", records)


def _expected(repo: RepoBuilder, sha: str) -> str | None:
    """The first release holding ``sha`` by git's own answer: ``git tag --contains``, among the version tags
    reachable from main, the one whose commit is oldest."""
    merged = set(repo.git("tag", "--merged", "main").split())
    tags = [t for t in repo.git("tag", "--contains", sha).split() if t in merged and VERSION.fullmatch(t)]
    if not tags:
        return None
    return min(tags, key=lambda t: datetime.fromisoformat(repo.git("log", "-1", "--format=%cI", f"{t}^{{commit}}")
                                                          .strip()))


def test_the_git_source_agrees_with_git_tag_contains(tagged: tuple[RepoBuilder, dict[str, int]]) -> None:
    repo, placed = tagged
    source = GitSource(repo.path, repo=REPO)
    assert [r.tag for r in source.releases(REPO)] == ["v0.7.0", "v0.7.1"]  # nightly and the rc branch are not
    prs = source.merged_prs(REPO, W16)
    assert len(prs) == 39
    assert all(pr.release_known for pr in prs)
    for pr in prs:
        assert pr.merge_commit_sha is not None
        assert pr.released_in == _expected(repo, pr.merge_commit_sha), pr.number
    released = [pr.number for pr in prs if pr.released_in == "v0.7.1"]
    assert released[-1] == placed["v0.7.1"]
    assert len(released) == 20
    assert [pr.released_in for pr in prs].count(None) == 19  # merged after v0.7.1: not released yet
    assert source.pull_request(REPO, placed["v0.7.1"]).released_in == "v0.7.1"


def test_the_api_source_gives_the_same_releases(tagged: tuple[RepoBuilder, dict[str, int]],
                                                records: list[PullRequest]) -> None:
    repo, placed = tagged
    from_git = {pr.number: pr.released_in for pr in GitSource(repo.path, repo=REPO).merged_prs(REPO, W16)}
    fake = FakeGitHub(records, token="t")
    by_number = {pr.number: pr for pr in records}
    fake.releases = [(tag, str(by_number[placed[tag]].merge_commit_sha),
                      by_number[placed[tag]].merged_at + timedelta(hours=3)) for tag in ("v0.7.0", "v0.7.1")]
    with serve(fake) as url:
        source = GitHubSource(token="t", api_url=url)
        try:
            prs = source.merged_prs(REPO, W16)
            assert {pr.number: pr.released_in for pr in prs} == from_git
            before = source.stats.requests
            assert source.pull_request(REPO, placed["v0.7.1"]).released_in == "v0.7.1"
            assert source.stats.requests - before == 2  # the PR and its files: releases, compares remembered
        finally:
            source.close()
    compares = [path for _, path, _ in fake.log if "/compare/" in path]
    assert len(compares) == 1  # v0.7.0...v0.7.1 only: the PRs after v0.7.1 need no more


def test_a_repository_without_releases_says_nothing(records: list[PullRequest], tmp_path: Path) -> None:
    repo = repo_from_prs(tmp_path / "plain", records[-5:])
    prs = GitSource(repo.path, repo=REPO).merged_prs(REPO, W16)
    assert prs
    assert not any(pr.release_known or pr.released_in for pr in prs)
