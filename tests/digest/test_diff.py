"""Reading the diff without a model (bot/digest/diff.py) and what the heuristic makes of it: prose-only and
mechanical changes, removed names and changed defaults, dependency kinds, core files from the history (a
series or stack once) and reverts linked by their subject or by an inverse diff — on small made-up patches and
on real PRs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from conftest import REPO, ROOT

from bot.config import Settings
from bot.digest.aggregate import revert_pairs
from bot.digest.diff import read_dependencies, read_diff
from bot.digest.files import FileKind, classify, is_reading
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer, core_files, diffs, subjects
from bot.digest.history import series_key, series_keys, stack_of
from bot.digest.service import build_digest
from bot.digest.window import week_window
from bot.models import Analysis, FileChange, PullRequest
from bot.sources.jsonl import SnapshotSource

T0 = datetime(2026, 4, 14, 3, tzinfo=UTC)


def _pr(number: int, title: str, *files: tuple[str, str], body: str = "", author: str = "dev",
        at: datetime = T0) -> PullRequest:
    changes = []
    for path, patch in files:
        plus = sum(1 for x in patch.splitlines() if x.startswith("+"))
        minus = sum(1 for x in patch.splitlines() if x.startswith("-"))
        changes.append(FileChange(path=path, status="modified", additions=plus, deletions=minus, patch=patch))
    return PullRequest(repo="acme/widget", number=number, title=title, body=body, author=author, merged_at=at,
                       additions=sum(f.additions or 0 for f in changes),
                       deletions=sum(f.deletions or 0 for f in changes), files=tuple(changes))


def _kinds(pr: PullRequest) -> dict[str, FileKind]:
    return {f.path: classify(f.path) for f in pr.files}


def _analyze(pr: PullRequest, settings: Settings, **context: object) -> Analysis:
    return HeuristicAnalyzer().analyze(pr, AnalysisContext(repo=settings.repo(pr.repo), language="en",
                                                           **context))  # type: ignore[arg-type]


def test_a_docstring_and_comment_only_change_is_docs_and_minor(default_settings: Settings) -> None:
    patch = ('@@ -1,6 +1,6 @@\n def run(x):\n-    """Run it."""\n+    """Run it once, then stop."""\n'
             "-    # old note\n+    # a clearer note\n     return x\n")
    pr = _pr(1, "feat: clarify run", ("widget/core.py", patch))
    facts = read_diff(pr, _kinds(pr))
    assert (facts.patched, facts.code_lines, facts.prose_lines, facts.prose_only) == (True, 0, 4, True)
    a = _analyze(pr, default_settings)
    assert a.change_type == "doc"
    assert a.importance <= 2
    assert a.recommendation.level == "skip"


def test_a_repeated_rename_is_mechanical_and_skipped(default_settings: Settings) -> None:
    hunk = "@@ -1,2 +1,2 @@\n-from widget.old_name import OldName\n+from widget.new_name import NewName\n"
    body = ("@@ -10,3 +10,3 @@\n-    x = OldName()\n+    x = NewName()\n"
            "-    y = OldName.build(x)\n+    y = NewName.build(x)\n")
    files = [(f"widget/m{i}.py", hunk + body) for i in range(4)]
    pr = _pr(2, "Rename OldName to NewName", *files)
    facts = read_diff(pr, _kinds(pr))
    assert facts.mechanical_share == 1.0
    assert facts.removed_names == ()  # the new name is on the added lines: nothing is lost
    a = _analyze(pr, default_settings)
    assert a.importance <= 3
    assert a.recommendation.level == "skip"


def test_removed_public_names_and_changed_defaults_are_the_contract(default_settings: Settings) -> None:
    patch = ("@@ -1,9 +1,7 @@\n class TrainerConfig:\n-    lr: float = 1e-3\n+    lr: float = 3e-4\n"
             "-    warmup_steps: int = 0\n     epochs: int = 1\n"
             "-def legacy_entry(cfg):\n-    return cfg\n+def _private_helper(cfg):\n+    return cfg\n"
             '-    parser.add_argument("--old-flag", default=1)\n')
    pr = _pr(3, "refactor: tidy the trainer config", ("widget/trainer_config.py", patch))
    facts = read_diff(pr, _kinds(pr))
    assert set(facts.removed_names) == {("widget/trainer_config.py", n)
                                        for n in ("warmup_steps", "legacy_entry", "--old-flag")}
    assert facts.changed_defaults == (("widget/trainer_config.py", "lr"),)
    a = _analyze(pr, default_settings)
    contract = next(r for r in a.risks if r.kind == "config_contract_change")
    assert "widget/trainer_config.py: warmup_steps" in contract.evidence
    assert "widget/trainer_config.py: lr" in contract.evidence


def test_a_changed_signature_of_a_public_function_is_the_contract(default_settings: Settings) -> None:
    """A new parameter without a default (every caller must pass it), a parameter gone and a default changed
    on a one-line ``def`` are contract changes, with the function and the parameter as evidence; a parameter
    added with a default, a private function and ``self`` are not."""
    patch = ("@@ -10,6 +10,6 @@\n"
             '-def remote_rm_fn(api_url, queries, score_key="rewards"):\n'
             '+def remote_rm_fn(api_url, queries, prompts, score_key="rewards"):\n'
             "     return call(api_url)\n"
             "-    def generate(self, prompts, max_tokens=16, stream=False):\n"
             "+    def generate(self, prompts, max_tokens=32, timeout=None):\n"
             "-def _helper(a):\n+def _helper(a, b):\n"
             "-def load(path):\n+def load(path, strict=True):\n")
    pr = _pr(9, "feat: custom reward functions", ("widget/remote_rm.py", patch))
    facts = read_diff(pr, _kinds(pr))
    assert facts.required_parameters == (("widget/remote_rm.py", "remote_rm_fn(+prompts)"),)
    assert facts.removed_names == (("widget/remote_rm.py", "generate(stream)"),)
    assert facts.changed_defaults == (("widget/remote_rm.py", "generate(max_tokens)"),)
    contract = next(r for r in _analyze(pr, default_settings).risks if r.kind == "config_contract_change")
    assert "widget/remote_rm.py: remote_rm_fn(+prompts)" in contract.evidence
    assert "required parameters added" in contract.detail
    # the same function with only a parameter that has a default added is no contract change
    kept = _pr(10, "feat: strict loading",
               ("widget/io.py", "@@ -1 +1 @@\n-def load(path):\n+def load(path, strict=True):\n"))
    assert read_diff(kept, _kinds(kept)).contract == ()


def test_a_widened_annotation_is_no_contract_change(default_settings: Settings) -> None:
    patch = "@@ -1,3 +1,3 @@\n class RunConfig:\n-    seed: int = 0\n+    seed: int | None = 0\n     name: str = 'x'\n"
    pr = _pr(4, "fix: allow no seed", ("widget/run_config.py", patch))
    assert read_diff(pr, _kinds(pr)).contract == ()
    assert "config_contract_change" not in {r.kind for r in _analyze(pr, default_settings).risks}


@pytest.mark.parametrize(("path", "title", "patch", "kind"), [
    ("requirements.txt", "bump torch", "@@ -1 +1 @@\n-torch==2.5.0\n+torch==2.6.0\n", "dependency_upgrade"),
    ("pyproject.toml", "allow newer numpy", '@@ -3 +3 @@\n-  "numpy>=1.24,<2",\n+  "numpy>=1.24",\n',
     "dependency_range"),
    ("requirements.txt", "pin datasets for now", "@@ -1 +1 @@\n-datasets>=3.6\n+datasets>=3.6,<4.8\n",
     "dependency_pin"),
    (".github/workflows/ci.yml", "ci: checkout v5", "@@ -4 +4 @@\n-      - uses: actions/checkout@v4\n"
                                                      "+      - uses: actions/checkout@v5\n", "ci_action_bump"),
    ("pyproject.toml", "release 0.3.1", '@@ -2 +2 @@\n-version = "0.3.0"\n+version = "0.3.1"\n', "version_bump"),
    ("pyproject.toml", "Drop Python 3.10 support", '@@ -4 +4 @@\n-requires-python = ">=3.10"\n'
                                                    '+requires-python = ">=3.11"\n', "dependency_range"),
    ("setup.py", "require python 3.9", "@@ -7 +7 @@\n-    python_requires='>=3.8',\n"
                                       "+    python_requires='>=3.9',\n", "dependency_range"),
])
def test_dependency_changes_are_told_apart(path: str, title: str, patch: str, kind: str,
                                           default_settings: Settings) -> None:
    pr = _pr(5, title, (path, patch))
    assert [c.kind for c in read_dependencies(pr, _kinds(pr))] == [kind]
    risks = [r for r in _analyze(pr, default_settings).risks if r.kind.startswith(("dependency", "ci_", "version"))]
    assert [r.kind for r in risks] == [kind]
    assert risks[0].evidence[0].startswith(path)


def test_a_manifest_edit_that_touches_no_dependency_is_no_risk(default_settings: Settings) -> None:
    pr = _pr(6, "chore: ruff settings", ("pyproject.toml", "@@ -9 +9 @@\n-line-length = 100\n+line-length = 120\n"))
    assert read_dependencies(pr, _kinds(pr)) == ()
    assert not any(r.kind.startswith("dependency") for r in _analyze(pr, default_settings).risks)


def test_code_that_branches_on_a_dependency_version_is_a_range_change() -> None:
    patch = ('@@ -1,2 +1,3 @@\n import lib\n+NEW_LIB = version.parse(lib.__version__) >= version.parse("2.1")\n'
             " x = 1\n")
    pr = _pr(7, "fix: use the new kernel when available", ("widget/kernels.py", patch))
    assert [(c.kind, c.name) for c in read_dependencies(pr, _kinds(pr))] == [("dependency_range", "version check")]


def test_core_files_come_from_history_and_a_series_counts_once(default_settings: Settings) -> None:
    config = default_settings.repo("acme/widget")
    hunk = "@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    series = [_pr(10 + k, f"Refactor CLI [{k}/N]", ("widget/cli.py", hunk), author="ann") for k in range(1, 6)]
    assert len({series_key(p) for p in series}) == 1
    assert core_files(series, config) == frozenset()  # five parts of one series are one touch
    others = [_pr(20 + k, f"fix: thing {k}", ("widget/engine.py", hunk), author=f"dev{k}") for k in range(3)]
    assert core_files(series + others, config) == frozenset({"widget/engine.py"})
    a = _analyze(_pr(30, "fix: engine", ("widget/engine.py", hunk)), default_settings,
                 hot_files=core_files(others, config))
    assert "core_path_change" in {r.kind for r in a.risks}


def test_one_authors_stack_counts_once_for_core_files(default_settings: Settings) -> None:
    """ghstack and Sapling list the stack in each PR's description; PRs whose lists overlap are one series
    (titles that share nothing), so three parts of one stack do not make the file they all touch core."""
    config = default_settings.repo("acme/widget")
    hunk = "@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    ghstack = "Stack from [ghstack](https://github.com/ezyang/ghstack) (oldest at bottom):\n"
    sapling = "Stack created with [Sapling](https://sapling-scm.com). Best reviewed with ReviewStack.\n"
    stack = [
        _pr(41, "Add the planner", ("widget/plan.py", hunk), author="bo", body=ghstack + "* #42\n* __->__ #41\n"),
        _pr(42, "Use the planner in the trainer", ("widget/plan.py", hunk), author="bo",
            body=ghstack + "* __->__ #42\n* #41\n"),
        _pr(44, "Tidy the planner's names", ("widget/plan.py", hunk), author="bo",  # the base landed: #42, #44 left
            body=sapling + "* __->__ #44\n* #42\n"),
    ]
    keys = series_keys(stack)
    assert len(set(keys.values())) == 1
    assert stack_of(stack[2]) == frozenset({42, 44})
    assert core_files(stack, config) == frozenset()
    # the same stack list under another author's name is not that author's stack; a body without a stack tool
    # that lists PRs is no stack
    other = _pr(43, "Plan faster", ("widget/plan.py", hunk), author="cy", body=ghstack + "* __->__ #43\n* #41\n")
    listed = _pr(45, "Planner notes", ("widget/plan.py", hunk), author="dee", body="Follow-ups:\n* #41\n* #42\n")
    assert stack_of(listed) == frozenset()
    assert len(set(series_keys([*stack, other, listed]).values())) == 3
    assert core_files([*stack, other, listed], config) == frozenset({"widget/plan.py"})


def test_a_stack_tool_line_is_found_whatever_its_case() -> None:
    # the pattern ignores case, so ſ (long s), ı and İ count as s and i; the quick test before it must not miss them
    hunk = "@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    for line in ("Stack from [ghſtack]", "STACK FROM [GHSTACK]", "Stack created with [Saplİng]",
                 "stack created with [saplıng]"):
        pr = _pr(13, "Plan", ("widget/plan.py", hunk), body=f"{line}\n* #12\n* __->__ #13\n")
        assert stack_of(pr) == frozenset({12, 13}), line


def test_a_revert_is_linked_to_the_pr_whose_title_it_quotes(default_settings: Settings) -> None:
    hunk = "@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    original = _pr(40, "[vllm] feat: remove workers", ("widget/server.py", hunk), at=T0)
    revert = _pr(41, 'Revert "[vllm] feat: remove workers"', ("widget/server.py", hunk), at=T0 + timedelta(hours=3))
    a = _analyze(revert, default_settings, subjects=subjects([original, revert]))
    assert a.change_type == "revert"
    assert a.reverts == 40
    assert next(r for r in a.risks if r.kind == "revert").evidence == ("#40",)
    assert a.importance <= 3


def test_a_pr_that_undoes_another_line_for_line_is_linked_as_its_revert(default_settings: Settings) -> None:
    """No "Revert" in its title: its diff is the earlier PR's inverted. It is linked (the revert risk names the
    PR, the digest tells the two together) but keeps its own type and score; the earlier PR reverts nothing,
    and one that undoes only part of it is not linked."""
    original = _pr(50, "feat: faster loader", ("widget/loader.py", "@@ -3,2 +3,3 @@\n x = 1\n-y = load(a)\n"
                                                                   "+y = load(a, fast=True)\n+z = 2\n"))
    undo = _pr(51, "fix: loader hangs on NFS", ("widget/loader.py", "@@ -3,3 +3,2 @@\n x = 1\n"
                                                                    "-y = load(a, fast=True)\n-z = 2\n+y = load(a)\n"),
               at=T0 + timedelta(hours=5))
    partial = _pr(52, "fix: no z", ("widget/loader.py", "@@ -4,2 +4,1 @@\n y = load(a, fast=True)\n-z = 2\n"),
                  at=T0 + timedelta(hours=6))
    known = diffs([original, undo, partial])
    a = _analyze(undo, default_settings, diffs=known)
    assert a.reverts == 50
    assert a.change_type == "fix"
    assert next(r for r in a.risks if r.kind == "revert").evidence == ("#50",)
    assert a.importance == _analyze(undo, default_settings).importance
    assert _analyze(original, default_settings, diffs=known).reverts is None
    assert _analyze(partial, default_settings, diffs=known).reverts is None
    digest = build_digest([original, undo], repo="acme/widget", window=week_window(2026, 16, "UTC"),
                          settings=default_settings, language="en", now=T0 + timedelta(days=7))
    assert [(r.number, target.number) for r, target in revert_pairs(digest.prs)] == [(51, 50)]


def test_a_real_follow_up_that_takes_a_line_back_out_is_linked(default_settings: Settings) -> None:
    """torchtitan #4242 "[ci] Fix test_validate.py again" removes the line #4238 added two hours before."""
    source = SnapshotSource(ROOT / "tests" / "data" / "torchtitan.jsonl.gz")
    first, again = (source.pull_request("pytorch/torchtitan", n) for n in (4238, 4242))
    a = _analyze(again, default_settings, diffs=diffs([first, again]))
    assert a.reverts == 4238


