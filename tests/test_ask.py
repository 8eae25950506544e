"""Questions about the PRs of a window: answered from the data (labels, paths, titles, bodies, diff
lines) with citations, honest about words that match everything, bounded, and "none" rather than a guess."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import EXAMPLE, FIXED_NOW, REPO, SHANGHAI

from bot.config import Settings
from bot.digest.ask import EVIDENCE_CHARS, MAX_EVIDENCE, answer_question
from bot.digest.service import build_digest
from bot.digest.window import week_window
from bot.models import Digest, FileChange, PullRequest
from bot.sources.jsonl import SnapshotSource

W16 = week_window(2026, 16, SHANGHAI)
FULLY_ASYNC = {5977, 5988, 6006, 6012, 6029, 6046}  # the PRs labelled fully_async (title module) in W16


@pytest.fixture(scope="module")
def records() -> list[PullRequest]:
    return SnapshotSource(EXAMPLE).merged_prs(REPO, W16)  # the shipped W16 example carries the diffs


@pytest.fixture(scope="module")
def digest(records: list[PullRequest], verl_settings: Settings) -> Digest:
    return build_digest(records, repo=REPO, window=W16, settings=verl_settings, now=FIXED_NOW)


def test_which_prs_touched_fully_async(digest: Digest, records: list[PullRequest]) -> None:
    answer = answer_question(digest, records, ["fully_async"], question="which PRs touched fully_async last week?")
    numbers = [m.pr.number for m in answer.matches]
    assert set(numbers[:6]) == FULLY_ASYNC  # about fully_async: label, title and paths
    assert numbers[6:] == [5961]  # only a script under fully_async_policy/ among 16 files: last
    for match in answer.matches[:6]:
        kinds = {e.kind for e in match.evidence}
        assert {"label", "path"} <= kinds
        assert all(e.path is None or "fully_async" in e.path for e in match.evidence)
    assert answer.total == 7
    assert answer.window_prs == 39
    assert not answer.none


def test_rollout_config_needs_both_words_and_ranks_files_holding_both_first(
    digest: Digest, records: list[PullRequest],
) -> None:
    answer = answer_question(digest, records, ["rollout", "配置"])
    numbers = [m.pr.number for m in answer.matches]
    assert numbers[:2] == [5978, 5986]  # [tool, rollout, cfg] … ; verl/trainer/config/rollout/rollout.yaml
    for match in answer.matches:
        assert set(match.terms) == {"rollout", "配置"}, match.pr.number
    shared = answer.matches[1].evidence[0]
    assert (shared.kind, shared.path) == ("path", "verl/trainer/config/rollout/rollout.yaml")
    assert answer.counts[0].prs == 15
    assert answer.counts[1].prs == 7
    assert numbers[-1] == 6053  # the 92-file rename touches rollout.yaml too, but ranks last


def test_diff_lines_are_changed_lines_cut_to_one_line(digest: Digest, records: list[PullRequest]) -> None:
    answer = answer_question(digest, records, ["routed_experts"])
    assert [m.pr.number for m in answer.matches][:2] in ([6029, 6046], [6046, 6029])
    lines = [e for m in answer.matches for e in m.evidence if e.kind == "diff"]
    assert lines
    for line in lines:
        assert line.text[0] in "+-"
        assert not line.text.startswith(("+++", "---"))
        assert "\n" not in line.text
        assert len(line.text) <= EVIDENCE_CHARS
        assert "routed_experts" in line.text.replace("-", "_")  # routed-experts is the same word
    for match in answer.matches[:2]:
        assert {e.path for e in match.evidence if e.kind == "diff"} == {
            "verl/experimental/fully_async_policy/agent_loop/agent_loop.py"}
    assert all(len(m.evidence) <= MAX_EVIDENCE for m in answer.matches)


def test_a_chinese_word_matches_through_the_glossary(digest: Digest, records: list[PullRequest]) -> None:
    answer = answer_question(digest, records, ["依赖"])
    assert {5900, 6032} == {m.pr.number for m in answer.matches[:2]}  # bump veomni; remove requirements.txt
    assert any(e.text == "requirements-cuda.txt" for e in answer.matches[1].evidence + answer.matches[0].evidence)


def test_none_in_that_window_rather_than_a_guess(digest: Digest, records: list[PullRequest]) -> None:
    nothing = answer_question(digest, records, ["xyzzy"])
    assert nothing.none
    assert nothing.total == 0
    assert nothing.missing_terms == ("xyzzy",)
    half = answer_question(digest, records, ["rollout", "xyzzy"])
    assert half.none  # no PR matches both: none, and the counts say which word found nothing
    assert [(c.term, c.prs) for c in half.counts] == [("rollout", 15), ("xyzzy", 0)]


def test_a_word_in_every_pr_narrows_nothing(digest: Digest, records: list[PullRequest]) -> None:
    with_verl = answer_question(digest, records, ["verl", "docker"])
    docker = answer_question(digest, records, ["docker"])
    assert with_verl.common_terms == ("verl",)  # in every path: it only ranks
    assert {m.pr.number for m in with_verl.matches} == {m.pr.number for m in docker.matches}
    everywhere = answer_question(digest, records, ["import"])  # in the diffs of most PRs, the topic of none
    assert everywhere.none
    assert everywhere.common_terms == ("import",)
    assert everywhere.counts[0].mentions > 39 / 2


def test_label_filter_and_bound(digest: Digest, records: list[PullRequest]) -> None:
    npu_docker = answer_question(digest, records, ["docker"], label="NPU")
    npu = {pr.number for pr in digest.prs if "npu" in pr.labels}
    assert npu_docker.matches
    assert {m.pr.number for m in npu_docker.matches} <= npu
    assert npu_docker.window_prs == len(npu)
    assert npu_docker.label == "NPU"
    top = answer_question(digest, records, ["rollout"], limit=3)
    assert len(top.matches) == 3
    assert top.total == 15
    assert [m.score for m in top.matches] == sorted((m.score for m in top.matches), reverse=True)


def test_an_empty_window_and_no_words(digest: Digest, records: list[PullRequest], verl_settings: Settings) -> None:
    empty = build_digest([], repo=REPO, window=week_window(2026, 40, SHANGHAI), settings=verl_settings, now=FIXED_NOW)
    answer = answer_question(empty, [], ["rollout"])
    assert answer.none
    assert answer.window_prs == 0
    assert answer_question(digest, records, []).none
    assert answer_question(digest, records, ["  "]).none


def _pr(number: int, title: str, *paths: str, patch: str | None = None, body: str = "") -> PullRequest:
    return PullRequest(
        repo="acme/widgets", number=number, title=title, body=body, author="a",
        merged_at=datetime(2026, 4, 14, tzinfo=UTC) + timedelta(hours=number),
        files=tuple(FileChange(path=p, status="modified", additions=3, deletions=1, patch=patch) for p in paths),
        additions=3 * len(paths), deletions=len(paths), changed_files=len(paths),
    )


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("npu", {1}),  # not "input" (#2)
        ("config", {3, 4}),  # configs, configuration
        ("fully async", {5}), ("fully-async", {5}), ("fully_async", {5}),
        ("ci", {6}),  # not "circle" (#7)
        ("dependencies", {8}),  # the singular in a path
        ("配置", {3, 4}),  # through the glossary
        ("verl/trainer", {9}),  # a path
    ],
)
def test_word_boundaries(term: str, expected: set[int], default_settings: Settings) -> None:
    prs = [
        _pr(1, "feat: npu kernels", "src/ascend_npu/ops.py"),
        _pr(2, "fix: input parsing", "src/input.py"),
        _pr(3, "chore: move configs", "configs/base.yaml"),
        _pr(4, "docs: configuration guide", "docs/guide.md"),
        _pr(5, "fix: fully async trainer", "src/fully_async/run.py"),
        _pr(6, "ci: faster", ".github/ci.yml"),
        _pr(7, "feat: circle packing", "src/circle.py"),
        _pr(8, "chore: pin", "dependency/pins.txt"),
        _pr(9, "refactor: trainer", "verl/trainer/main.py"),
    ]
    window = week_window(2026, 16, "UTC")
    digest = build_digest(prs, repo="acme/widgets", window=window, settings=default_settings, now=FIXED_NOW)
    assert {m.pr.number for m in answer_question(digest, prs, [term]).matches} == expected


def test_body_and_context_lines(default_settings: Settings) -> None:
    patch = "@@ -1,3 +1,3 @@ def routed_experts():\n context routed_experts here\n-old = 1\n+new = 2\n"
    prs = [_pr(1, "fix: a thing", "a.py", patch=patch), _pr(2, "fix: other", "b.py", body="Handles routed_experts.")]
    digest = build_digest(prs, repo="acme/widgets", window=week_window(2026, 16, "UTC"),
                          settings=default_settings, now=FIXED_NOW)
    answer = answer_question(digest, prs, ["routed_experts"])
    assert [m.pr.number for m in answer.matches] == [2]  # a hunk header and a context line are not changes
    assert answer.matches[0].evidence[0].kind == "body"
    assert "routed_experts" in answer.matches[0].evidence[0].text
