"""The judgement model (bot/digest/judgement.py): its arithmetic, its file, its explanation, and the analyzer's use
of it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from bot.config import Settings
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer, history_profile, path_level
from bot.digest.judgement import FEATURE_NAMES, Model, explain, judge, repository_offset, shipped_model
from bot.models import FileChange, PullRequest

MODEL = Model(names=("fix_core", "explained", "trivial"), importance_intercept=2.0,
              importance_weights=(3.0, 0.5, -1.0), verdict_cuts=(4, 6), calibration=0.5, reference=4.0)


def test_importance_is_the_rounded_score_held_to_one_to_ten() -> None:
    j = judge({"fix_core": 1.0, "explained": 2.0, "unknown": 9.0}, model=MODEL)
    assert j.importance_score == pytest.approx(6.0)
    assert j.importance == 6
    assert [c.name for c in j.contributions] == ["fix_core", "explained"]
    assert j.verdict == "close_read"  # importance 6: from the second cut
    assert judge({"trivial": 5.0}, model=MODEL).importance == 1
    assert judge({"explained": 4.0}, model=MODEL).verdict == "skim"  # importance 4
    assert judge({}, model=MODEL).verdict == "skip"  # importance 2
    renamed = judge({"project_rename": 1.0}, model=MODEL)
    assert (renamed.importance, renamed.verdict) == (6, "skim")


def test_the_repository_offset_moves_importance_and_verdict_together() -> None:
    # the average recent PR of this repository scores 2 + 0.5 * 4 = 4.0: the reference, no offset
    assert repository_offset(MODEL, {"explained": 4.0}) == pytest.approx(0.0)
    # a repository whose average PR scores 6.0 is pulled down by half the difference
    offset = repository_offset(MODEL, {"explained": 8.0})
    assert offset == pytest.approx(-1.0)
    assert repository_offset(MODEL, None) == 0.0
    plain, calibrated = judge({"fix_core": 1.0}, model=MODEL), judge({"fix_core": 1.0}, model=MODEL, offset=offset)
    assert calibrated.importance_score == pytest.approx(plain.importance_score - 1.0)
    assert calibrated.importance == plain.importance - 1


def test_the_weights_file_round_trips_and_names_only_known_features() -> None:
    again = Model.from_json(json.loads(json.dumps(MODEL.to_json())))
    assert again == MODEL
    shipped = shipped_model()
    assert set(shipped.names) <= set(FEATURE_NAMES)
    assert 1 < shipped.verdict_cuts[0] < shipped.verdict_cuts[1] <= 10
    bad = MODEL.to_json()
    bad["importance"]["weights"]["no_such_fact"] = 1.0  # type: ignore[index]
    with pytest.raises(ValueError, match="no_such_fact"):
        Model.from_json(bad)
    with pytest.raises(ValueError, match="missing"):
        Model.from_json({"importance": {}})


@pytest.mark.parametrize(("language", "words"), [("zh", ("截距", "核心路径上的实际修复", "值得精读")),
                                                  ("en", ("intercept", "a real fix in a core path", "close read"))])
def test_the_explanation_names_each_fact_and_the_result(language: str, words: tuple[str, ...]) -> None:
    j = judge({"fix_core": 1.0, "explained": 2.0}, model=MODEL, offset=-0.5)
    lines = explain(j, language, model=MODEL)  # type: ignore[arg-type]
    text = "\n".join(lines)
    for word in words:
        assert word in text
    assert "+3.00" in text  # fix_core's points of importance
    assert "-0.50" in text  # the repository offset
    assert lines[-1].startswith("重要性 6/10" if language == "zh" else "importance 6/10")
    assert lines[-1].count("6") >= 2  # the close-read cut is said


def _pr(number: int, title: str, *files: tuple[str, int, int]) -> PullRequest:
    return PullRequest(repo="acme/widget", number=number, title=title, body="", author="a",
                       merged_at=datetime(2026, 4, 14, tzinfo=UTC), merge_commit_sha="0" * 40,
                       additions=sum(f[1] for f in files), deletions=sum(f[2] for f in files),
                       changed_files=len(files),
                       files=tuple(FileChange(path=p, status="modified", additions=a, deletions=d,
                                              patch="@@ -1 +1 @@\n-x = 1\n+x = 2\n") for p, a, d in files))


def test_the_analyzer_gives_what_the_model_says(default_settings: Settings) -> None:
    pr = _pr(7, "fix: wrong loss scale in the trainer", ("widget/trainer.py", 30, 12))
    context = AnalysisContext(repo=default_settings.repo(pr.repo), language="en",
                              hot_files=frozenset({"widget/trainer.py"}))
    analyzer = HeuristicAnalyzer()
    analysis, j = analyzer.analyze(pr, context), analyzer.judge(pr, context)
    assert (analysis.importance, analysis.recommendation.level) == (j.importance, j.verdict)
    assert {c.name for c in j.contributions} <= set(shipped_model().names)


def test_a_history_profile_is_what_every_source_gives_of_it(default_settings: Settings) -> None:
    history = [_pr(n, f"fix: thing {n}", ("widget/a.py", 3, 1)) for n in range(1, 13)]
    context = AnalysisContext(repo=default_settings.repo("acme/widget"))
    assert path_level(history[0]).body == ""
    assert all(f.patch is None for f in path_level(history[0]).files)
    profile = history_profile(history, context)
    assert profile is not None
    assert profile["type_fix"] == pytest.approx(1.0)
    assert history_profile(history[:5], context) is None  # too little to say what the repository merges