def test_generated_lock_notebook_and_vendored_files_are_not_reading() -> None:
    for path in ("uv.lock", "docs/tour.ipynb", "third_party/lib/a.py", "tests/__snapshots__/x.snap"):
        assert not is_reading(path, classify(path)), path
    assert is_reading("widget/core.py", FileKind.SOURCE)


def test_verl_w16_without_config_reads_its_diffs(default_settings: Settings) -> None:
    """The example week, unconfigured: the project rename is a mechanical sweep (little to read, still key
    for users), the flowgrpo trainer and the OPD removal are key, the docs moves are skipped."""
    window = week_window(2026, 16, "Asia/Shanghai")
    source = SnapshotSource(ROOT / "examples" / "verl-2026-W12-W16.jsonl.gz")
    from bot.digest.history import read_earlier

    digest = build_digest(source.merged_prs(REPO, window), repo=REPO, window=window, settings=default_settings,
                          history=read_earlier(source, REPO, window).history)
    rename = digest.pr(6053).analysis
    assert rename is not None
    assert rename.recommendation.level == "skim"
    assert 6053 in digest.key_prs
    assert {5951, 6039} <= set(digest.key_prs)
    for docs in (5994, 6004):
        analysis = digest.pr(docs).analysis
        assert analysis is not None
        assert analysis.recommendation.level == "skip"


