"""A git source kept fresh: `refresh` fetches the remote's default branch (bounded, logged, counted) and the
source reads the new merges; `git:URL` clones into the clones folder on first use; a fetch that fails leaves the
history as it was and says why."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fakes.git_repo import RepoBuilder

from bot import metrics
from bot.channels import Channels, refresh_source
from bot.config import Settings
from bot.errors import PRNotFoundError, SourceError
from bot.sources.base import open_source
from bot.sources.git import UPSTREAM, GitSource, is_remote

REPO = "acme/widgets"


@pytest.fixture
def upstream(tmp_path: Path) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "upstream")
    repo.write("a.py", "a = 1\n")
    repo.commit("Add a (#1)", datetime(2026, 4, 14, 9, 0, tzinfo=UTC), author="alice")
    return repo


def _fetches(outcome: str) -> float:
    return metrics.GIT_FETCHES.labels(outcome)._value.get()


def test_refresh_brings_a_merge_made_after_the_first_read(upstream: RepoBuilder, tmp_path: Path) -> None:
    clone = tmp_path / "clone.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream.path), str(clone)], check=True)
    source = GitSource(clone, repo=REPO)
    assert source.pull_request(REPO, 1).title == "Add a"
    upstream.write("b.py", "b = 2\n")
    upstream.commit("Add b (#2)", datetime(2026, 4, 15, 9, 0, tzinfo=UTC), author="bob")
    with pytest.raises(PRNotFoundError):
        source.pull_request(REPO, 2)  # the clone as it was
    before = _fetches("ok")
    assert source.refresh() is True
    assert _fetches("ok") == before + 1
    assert source.pull_request(REPO, 2).title == "Add b"
    assert source.refresh() is False  # nothing new
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", UPSTREAM], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert head == upstream.git("rev-parse", "HEAD").strip()
    assert subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip() != head  # the clone's own branch is left alone


def test_fetch_first_reads_the_remote_before_the_first_answer(upstream: RepoBuilder, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(upstream.path), str(clone)], check=True)  # a working tree
    upstream.commit("Add c (#3)", datetime(2026, 4, 16, 9, 0, tzinfo=UTC), author="carol")
    assert GitSource(clone, repo=REPO).merge_times(REPO)[-1] == datetime(2026, 4, 14, 9, 0, tzinfo=UTC)
    fresh = GitSource(clone, repo=REPO, fetch=True)
    assert fresh.pull_request(REPO, 3).title == "Add c"


def test_a_url_source_is_cloned_into_the_clones_folder(upstream: RepoBuilder, tmp_path: Path) -> None:
    url = f"file://{upstream.path}"
    assert is_remote(url)
    assert is_remote("git@github.com:acme/widgets.git")
    assert not is_remote("/srv/widgets.git")
    settings = Settings(git_clones_dir=str(tmp_path / "clones"))
    source = open_source(f"git:{url}", settings=settings)
    assert source.pull_request(REPO, 1).title == "Add a"
    assert (tmp_path / "clones" / "upstream.git").is_dir()


def test_a_failed_fetch_keeps_the_history_and_says_why(upstream: RepoBuilder, tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    clone = tmp_path / "clone.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream.path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "set-url", "origin", str(tmp_path / "gone")], check=True)
    source = GitSource(clone, repo=REPO)
    failed = _fetches("failed")
    with pytest.raises(SourceError, match="git fetch failed"):
        source.refresh()
    assert _fetches("failed") == failed + 1
    assert refresh_source(source, "git:clone.git") is False  # logged, not raised
    assert "fetching git:clone.git failed" in caplog.text
    assert source.pull_request(REPO, 1).title == "Add a"
    lonely = tmp_path / "lonely"
    RepoBuilder(lonely).commit("Add x (#9)", datetime(2026, 4, 14, tzinfo=UTC))
    with pytest.raises(SourceError, match="no origin remote"):
        GitSource(lonely, repo=REPO).refresh()


def test_channels_fetch_every_configured_git_source(upstream: RepoBuilder, tmp_path: Path) -> None:
    clone = tmp_path / "clone.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(upstream.path), str(clone)], check=True)
    settings = Settings(default_source=f"git:{clone}", default_repo=REPO)
    channels = Channels(settings, open_source=lambda spec: open_source(spec, settings=settings))
    upstream.commit("Add d (#4)", datetime(2026, 4, 17, 9, 0, tzinfo=UTC), author="dan")
    assert channels.refresh() == 1  # opened for the fetch though nobody asked yet
    source, repo = channels.resolve("slack:C1")
    assert source.pull_request(repo, 4).title == "Add d"
