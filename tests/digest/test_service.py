"""build_digest on the real week 2026-W16 and on edge cases: numbers computed, sections present, JSON stable."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from conftest import FIXED_NOW, REPO

from bot.config import Settings
from bot.digest.service import build_digest
from bot.digest.window import week_window
from bot.models import Analysis, Digest, PullRequest
from bot.sources.jsonl import SnapshotSource

REFERENCE_39 = {
    5960, 5982, 5977, 5939, 5935, 5950, 5899, 5971, 5988, 5809, 5994, 5961, 5991, 5986, 6004, 6006, 6005,
    5900, 5989, 6016, 6021, 6001, 5978, 6017, 6022, 6012, 5996, 6031, 6032, 5969, 6029, 6034, 5997, 6024,
    5951, 6039, 6041, 6046, 6053,
}


def test_w16_has_exactly_the_reference_prs(w16_digest: Digest) -> None:
    assert {p.number for p in w16_digest.prs} == REFERENCE_39
    assert w16_digest.stats.pr_count == 39
    assert w16_digest.window.name == "2026-W16"
    assert w16_digest.window.start.isoformat() == "2026-04-13T00:00:00+08:00"
    assert w16_digest.window.end.isoformat() == "2026-04-20T00:00:00+08:00"
    assert [p.merged_at for p in w16_digest.prs] == sorted(p.merged_at for p in w16_digest.prs)


def test_stats_are_computed_from_the_analyses(w16_digest: Digest) -> None:
    analyses = [p.analysis for p in w16_digest.prs]
    assert all(isinstance(a, Analysis) for a in analyses)
    done = [a for a in analyses if a is not None]
    s = w16_digest.stats
    assert s.key_pr_count == sum(a.importance >= 6 for a in done) == len(w16_digest.key_prs)
    assert s.avg_importance == round(sum(a.importance for a in done) / 39, 2)
    assert s.avg_insight == round(sum(a.insight for a in done) / 39, 2)
    assert s.additions == sum(p.additions for p in w16_digest.prs)
    assert s.pending_count == 0
    assert w16_digest.pending == ()
    importances = [w16_digest.pr(n).analysis.importance for n in w16_digest.key_prs]  # type: ignore[union-attr]
    assert importances == sorted(importances, reverse=True)


def test_numbers_in_the_text_are_the_computed_ones(w16_digest: Digest) -> None:
    s = w16_digest.stats
    assert f"合并 {s.pr_count} 个 PR" in w16_digest.headline
    assert f"重点 PR {s.key_pr_count} 个" in w16_digest.headline
    assert f"平均重要性 {s.avg_importance:.2f}" in w16_digest.executive_summary
    for trend in w16_digest.trends:
        assert trend.count == len(trend.pr_numbers)
        assert trend.count == sum(trend.label in p.labels for p in w16_digest.prs)
    for rollup in w16_digest.risk_rollup:
        carriers = {
            p.number for p in w16_digest.prs if p.analysis and rollup.kind in {r.kind for r in p.analysis.risks}
        }
        assert set(rollup.pr_numbers) == carriers
        assert rollup.count == len(carriers)


def test_highlights_name_prs_and_what_they_change(w16_digest: Digest) -> None:
    text = "\n".join(w16_digest.highlights)
    assert "#5951" in text
    assert "flowgrpo trainer" in text
    # PRs that change the same file are pointed out together
    assert any("main_ppo_sync.py" in h for h in w16_digest.highlights)
    assert w16_digest.key_changes
    assert all(k.startswith("#") for k in w16_digest.key_changes)
    assert any("#6046" in s or "#6029" in s for s in w16_digest.suggestions) or any(
        6046 in r.pr_numbers for r in w16_digest.risk_rollup)


def test_label_view_covers_every_pr(w16_digest: Digest) -> None:
    seen = {n for group in w16_digest.label_view for n in group.pr_numbers}
    assert seen == REFERENCE_39
    fully_async = next(g for g in w16_digest.label_view if g.label == "fully_async")
    assert {6046, 6029} <= set(fully_async.pr_numbers)


def test_json_round_trip_and_public_names(w16_digest: Digest) -> None:
    text = w16_digest.model_dump_json()
    assert Digest.model_validate_json(text) == w16_digest
    data = json.loads(text)
    assert {"repo", "window", "stats", "prs", "key_prs", "trends", "risk_rollup", "label_view", "pending"} <= set(data)
    assert set(data["window"]) >= {"start", "end", "timezone", "name"}
    assert set(data["stats"]) >= {"pr_count", "key_pr_count", "avg_importance", "avg_insight"}
    pr = data["prs"][0]
    assert set(pr) >= {"number", "title", "url", "labels", "merged_at", "analysis"}
    assert set(pr["analysis"]) >= {"summary", "change_type", "importance", "insight", "risks", "recommendation",
                                   "key_points", "coverage", "status"}
    assert set(pr["analysis"]["recommendation"]) == {"level", "minutes", "reason", "focus"}
    assert pr["url"] == f"https://github.com/{REPO}/pull/{pr['number']}"


def test_english_digest(real_source: SnapshotSource, verl_settings: Settings) -> None:
    window = week_window(2026, 16, "Asia/Shanghai")
    d = build_digest(real_source.merged_prs(REPO, window), repo=REPO, window=window, settings=verl_settings,
                     language="en", now=FIXED_NOW)
    assert d.language == "en"
    assert d.headline.startswith("39 PRs merged this week")
    assert all(r.title.isascii() for r in d.risk_rollup)


def test_empty_window_is_a_short_digest(real_source: SnapshotSource, verl_settings: Settings) -> None:
    window = week_window(2024, 2, "Asia/Shanghai")  # before verl's first PR
    d = build_digest(real_source.merged_prs(REPO, window), repo=REPO, window=window, settings=verl_settings,
                     now=FIXED_NOW)
    assert d.stats.pr_count == 0
    assert d.prs == ()
    assert d.key_prs == ()
    assert d.stats.avg_importance is None
    assert "没有合并" in d.headline


def test_prs_outside_the_window_or_repo_are_ignored(real_source: SnapshotSource, verl_settings: Settings) -> None:
    window = week_window(2026, 16, "Asia/Shanghai")
    inside = real_source.merged_prs(REPO, window)
    stranger = inside[0].model_copy(update={"repo": "someone/else", "number": 99999})
    late = inside[0].model_copy(update={"number": 99998, "merged_at": window.end})
    d = build_digest([*inside, stranger, late], repo=REPO, window=window, settings=verl_settings, now=FIXED_NOW)
    assert d.stats.pr_count == 39


def test_a_pr_given_twice_is_listed_and_counted_once(real_source: SnapshotSource, verl_settings: Settings) -> None:
    window = week_window(2026, 16, "Asia/Shanghai")
    inside = real_source.merged_prs(REPO, window)
    again = inside[0].model_copy(update={"title": "docs: a later record of the same PR",
                                         "merged_at": inside[0].merged_at.replace(second=59)})
    d = build_digest([*inside, again], repo=REPO, window=window, settings=verl_settings, now=FIXED_NOW)
    assert d.stats.pr_count == 39
    assert [p.number for p in d.prs].count(inside[0].number) == 1
    assert d.pr(inside[0].number).title == again.title  # type: ignore[union-attr]  # the record merged last
    assert all(t.count == len(set(t.pr_numbers)) for t in d.trends)


def test_pending_prs_are_listed_not_dropped(real_source: SnapshotSource, verl_settings: Settings) -> None:
    from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer

    class HalfReady:
        name = "half-ready"

        def analyze(self, pr: PullRequest, context: AnalysisContext) -> Analysis | None:
            return None if pr.number in (6046, 6029) else HeuristicAnalyzer().analyze(pr, context)

    window = week_window(2026, 16, "Asia/Shanghai")
    d = build_digest(real_source.merged_prs(REPO, window), repo=REPO, window=window, settings=verl_settings,
                     analyzer=HalfReady(), now=FIXED_NOW)
    assert set(d.pending) == {6046, 6029}
    assert d.stats.pr_count == 39
    assert d.stats.pending_count == 2
    assert d.pr(6046).analysis is None
    assert 6046 not in d.key_prs
    assert any("尚未生成" in s and "#6046" in s for s in d.suggestions)


def test_progress_is_reported(real_source: SnapshotSource, verl_settings: Settings) -> None:
    window = week_window(2026, 16, "Asia/Shanghai")
    calls: list[tuple[int, int]] = []
    build_digest(real_source.merged_prs(REPO, window), repo=REPO, window=window, settings=verl_settings,
                 progress=lambda done, total: calls.append((done, total)), now=datetime(2026, 4, 20, tzinfo=UTC))
    assert calls[0] == (1, 39)
    assert calls[-1] == (39, 39)
