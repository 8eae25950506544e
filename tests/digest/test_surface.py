"""Data is not code and surface is not meaning (bot/digest/files.py, surface.py, dependencies.py, diff.py): data
files, re-indented lines, annotation-only lines, docstring hunks, moved version checks and own versions — on small
made-up patches and on real PRs of the repositories in tests/data."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache

import pytest
from conftest import ROOT

from bot.config import Settings
from bot.digest.aggregate import is_release
from bot.digest.dependencies import follows_release, is_dev_version, read_dependencies
from bot.digest.diff import read_diff
from bot.digest.diffscan import changed_lines
from bot.digest.files import FileKind, classify, is_reading
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer
from bot.digest.surface import annotation_free
from bot.digest.window import week_window
from bot.models import Analysis, FileChange, PullRequest
from bot.sources.jsonl import SnapshotSource

DATA = ROOT / "tests" / "data"
T0 = datetime(2026, 4, 14, 3, tzinfo=UTC)


def _pr(title: str, *files: tuple[str, str], number: int = 1) -> PullRequest:
    changes = []
    for path, patch in files:
        plus = sum(1 for x in patch.splitlines() if x.startswith("+"))
        minus = sum(1 for x in patch.splitlines() if x.startswith("-"))
        changes.append(FileChange(path=path, status="modified", additions=plus, deletions=minus, patch=patch))
    return PullRequest(repo="acme/widget", number=number, title=title, merged_at=T0, files=tuple(changes),
                       additions=sum(f.additions or 0 for f in changes),
                       deletions=sum(f.deletions or 0 for f in changes))


def _kinds(pr: PullRequest) -> dict[str, FileKind]:
    return {f.path: classify(f.path) for f in pr.files}


def _analyze(pr: PullRequest, settings: Settings) -> Analysis:
    return HeuristicAnalyzer().analyze(pr, AnalysisContext(repo=settings.repo(pr.repo), language="en"))


@cache
def _week(snapshot: str, repo: str, year: int, week: int) -> dict[int, PullRequest]:
    source = SnapshotSource(DATA / snapshot)
    return {p.number: p for p in source.merged_prs(repo, week_window(year, week, "UTC"))}


@pytest.mark.parametrize(("path", "kind", "reading"), [
    ("lm_eval/tasks/gpqa/cot_n_shot/_gpqa_cot_n_shot_yaml", FileKind.DATA, True),  # a task definition: read
    ("lm_eval/tasks/truthfulqa/truthfulqa_gen.yaml", FileKind.DATA, True),
    ("examples/llama-3/qlora-1b.yml", FileKind.DATA, True),  # an example config users copy
    ("recipe/dapo/config/dapo_trainer.yaml", FileKind.DATA, True),
    ("method_comparison/MetaMathQA/results/lora--llama-3.2-3B-rank32.json", FileKind.DATA, False),  # a result
    ("benchmarks/results/a.txt", FileKind.DATA, False),
    ("examples/colab-notebooks/colab-axolotl-example.ipynb", FileKind.DATA, False),
    ("data/train.csv", FileKind.DATA, False),
    ("fixtures/response.json", FileKind.DATA, True),
    ("tests/fixtures/response.json", FileKind.TEST, True),  # inside the tests, the tests'
    ("verl/trainer/config/ppo_trainer.yaml", FileKind.CONFIG, True),  # the package's own config: a contract
    ("src/axolotl/utils/schemas/config.py", FileKind.SOURCE, True),  # the config schema: a contract
    ("examples/run_qwen.sh", FileKind.EXAMPLE, True),
    ("docs/results.md", FileKind.DOC, True),
])
def test_data_is_its_own_kind_and_results_are_not_reading(path: str, kind: FileKind, reading: bool) -> None:
    assert classify(path) is kind
    assert is_reading(path, kind) is reading


def test_task_definitions_and_example_configs_are_no_contract(default_settings: Settings) -> None:
    """lm-evaluation-harness #3723 points a task YAML at another dataset; #3465 changes stop sequences in
    task YAMLs: data, whose keys are no removed name, no changed default (they were a config contract)."""
    prs = _week("lm-evaluation-harness.jsonl.gz", "EleutherAI/lm-evaluation-harness", 2026, 18)
    pr = prs[3723]
    assert read_diff(pr, _kinds(pr)).contract == ()
    assert "config_contract_change" not in {r.kind for r in _analyze(pr, default_settings).risks}
    yaml = _pr("tweak an example", ("examples/llama/lora.yml",
                                    "@@ -3,2 +3,2 @@\n-learning_rate: 0.0002\n+learning_rate: 0.0001\n-lora_r: 8\n"))
    facts = read_diff(yaml, _kinds(yaml))
    assert (facts.contract, facts.code_lines, facts.all_code_lines) == ((), 0, 0)


def test_re_indented_lines_are_moves_not_a_sweep() -> None:
    """A block wrapped in a new ``with``: the ``with`` is code, the re-indented lines are not lines to read; short
    ones do not make it a sweep (a wrapped block changes behaviour)."""
    body = ["x = compute(a)", "y = x + 1", "return y", "z = 2", "w = z", "q = w"]
    patch = ("@@ -10,6 +10,7 @@ def run(a):\n" + "".join(f"-    {line}\n" for line in body)
             + "+    with torch.no_grad():\n" + "".join(f"+        {line}\n" for line in body))
    pr = _pr("fix: no grad in run", ("widget/run.py", patch))
    facts = read_diff(pr, _kinds(pr))
    assert (facts.code_lines, facts.reindented_lines, facts.moved_lines) == (13, 12, 12)
    assert facts.residual_lines == 1
    assert facts.mechanical_share < 0.7  # the six short lines are no move: the wrap stays a change to read
    assert facts.surface_lines == 12


@pytest.mark.parametrize(("before", "after", "same"), [
    ('    beta: str = "linear",', '    beta: Literal["linear", "exp"] = "linear",', True),
    ("    def step(self, t: int = 0):", "    def step(self, t: int = 0) -> None:", True),
    ("    def f(a: Optional[Dict[str, int]] = None, *args: Any) -> int:", "    def f(a=None, *args):", True),
    ("    self, n: int, device: Union[str, torch.device] = None,", "    self, n: int, device: str | None = None,",
     True),
    ('    sigmas: Optional[str] = "zero",  # "zero", "sigma_min"', '    sigmas: Literal["zero"] = "zero",', True),
    ("    lr: float = 1e-3", "    lr: float = 3e-4", False),  # a default changed: meaning
    ('    "mode": mode,', '    "mode": other,', False),  # a mapping entry
    ("    FOO: bar,", "    FOO: baz,", False),
    ("    x = foo(a, b)", "    x = foo(a, c)", False),
])
def test_annotation_free_drops_only_annotations(before: str, after: str, same: bool) -> None:
    assert (annotation_free(before) == annotation_free(after)) is same


def test_docstrings_and_type_hints_only_are_documentation(default_settings: Settings) -> None:
    """diffusers #12726 "Improve docstrings and type hints": hunks inside a class docstring (no quote in sight,
    backticks) and signatures whose annotations change; the judge: docs, importance 2, skip (was a fix, 5)."""
    pr = _week("diffusers.jsonl.gz", "huggingface/diffusers", 2025, 49)[12726]
    facts = read_diff(pr, _kinds(pr))
    assert facts.prose_only
    assert facts.surface_lines == facts.code_lines > 0
    a = _analyze(pr, default_settings)
    assert (a.change_type, a.recommendation.level) == ("doc", "skip")
    assert a.importance <= 2
    # the docstring hunk's lines are prose, the annotation lines code
    lines = changed_lines(pr.files[0].path, pr.files[0].patch or "")
    assert next(x for x in lines if "beta_schedule (" in x.text).code.strip() == ""
    assert next(x for x in lines if "beta_schedule: " in x.text).code.strip()


def test_a_docstring_hunk_without_backticks_stays_code_when_it_may_be_code() -> None:
    lines = changed_lines("widget/a.py", "@@ -40,2 +40,2 @@ class A:\n-    x = 1\n+    x = 2\n")
    assert [x.code.strip() for x in lines] == ["x = 1", "x = 2"]
    assert [(x.number, x.hunk, x.context) for x in lines] == [(40, 0, "class A:"), (40, 0, "class A:")]


@pytest.mark.parametrize(("path", "title", "patch", "kind", "after"), [
    ("VERSION", "tag for v0.15.0 release", "@@ -1 +1 @@\n-0.15.0.dev0\n+0.15.0\n", "version_bump", "0.15.0"),
    ("setup.py", "Bump version", '@@ -5 +5 @@\n-    version="0.19.1",\n+    version="0.19.2.dev0",\n',
     "dev_version_bump", "0.19.2.dev0"),
    ("version.txt", "Update version.txt after 0.19.4 release", "@@ -1 +1 @@\n-0.19.4\n+0.19.5\n",
     "dev_version_bump", "0.19.5"),
    ("version.txt", "Update version.txt pre-0.19.4 release", "@@ -1 +1 @@\n-0.19.3\n+0.19.4\n", "version_bump",
     "0.19.4"),
    ("src/widget/__init__.py", "set version to v0.13.1", '@@ -1 +1 @@\n-__version__ = "0.13.0"\n'
                                                         '+__version__ = "0.13.1"\n', "version_bump", "0.13.1"),
    ("pkg/version/version", "[release] v0.4.0rc1", "@@ -1 +1 @@\n-0.4.0.dev\n+0.4.0rc1\n", "version_bump",
     "0.4.0rc1"),
])
def test_the_own_version_is_a_release_or_a_development_version(path: str, title: str, patch: str, kind: str,
                                                               after: str, default_settings: Settings) -> None:
    pr = _pr(title, (path, patch))
    changes = read_dependencies(pr, _kinds(pr))
    assert [(c.kind, c.after) for c in changes] == [(kind, after)]  # and no "version check" of __version__
    risks = [r for r in _analyze(pr, default_settings).risks if r.kind.endswith("version_bump")]
    assert [r.kind for r in risks] == [kind]
    assert after in risks[0].evidence[0]
    assert ("development" in risks[0].detail) is (kind == "dev_version_bump")


def test_dev_versions_and_post_release_titles() -> None:
    assert [is_dev_version(v) for v in ("0.19.2.dev0", "1.0-dev", "2.1+local", "1.0rc1", "0.15.0", "3.0-SNAPSHOT")] \
        == [True, True, True, False, False, True]
    assert follows_release("Update version.txt after v0.17.2 release.")
    assert follows_release("[chore] post release v0.34.0")
    assert not follows_release("Update version.txt pre-0.19.4 release")
    assert not is_release("Bump version to 0.19.2.dev0")
    assert not is_release("Update version.txt after 0.19.4 release")
    assert is_release("tag for v0.15.0 release")


def test_a_moved_or_re_indented_version_check_is_no_new_range() -> None:
    check = "if version.parse(torch.__version__) >= version.parse(\"2.1\"):"
    moved = _pr("refactor: move the torch check", ("widget/a.py", f"@@ -3,2 +3 @@\n-{check}\n-    X = 1\n"),
                ("widget/b.py", f"@@ -8 +8,2 @@\n+{check}\n+    X = 1\n"))
    assert read_dependencies(moved, _kinds(moved)) == ()
    indented = _pr("wrap", ("widget/a.py", f"@@ -3 +3,2 @@\n-{check}\n+try:\n+    {check}\n"))
    assert read_dependencies(indented, _kinds(indented)) == ()
    new = _pr("use the new kernel", ("widget/a.py", f"@@ -3 +3,2 @@\n x = 1\n+{check}\n"))
    assert [c.name for c in read_dependencies(new, _kinds(new))] == ["version check"]


def test_a_real_re_indentation_is_no_dependency_range(default_settings: Settings) -> None:
    """lm-evaluation-harness #3503 re-indents vLLM's version-gated imports while fixing truncation: it was read as
    a "dependency range" change."""
    pr = _week("lm-evaluation-harness.jsonl.gz", "EleutherAI/lm-evaluation-harness", 2026, 4)[3503]
    assert "dependency_range" not in {c.kind for c in read_dependencies(pr, _kinds(pr))}
