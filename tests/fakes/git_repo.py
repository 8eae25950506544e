"""Build real git repositories for tests, with real ``git`` commands.

:class:`RepoBuilder` writes commits with chosen messages and dates;
:func:`repo_from_prs` replays PR records (files with the right numbers of added
and deleted lines, renames, removals) as squash commits or GitHub merge commits.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

from bot.models import PullRequest


class RepoBuilder:
    """A git repository under ``path`` on branch ``main``; every commit gets explicit dates."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "builder")
        self.git("config", "user.email", "builder@example.com")
        self.git("config", "commit.gpgsign", "false")

    def git(self, *args: str, when: datetime | None = None, author: str | None = None) -> str:
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(self.path)}
        if when is not None:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when.isoformat()
        if author is not None:
            env["GIT_AUTHOR_NAME"] = author
            env["GIT_AUTHOR_EMAIL"] = f"{author}@example.com"
        done = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, text=True, env=env,
                              check=True)
        return done.stdout

    def write(self, rel: str, text: str) -> None:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def commit(self, message: str, when: datetime, *, author: str = "builder") -> str:
        """Commit everything in the tree with ``message`` verbatim; returns the sha."""
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", message, when=when, author=author)
        return self.git("rev-parse", "HEAD").strip()

    def merge(self, branch: str, message: str, when: datetime) -> str:
        """Merge ``branch`` into the current branch with a merge commit; returns the sha."""
        self.git("merge", "-q", "--no-ff", "--cleanup=verbatim", "-m", message, branch, when=when)
        return self.git("rev-parse", "HEAD").strip()


def _lines(tag: str, count: int, path: str) -> str:
    return "".join(f"{tag} {i} of {path}\n" for i in range(count))


def _shared(path: str, count: int) -> str:
    # Long common lines keep a renamed file similar enough for git's rename detection.
    return "".join(f"shared context line {i} of the renamed file, long enough to dominate the similarity\n"
                   for i in range(count))


def repo_from_prs(path: Path, prs: list[PullRequest], *, merge_every: int = 0) -> RepoBuilder:
    """A repository whose first-parent history holds ``prs`` (in merge order) with their files.

    Before each PR a setup commit without a PR number gives every file the PR modifies,
    removes or renames exactly ``deletions`` lines, so that the PR commit shows the record's
    added and deleted line counts. Every ``merge_every``-th PR (when > 0) lands as a GitHub
    merge commit (``Merge pull request #N from AUTHOR/branch``, title as the body's first line)
    instead of a squash commit.
    """
    repo = RepoBuilder(path)
    repo.write("README.md", "test repository\n")
    repo.commit("Initial commit", prs[0].merged_at - timedelta(days=1))
    for index, pr in enumerate(prs, start=1):
        when = pr.merged_at
        for f in pr.files:
            dels = f.deletions or 0
            if f.status == "renamed" and f.previous_path:
                repo.write(f.previous_path, _shared(f.previous_path, 4 * (dels + (f.additions or 0)) + 4)
                           + _lines("old", dels, f.previous_path))
            elif f.status in ("modified", "removed"):
                repo.write(f.path, _lines("old", dels, f.path))
        repo.commit(f"prepare files for {pr.title[:30]}", when - timedelta(seconds=2))
        as_merge = merge_every > 0 and index % merge_every == 0
        if as_merge:
            repo.git("checkout", "-q", "-b", f"pr-{pr.number}")
        for f in pr.files:
            adds = f.additions or 0
            if f.status == "removed":
                (path / f.path).unlink()
            elif f.status == "renamed" and f.previous_path:
                (path / f.previous_path).unlink()
                repo.write(f.path, _shared(f.previous_path, 4 * ((f.deletions or 0) + adds) + 4)
                           + _lines("new", adds, f.path))
            else:
                repo.write(f.path, _lines("new", adds, f.path))
        if as_merge:
            repo.commit(f"work on {pr.title[:30]}", when - timedelta(seconds=1), author=pr.author)
            repo.git("checkout", "-q", "main")
            body = f"\n\n{pr.body}" if pr.body else ""
            repo.merge(f"pr-{pr.number}", f"Merge pull request #{pr.number} from {pr.author}/pr-{pr.number}\n\n"
                       f"{pr.title}{body}", when)
        else:
            body = f"\n\n{pr.body}" if pr.body else ""
            repo.commit(f"{pr.title} (#{pr.number}){body}", when, author=pr.author)
    return repo