def test_dropping_a_python_version_names_it() -> None:
    pr = _pr(8, "Drop Python 3.10 support", ("pyproject.toml", '@@ -4 +4 @@\n-requires-python = ">=3.10"\n'
                                                                '+requires-python = ">=3.11"\n'))
    (change,) = read_dependencies(pr, _kinds(pr))
    assert (change.name, change.before, change.after) == ("python", ">=3.10", ">=3.11")
    assert change.evidence == "pyproject.toml: python >=3.10 -> >=3.11"


def test_a_mutable_default_made_none_is_no_changed_default() -> None:
    """``convert_dict={}`` → ``convert_dict=None`` then ``or {}`` in the body (the mutable-default idiom): what
    takes effect is the same, so the digest says no "changed the default"; a real change still counts."""
    patch = ("@@ -1,4 +1,5 @@\n-def find_match(doc, convert_dict={}, limit=5):\n"
             "+def find_match(doc, convert_dict=None, limit=10):\n+    convert_dict = convert_dict or {}\n"
             "     return doc\n")
    pr = _pr(1, "fix: no shared mutable default", ("widget/match.py", patch))
    assert read_diff(pr, _kinds(pr)).changed_defaults == (("widget/match.py", "find_match(limit)"),)


def test_a_fix_with_a_large_regression_test_sits_in_its_source_and_names_its_one_new_file(
        default_settings: Settings) -> None:
    """Where the change sits is read among the files that are not tests; one added file is named, not "1 files"."""
    source = "@@ -1,2 +1,3 @@\n def run(x):\n-    return x\n+    return x + 1\n"
    added = "@@ -0,0 +1,2 @@\n+def helper(y):\n+    return y\n"
    test = "@@ -0,0 +1,40 @@\n" + "".join(f"+def test_{i}():\n+    assert run({i}) == {i + 1}\n" for i in range(20))
    pr = _pr(1, "fix: off by one in run", ("widget/core/run.py", source), ("tests/unit/test_run.py", test))
    pr = pr.model_copy(update={"files": (*pr.files, FileChange(path="widget/core/helper.py", status="added",
                                                               additions=2, deletions=0, patch=added))})
    points = _analyze(pr, default_settings).key_points
    assert "widget/core" in points[0]
    assert "tests/unit" not in points[0]
    assert "new source file helper.py" in points
