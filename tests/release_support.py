"""A real git repository that replays verl's PRs of 2026-W15 and W16 with release tags on them (issue 29): v0.7.0 in
W15 (lightweight), v0.7.1 in the middle of W16 (annotated), a ``nightly`` tag that is no release, and v0.7.1rc0 on
a branch main never merged (no release of the default branch, though it holds earlier W16 commits)."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

from conftest import ROOT
from fakes.git_repo import RepoBuilder, repo_from_prs

from bot.digest.window import date_window, week_window
from bot.models import PullRequest
from bot.sources.jsonl import SnapshotSource

REPO = "verl-project/verl"
W16 = week_window(2026, 16, "Asia/Shanghai")


def release_records() -> list[PullRequest]:
    """verl's PRs merged 2026-04-06 to 2026-04-19 (Asia/Shanghai), from the shipped example."""
    source = SnapshotSource(ROOT / "examples" / "verl-2026-W12-W16.jsonl.gz")
    return source.merged_prs(REPO, date_window(date(2026, 4, 6), date(2026, 4, 19), "Asia/Shanghai"))


def tagged_repo(path: Path, records: list[PullRequest]) -> tuple[RepoBuilder, dict[str, int]]:
    """The replayed repository at ``path`` and, per tag, the number of the PR whose commit it points at."""
    repo = repo_from_prs(path, records)
    week16 = [pr for pr in records if W16.start <= pr.merged_at < W16.end]
    by_number = {int(m[1]): sha for sha, m in ((line.split(" ", 1)[0], re.search(r"\(#(\d+)\)$", line))
                 for line in repo.git("log", "--format=%H %s").splitlines()) if m}
    placed = {"v0.7.0": [pr for pr in records if pr.merged_at < W16.start][-5].number,
              "v0.7.1": week16[len(week16) // 2].number, "nightly": week16[-1].number}
    repo.git("tag", "v0.7.0", by_number[placed["v0.7.0"]])
    repo.git("tag", "-a", "-m", "release v0.7.1", "v0.7.1", by_number[placed["v0.7.1"]])
    repo.git("tag", "nightly", by_number[placed["nightly"]])
    side = week16[len(week16) // 4]
    repo.git("checkout", "-q", "-b", "rc", by_number[side.number])
    repo.write("RC.txt", "release candidate\n")
    repo.commit("prepare v0.7.1rc0", side.merged_at + timedelta(minutes=1))
    repo.git("tag", "v0.7.1rc0")
    repo.git("checkout", "-q", "main")
    return repo, placed
