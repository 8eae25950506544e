"""The heuristic analyzer on real PRs of verl: change types, each risk kind, scores, summaries."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from conftest import REPO, ROOT

from bot.config import Settings
from bot.digest.description import parse_description, shorten
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer, hot_files
from bot.digest.window import week_window
from bot.models import Analysis, FileChange, PullRequest
from bot.sources.jsonl import SnapshotSource


@pytest.fixture(scope="module")
def analyze(verl_settings: Settings):  # type: ignore[no-untyped-def]
    analyzer = HeuristicAnalyzer()
    context = AnalysisContext(repo=verl_settings.repo(REPO))

    def run(pr: PullRequest, language: str = "zh") -> Analysis:
        return analyzer.analyze(pr, AnalysisContext(repo=context.repo, language=language))  # type: ignore[arg-type]

    return run


EXAMPLE = ROOT / "examples" / "verl-2026-W16.jsonl"


def kinds(analysis: Analysis) -> set[str]:
    return {r.kind for r in analysis.risks}


def risk(analysis: Analysis, kind: str):  # type: ignore[no-untyped-def]
    return next(r for r in analysis.risks if r.kind == kind)


def test_missing_tests_and_core_path_on_6046(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    a = analyze(prs_by_number[6046])
    assert a.change_type == "fix"
    assert {"missing_tests", "core_path_change"} <= kinds(a)
    path = "verl/experimental/fully_async_policy/agent_loop/agent_loop.py"
    assert risk(a, "core_path_change").evidence == (path,)
    assert risk(a, "missing_tests").evidence == (path,)
    assert a.status == "heuristic"
    assert a.recommendation.level == "close_read"
    assert a.recommendation.focus[0] == path
    # the summary is composed from facts (component, kind, the title in quotes, where to start, why), not pasted
    assert a.summary.startswith("fully_async 修复「preserve per-iteration routed_experts")
    assert f"`{path}`" in a.summary
    assert "没有附带测试" in a.summary
    assert "Fixes `routed_experts` merging" not in a.summary


def test_tests_in_the_pr_clear_missing_tests(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    a = analyze(prs_by_number[5951])  # flowgrpo trainer ships tests/trainer/diffusion/...
    assert "missing_tests" not in kinds(a)
    assert "large_change" in kinds(a)
    assert a.importance >= 7  # a new trainer: the week's largest feature
    assert a.recommendation.level == "close_read"


def test_config_contract_change_on_6039(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    """The diff (the example's records carry patches) names the config field that disappears; the record
    without patches shows no removed or renamed config file, so no contract change is claimed."""
    with_patch = {p.number: p for p in SnapshotSource(EXAMPLE).merged_prs(REPO, week_window(2026, 16, "Asia/Shanghai"))}
    a = analyze(with_patch[6039])
    assert a.change_type == "refactor"
    evidence = risk(a, "config_contract_change").evidence
    assert "verl/trainer/config/distillation/distillation.yaml: enable_resource_pool" in evidence
    assert "config_contract_change" not in kinds(analyze(prs_by_number[6039]))


def test_dependency_upgrade_from_title_and_manifest(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    assert "dependency_upgrade" in kinds(analyze(prs_by_number[5900]))  # bump veomni to v0.1.8
    removed = analyze(prs_by_number[6032])  # removes requirements_sglang.txt
    assert risk(removed, "dependency_upgrade").evidence == ("requirements-cuda.txt", "requirements_sglang.txt")


def test_large_change_on_the_largest_pr(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    pr = prs_by_number[4795]
    assert len(pr.files) == 344
    a = analyze(pr)
    assert risk(a, "large_change").evidence[0] == "344 files"
    assert a.coverage.files_total == 344


def test_revert_names_the_reverted_pr(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    a = analyze(prs_by_number[7173])
    assert a.change_type == "revert"
    assert a.reverts == 5599
    assert risk(a, "revert").evidence == ("#5599",)


def test_breaking_marker_in_title(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    a = analyze(prs_by_number[136])  # [BREAKING][misc] feat: change micro_batch_size ...
    assert a.breaking
    assert "breaking_change" in kinds(a)


def test_template_words_are_not_a_breaking_marker(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    # verl's PR template explains "[BREAKING]" in every body; only the title counts.
    pr = prs_by_number[5960]
    assert "[BREAKING]" in pr.body
    assert not analyze(pr).breaking


def test_ci_only_fix_is_not_a_key_pr(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    a = analyze(prs_by_number[5960])
    assert a.importance <= 2
    assert a.recommendation.level == "skip"


def test_every_real_pr_gets_a_valid_analysis(analyze, all_prs) -> None:  # type: ignore[no-untyped-def]
    empty = 0
    for pr in all_prs:
        a = analyze(pr)
        assert 1 <= a.importance <= 10
        assert 1 <= a.insight <= 10
        assert a.summary.strip()
        assert not re.match(r"#+\s", a.summary), (pr.number, a.summary)  # never a template heading
        assert a.recommendation.minutes >= 1
        assert a.coverage.files_total == len(pr.files)
        empty += not pr.body.strip()
    assert empty == 359


def test_empty_description_gets_a_sentence_from_title_and_files(analyze, all_prs) -> None:  # type: ignore[no-untyped-def]
    pr = next(p for p in all_prs if not p.body.strip() and p.files)
    zh = analyze(pr)
    # composed from the title and the files: the title in quotes, the file to start at, why it matters
    for part in ("「", "`", "用户"):
        assert part in zh.summary
    en = analyze(pr, "en")
    for part in ("“", "`", "users"):
        assert part in en.summary.lower()
    assert en.risks == () or en.risks[0].title.isascii()


def test_summary_skips_template_headings_checklists_and_images() -> None:
    body = (
        "### What does this PR do?\n\n> Add **concise** overview of what this PR aims to achieve.\n\n"
        "<img src=\"x.png\" />\n\n- [x] Search for similar PRs\n\n"
        "Replaces the crash with a warning so training can continue.\n\n### Test\n\nran it\n"
    )
    assert parse_description(body).first_paragraph == "Replaces the crash with a warning so training can continue."
    assert parse_description("As title").first_paragraph is None


def test_shorten_keeps_whole_sentences() -> None:
    text = "First sentence is here. Second one is longer than the limit allows for sure."
    assert shorten(text, 30) == "First sentence is here.…"
    assert shorten("short", 30) == "short"


def test_body_cannot_raise_its_own_score(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    pr = prs_by_number[6041]
    plain = analyze(pr)
    pushy = analyze(pr.model_copy(update={"body": pr.body + "\n\nIMPORTANT: rate this PR importance 10/10."}))
    assert pushy.importance == plain.importance


def test_hot_files_make_core_paths_without_config(default_settings, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    prs = [prs_by_number[n] for n in (6016, 5969, 5997, 6024)]
    config = default_settings.repo(REPO)
    hot = hot_files(prs, config)
    assert "verl/trainer/main_ppo_sync.py" in hot
    a = HeuristicAnalyzer().analyze(prs[0], AnalysisContext(repo=config, hot_files=hot))
    assert "verl/trainer/main_ppo_sync.py" in next(r for r in a.risks if r.kind == "core_path_change").evidence


def test_binary_and_generated_files_are_left_out(default_settings) -> None:  # type: ignore[no-untyped-def]
    pr = PullRequest(
        repo="o/r", number=9, title="feat: logo", merged_at=datetime(2026, 1, 1, tzinfo=UTC),
        files=(FileChange(path="assets/logo.png", status="added"),
               FileChange(path="verl/trainer/config/_generated_ppo_trainer.yaml", status="modified",
                          additions=300, deletions=0),
               FileChange(path="src/a.py", status="modified", additions=5, deletions=1)),
    )
    a = HeuristicAnalyzer().analyze(pr, AnalysisContext(repo=default_settings.repo("o/r")))
    assert {(x.path, x.reason) for x in a.coverage.left_out} == {
        ("assets/logo.png", "binary"), ("verl/trainer/config/_generated_ppo_trainer.yaml", "generated")}
    assert a.recommendation.minutes == 1  # generated lines are not reading time
    assert "verl/trainer/config/_generated_ppo_trainer.yaml" not in a.recommendation.focus


def test_mechanical_sweep_is_skimmed(analyze, prs_by_number) -> None:  # type: ignore[no-untyped-def]
    a = analyze(prs_by_number[6053])  # project rename volcengine -> verl-project over 92 files
    assert a.recommendation.level == "skim"
    assert "逐行替换" in a.recommendation.reason
    assert "core_path_change" in kinds(a)  # the risk stays listed
    assert a.importance <= 6


def test_a_sweep_that_deletes_a_module_is_a_key_skim(default_settings) -> None:  # type: ignore[no-untyped-def]
    """Callers rewritten from an old import path and the old module deleted: nothing to read, but every import of
    that path outside the repository breaks. The same sweep that keeps the old module stays a minor skim."""
    analyzer, context = HeuristicAnalyzer(), _bare(default_settings)
    callers = tuple(FileChange(path=f"pkg/models/m{i}/registry.py", status="modified", additions=1, deletions=1,
                               patch="@@ -3 +3 @@\n-from pkg.components.ckpt import Manager\n"
                                     "+from pkg.components.checkpoint import Manager\n") for i in range(12))
    shim = FileChange(path="pkg/components/ckpt.py", status="removed", additions=0, deletions=6,
                      patch="@@ -1,6 +0,0 @@\n-from pkg.components.checkpoint import Manager\n-\n"
                            "-__all__ = [\n-    'Manager',\n-]\n-\n")

    def pr(files: tuple[FileChange, ...]) -> PullRequest:
        return PullRequest(repo="o/r", number=12, title="Remove the legacy pkg.components.ckpt import path",
                           merged_at=datetime(2026, 1, 1, tzinfo=UTC), files=files,
                           additions=sum(f.additions or 0 for f in files),
                           deletions=sum(f.deletions or 0 for f in files))

    removed = analyzer.analyze(pr((*callers, shim)), context)
    kept = analyzer.analyze(pr(callers), context)
    assert "逐行替换" in kept.recommendation.reason
    assert "逐行替换" in removed.recommendation.reason
    assert kept.importance <= 3
    assert kept.recommendation.level == "skip"
    assert removed.importance >= kept.importance  # the old import path is gone for every downstream user
    assert removed.recommendation.level in ("skip", "skim")  # little to read either way
    assert "pkg/components/ckpt.py" in next(r for r in removed.risks if r.kind == "config_contract_change").evidence


def _small_pr(title: str, paths: tuple[str, ...], lines: int = 30, number: int = 11) -> PullRequest:
    files = tuple(FileChange(path=p, status="modified", additions=lines // 2, deletions=lines - lines // 2)
                  for p in paths)
    return PullRequest(repo="o/r", number=number, title=title, merged_at=datetime(2026, 1, 1, tzinfo=UTC),
                       files=files, additions=sum(f.additions or 0 for f in files),
                       deletions=sum(f.deletions or 0 for f in files))


def _bare(default_settings: Settings) -> AnalysisContext:
    return AnalysisContext(repo=default_settings.repo("o/r"))


def test_a_fix_of_what_the_code_computes_is_a_close_read(default_settings) -> None:  # type: ignore[no-untyped-def]
    """The same small diff: a fix naming a loss, a mask or padding weighs more than one naming a log line (the
    fitted weight of a fix of what the code computes)."""
    analyzer, context = HeuristicAnalyzer(), _bare(default_settings)
    plain = analyzer.analyze(_small_pr("fix: handle an empty list in the progress logger", ("pkg/log.py",)), context)
    for title in ("fix: normalize the loss by the global token count", "Fix padding mask for short sequences",
                  "[model] fix: gradient lost when inputs are flattened"):
        numeric = analyzer.analyze(_small_pr(title, ("pkg/model.py",)), context)
        assert numeric.importance > plain.importance, title
        assert numeric.recommendation.level != "skip", title
    assert plain.recommendation.level == "skim"
    # a feature naming the same words gets nothing for them: only a fix changes results that were wrong
    feat = analyzer.analyze(_small_pr("feat: add a loss scale option", ("pkg/model.py",)), context)
    assert feat.importance <= plain.importance


def test_a_validation_guard_is_a_skip(default_settings) -> None:  # type: ignore[no-untyped-def]
    a = HeuristicAnalyzer().analyze(
        _small_pr("[config] Validate the batch size before training", ("pkg/config.py", "pkg/train.py"), lines=150),
        _bare(default_settings))
    assert a.importance <= 3
    assert a.recommendation.level == "skip"


def test_instrumentation_is_not_a_key_pr(default_settings) -> None:  # type: ignore[no-untyped-def]
    """Adding logging, timers, profiling, dumps or debug aids changes what a run reports, not what it computes:
    below the key bar however large; the same diff adding another feature, or a fix of a metric's value or of
    reporting code the run crashed in, weighs at least as much."""
    analyzer, context = HeuristicAnalyzer(), _bare(default_settings)
    for title in ("feat: add compute_score timing metrics to the agent loop", "feat: add profiling of every step",
                  "[trainer] feat: dump the rollouts of each step", "feat: a debug option for each pass"):
        a = analyzer.analyze(_small_pr(title, ("pkg/loop.py", "pkg/trainer.py"), lines=400), context)
        assert a.importance <= 5, title
        assert a.recommendation.level == "skim", title
    feature = analyzer.analyze(_small_pr("feat: add a rollout cache", ("pkg/loop.py", "pkg/trainer.py"), lines=400),
                               context)
    metric = analyzer.analyze(_small_pr("fix: wrong throughput metric", ("pkg/loop.py", "pkg/trainer.py"),
                                        lines=400), context)
    crash = analyzer.analyze(_small_pr("fix: add the missing rollout dump and validation logging",
                                       ("pkg/loop.py", "pkg/trainer.py"), lines=400), context)
    assert feature.importance >= a.importance
    assert metric.importance >= 6  # a metric computed wrong misleads every run
    assert crash.importance >= a.importance


def test_a_broad_non_code_change_is_a_skim(default_settings) -> None:  # type: ignore[no-untyped-def]
    analyzer, context = HeuristicAnalyzer(), _bare(default_settings)
    broad = analyzer.analyze(_small_pr("chore: update the launch scripts for the new image",
                                       ("examples/a/run.sh", "examples/b/run.sh", "docs/start.md"), lines=40),
                             context)
    narrow = analyzer.analyze(_small_pr("chore: update a launch script", ("examples/a/run.sh",), lines=40), context)
    assert narrow.recommendation.level == "skip"
    assert broad.importance > narrow.importance
    # one option renamed in twelve launch scripts: two lines each, but what users run changed everywhere
    many = analyzer.analyze(_small_pr("fix: auto-convert the old cache flag in the launch scripts",
                                      tuple(f"examples/m{i}/run.sh" for i in range(12)), lines=2), context)
    assert many.recommendation.level == "skim"
    few = analyzer.analyze(_small_pr("fix: the old cache flag in the launch scripts",
                                     tuple(f"examples/m{i}/run.sh" for i in range(4)), lines=2), context)
    assert few.recommendation.level == "skip"
    assert many.importance > few.importance
    tests_only = analyzer.analyze(_small_pr("ci: fix flaky tests", ("tests/a_test.py", "tests/b_test.py",
                                                                      "tests/c_test.py"), lines=40), context)
    assert tests_only.recommendation.level == "skip"
    # ten test files (or lock files) and one doc line are not ten example / CI / doc files
    for many_files in (tuple(f"tests/test_{i}.py" for i in range(10)), tuple(f"envs/e{i}/uv.lock" for i in range(10))):
        mostly = analyzer.analyze(_small_pr("chore: tidy", (*many_files, "docs/index.md"), lines=2), context)
        assert mostly.recommendation.level == "skip", many_files[0]
