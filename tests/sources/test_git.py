"""GitSource on repositories built here with real git commands."""

from __future__ import annotations

import subprocess
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from fakes.git_repo import RepoBuilder

from bot.digest.window import date_window
from bot.errors import PRNotFoundError, SourceError, UnknownRepoError
from bot.sources.base import open_source
from bot.sources.git import GitSource, repo_from_remote

ALL = date_window(date(2000, 1, 1), date(2100, 1, 1), "UTC")
T0 = datetime(2026, 4, 14, 10, 0, tzinfo=timezone(timedelta(hours=8)))


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> RepoBuilder:
    repo = RepoBuilder(tmp_path_factory.mktemp("history"))
    repo.write("a.py", "one\ntwo\n")
    repo.commit("Initial commit", T0 - timedelta(days=1))
    repo.write("a.py", "one\nthree\nfour\n")
    first = repo.commit("[trainer] fix: keep (#1) of two (#12)\n\nCloses #99, see (#77).\nFixes #5", T0,
                        author="alice")
    repo.write("notes.txt", "no number\n")
    repo.commit("chore: tidy without a number\n\nmentions #12 and (#13)", T0 + timedelta(hours=1))
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("b.bin", "")
    (repo.path / "b.bin").write_bytes(b"\x00\x01\x02")
    repo.git("mv", "a.py", "renamed.py")
    repo.commit("feature work (#500)", T0 + timedelta(hours=2), author="bob")
    repo.git("checkout", "-q", "main")
    repo.merge("feature", "Merge pull request #20 from bob/feature\n\nAdd the feature\n\nLonger description #31.",
               T0 + timedelta(hours=3))
    repo.git("revert", "--no-edit", "--no-commit", first)
    repo.commit(f'Revert "[trainer] fix: keep (#1) of two (#12)" (#21)\n\nThis reverts commit {first}.',
                T0 + timedelta(hours=4))
    return repo


def test_squash_merge_and_skipped_commits(history: RepoBuilder) -> None:
    source = GitSource(history.path, repo="acme/widgets")
    prs = source.merged_prs("ACME/widgets", ALL)
    assert [pr.number for pr in prs] == [12, 20, 21]
    squash, merge, revert = prs
    assert squash.title == "[trainer] fix: keep (#1) of two"
    assert squash.body == "Closes #99, see (#77).\nFixes #5"
    assert squash.author == "alice"
    assert squash.merged_at == T0
    assert squash.merged_at.utcoffset() == timedelta(hours=8)
    assert [(f.path, f.status, f.additions, f.deletions) for f in squash.files] == [("a.py", "modified", 2, 1)]
    assert squash.files[0].patch is not None
    assert squash.files[0].patch.startswith("@@")
    assert squash.repo == "acme/widgets"
    assert merge.title == "Add the feature"
    assert merge.body == "Longer description #31."
    assert merge.author == "bob"
    by_path = {f.path: f for f in merge.files}
    assert by_path["renamed.py"].status == "renamed"
    assert by_path["renamed.py"].previous_path == "a.py"
    assert by_path["b.bin"].additions is None
    assert merge.changed_files == 2
    assert revert.reverts == 12
    assert squash.reverts is None


def test_pull_request_and_errors(history: RepoBuilder) -> None:
    source = GitSource(history.path, repo="acme/widgets")
    assert source.pull_request("acme/widgets", 20).title == "Add the feature"
    with pytest.raises(PRNotFoundError):
        source.pull_request("acme/widgets", 500)  # on the branch, not in the first-parent history
    with pytest.raises(PRNotFoundError):
        source.pull_request("acme/widgets", 13)  # only mentioned in a body
    with pytest.raises(UnknownRepoError, match="acme/widgets"):
        source.merged_prs("other/repo", ALL)


def test_bare_clone_with_origin(history: RepoBuilder, tmp_path: Path) -> None:
    bare = tmp_path / "widgets.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(history.path), str(bare)], check=True)
    subprocess.run(["git", "-C", str(bare), "remote", "set-url", "origin", "git@github.com:Acme/Widgets.git"],
                   check=True)
    source = open_source(f"git:{bare}")
    assert source.repos() == ["Acme/Widgets"]
    assert [pr.number for pr in source.merged_prs("acme/widgets", ALL)] == [12, 20, 21]


def test_window_is_half_open(history: RepoBuilder) -> None:
    source = GitSource(history.path)
    window = date_window(date(2026, 4, 14), date(2026, 4, 14), "Asia/Shanghai")
    edge = window.model_copy(update={"end": (T0 + timedelta(hours=3)).astimezone(UTC)})
    assert [pr.number for pr in source.merged_prs("x/y", edge)] == [12]


def test_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="git"):
        GitSource(tmp_path).merged_prs("x/y", ALL)
    with pytest.raises(SourceError, match="not a directory"):
        GitSource(tmp_path / "missing").repos()


@pytest.mark.parametrize(
    ("url", "name"),
    [("git@github.com:owner/name.git", "owner/name"), ("https://gitlab.com/group/sub/proj", None),
     ("/srv/git/proj.git", None), ("https://gitee.com/o/n.git/", "o/n"), ("nonsense", None)],
)
def test_repo_from_remote(url: str, name: str | None) -> None:
    assert repo_from_remote(url) == name


def test_trailers_are_not_part_of_the_description(tmp_path: Path) -> None:
    """A squash commit repeats its commits' trailers; the PR's description is the author's words only."""
    repo = RepoBuilder(tmp_path)
    repo.write("a.py", "one\n")
    repo.commit("Initial commit", T0 - timedelta(days=1))
    repo.write("a.py", "two\n")
    repo.commit("Fix the loader (#7)\n\nThe loader restarted on resume.\n\n* first try\n\nSigned-off-by: A <a@x>\n"
                "\nCo-authored-by: B <b@x>\nCo-authored-by: C <c@x>\nReviewed-by: D", T0)
    pr = GitSource(repo.path, repo="acme/widgets").pull_request("acme/widgets", 7)
    assert pr.body == "The loader restarted on resume.\n\n* first try"


def test_a_git_that_hangs_is_stopped_at_the_timeout(history: RepoBuilder, tmp_path: Path) -> None:
    import time

    hanging = tmp_path / "git"
    hanging.write_text("#!/bin/sh\nexec sleep 30\n", encoding="utf-8")
    hanging.chmod(0o755)
    started = time.monotonic()
    with pytest.raises(SourceError, match=r"longer than 0\.5 s"):
        GitSource(history.path, git=str(hanging), timeout_s=0.5).repos()
    assert time.monotonic() - started < 10
