"""The personal weekly digest on verl 2026-W16 (the shipped example), checked against a set computed
independently from the file, and on records made here (bots, CODEOWNERS, ordering)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.codeowners import CodeOwners
from bot.config import Settings
from bot.digest.personal import PersonalDigest, personal_digest, reading_order
from bot.digest.service import build_digest
from bot.digest.window import week_window
from bot.filters import parse_filter
from bot.models import Digest, PullRequest
from bot.sources.jsonl import SnapshotSource

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "verl-2026-W16.jsonl"
REPO = "verl-project/verl"
NOW = datetime(2026, 4, 20, 2, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def week(verl_settings: Settings) -> tuple[Digest, list[PullRequest]]:
    window = week_window(2026, 16, "Asia/Shanghai")
    prs = SnapshotSource(EXAMPLE).merged_prs(REPO, window)
    return build_digest(prs, repo=REPO, window=window, settings=verl_settings, now=NOW), prs


def _touching_trainer_from_the_file() -> set[int]:
    """Independently of the filter code: the PRs of the file with a file (or an old path) under verl/trainer/."""
    found = set()
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        paths = [p for f in record["files"] for p in (f["path"], f.get("previous_path")) if p]
        if any(p.startswith("verl/trainer/") for p in paths):
            found.add(record["number"])
    return found


def test_my_area_this_week_is_exactly_the_trainer_prs_without_ci(week: tuple[Digest, list[PullRequest]]) -> None:
    digest, prs = week
    mine = personal_digest(digest, prs, parse_filter("path:verl/trainer/** -label:ci"), now=NOW)
    with_ci = {item.number for item in digest.prs if "ci" in item.labels}
    expected = _touching_trainer_from_the_file() - with_ci
    assert len(expected) >= 5  # the example week has enough of them for the check to mean something
    assert {p.pr.number for p in mine.prs} == expected
    assert mine.others == len(digest.prs) - len(expected)
    # the budget is summed from the very analyses of those PRs in the week's digest
    analyses = [digest.pr(n).analysis for n in expected]
    assert all(a is not None for a in analyses)
    close = [a.recommendation.minutes for a in analyses if a and a.recommendation.level == "close_read"]
    skim = [a.recommendation.minutes for a in analyses if a and a.recommendation.level == "skim"]
    skip = [a for a in analyses if a and a.recommendation.level == "skip"]
    budget = mine.budget
    assert (budget.close_reads, budget.close_read_minutes) == (len(close), sum(close))
    assert (budget.skims, budget.skim_minutes) == (len(skim), sum(skim))
    assert budget.skips == len(skip)
    assert budget.pending == 0
    # ordered by what to read first, and each says why it matched
    assert [p.pr.number for p in mine.prs] == sorted(expected, key=lambda n: reading_order(digest.pr(n)))
    levels = [p.pr.analysis.recommendation.level for p in mine.prs if p.pr.analysis]
    assert levels == sorted(levels, key=["close_read", "skim", "skip"].index)
    assert all(r.key == "path" and r.evidence.startswith("verl/trainer/") for p in mine.prs for r in p.reasons)
    assert PersonalDigest.model_validate_json(mine.model_dump_json()) == mine


def test_the_other_prs_line_counts_their_labels(week: tuple[Digest, list[PullRequest]]) -> None:
    digest, prs = week
    mine = personal_digest(digest, prs, parse_filter("npu"), now=NOW)
    rest = [item for item in digest.prs if "npu" not in item.labels]
    assert mine.others == len(rest)
    top = mine.other_labels[0]
    assert top.count == max(sum(label in item.labels for item in rest) for label in {x for i in rest for x in i.labels})
    assert "npu" not in {x.label for x in mine.other_labels}


def test_nothing_matches(week: tuple[Digest, list[PullRequest]]) -> None:
    digest, prs = week
    mine = personal_digest(digest, prs, parse_filter("label:no-such-label"), now=NOW)
    assert mine.prs == ()
    assert mine.others == len(digest.prs)
    assert mine.budget.minutes == 0


def test_bots_and_codeowners(verl_settings: Settings) -> None:
    window = week_window(2026, 16, "Asia/Shanghai")
    base = SnapshotSource(EXAMPLE).merged_prs(REPO, window)
    bot_pr = base[0].model_copy(update={"author": "dependabot[bot]", "number": 99001})
    prs = [*base, bot_pr]
    digest = build_digest(prs, repo=REPO, window=window, settings=verl_settings, now=NOW)
    everything = personal_digest(digest, prs, parse_filter(""), now=NOW)
    assert 99001 not in {p.pr.number for p in everything.prs}
    assert len(everything.prs) == len(base)
    named = personal_digest(digest, prs, parse_filter("author:dependabot"), now=NOW)
    assert [p.pr.number for p in named.prs] == [99001]
    owners = CodeOwners(text="* @core\n/verl/trainer/ @alice\n/verl/trainer/config/ @bob\n", repo=REPO)
    mine = personal_digest(digest, prs, parse_filter("path:@me"), me="alice", codeowners=owners, now=NOW)
    for item in mine.prs:
        files = next(pr for pr in prs if pr.number == item.pr.number).files
        assert any(owners.owns("@alice", f.path) for f in files)
    assert mine.prs


def test_several_filters_any_of_them(week: tuple[Digest, list[PullRequest]]) -> None:
    """A person with several subscriptions: a PR is theirs when any one matches, with that one's reasons."""
    digest, prs = week
    trainer, npu = parse_filter("path:verl/trainer/** -label:ci"), parse_filter("npu")
    both = personal_digest(digest, prs, [trainer, npu], now=NOW)
    alone = {f: {p.pr.number for p in personal_digest(digest, prs, f, now=NOW).prs} for f in (trainer, npu)}
    assert {p.pr.number for p in both.prs} == alone[trainer] | alone[npu]
    assert alone[trainer] - alone[npu]  # the union means something here
    assert alone[npu] - alone[trainer]
    assert both.filters == (trainer, npu)
    for item in both.prs:
        first = trainer if item.pr.number in alone[trainer] else npu
        assert item.reasons == next(p.reasons for p in personal_digest(digest, prs, first, now=NOW).prs
                                    if p.pr.number == item.pr.number)
    assert both.others == len(digest.prs) - len(both.prs)
