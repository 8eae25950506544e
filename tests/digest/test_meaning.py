"""What changed lines mean (bot/digest/meaning.py) and the risks the heuristic makes of it: deprecations, removals
of deprecated code, raises where a fallback was, changed numerics and caches over live objects — each with its
file, line and name — on small made-up patches and on real PRs of the repositories in tests/data."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache

import pytest
from conftest import ROOT

from bot.config import Settings
from bot.digest.diff import read_diff
from bot.digest.files import FileKind, classify
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer
from bot.digest.meaning import Finding, Meaning, read_meaning
from bot.digest.window import week_window
from bot.models import Analysis, FileChange, Language, PullRequest
from bot.sources.jsonl import SnapshotSource

DATA = ROOT / "tests" / "data"
T0 = datetime(2026, 4, 14, 3, tzinfo=UTC)


def _pr(title: str, *files: tuple[str, str], status: str = "modified") -> PullRequest:
    changes = tuple(FileChange(path=path, status=status, additions=patch.count("\n+"), deletions=patch.count("\n-"),
                               patch=patch) for path, patch in files)
    return PullRequest(repo="acme/widget", number=1, title=title, merged_at=T0, files=changes,
                       additions=sum(f.additions or 0 for f in changes),
                       deletions=sum(f.deletions or 0 for f in changes))


def _meaning(pr: PullRequest) -> Meaning:
    return read_meaning(pr, {f.path: classify(f.path) for f in pr.files})


def _analyze(pr: PullRequest, settings: Settings, language: Language = "en") -> Analysis:
    return HeuristicAnalyzer().analyze(pr, AnalysisContext(repo=settings.repo(pr.repo), language=language))


@cache
def _real(snapshot: str, repo: str, year: int, week: int, number: int) -> PullRequest:
    source = SnapshotSource(DATA / snapshot)
    return next(p for p in source.merged_prs(repo, week_window(year, week, "UTC")) if p.number == number)


def _names(findings: tuple[Finding, ...]) -> list[str]:
    return [f.name for f in findings]


def test_deprecations_are_read_from_warnings_decorators_calls_and_docs() -> None:
    patch = ("@@ -10,3 +10,12 @@ class Trainer:\n"
             "     def fit(self, lr=None, learning_rate=None):\n"
             "+        if lr is not None:\n"
             "+            warnings.warn(\n"
             '+                "`lr` is deprecated, use `learning_rate`",\n'
             "+                FutureWarning,\n"
             "+            )\n"
             "+    @deprecated(\"use fit\")\n"
             "+    def train(self):\n"
             "+        return self.fit()\n"
             '+        deprecate("upcast_vae", "1.0.0", "upcast_vae is going away")\n'
             "+        # the deprecated path stays for one release\n")
    doc = "@@ -1 +1,2 @@\n # API\n+.. deprecated:: 0.9 `Trainer.train` is replaced by `Trainer.fit`.\n"
    test = '@@ -1 +1,2 @@\n x = 1\n+    warnings.warn("old is deprecated", DeprecationWarning)\n'
    pr = _pr("Deprecate lr", ("widget/trainer.py", patch), ("docs/api.rst", doc), ("tests/test_trainer.py", test))
    found = _meaning(pr).deprecations
    assert [(f.path, f.line, f.name) for f in found] == [
        ("widget/trainer.py", 12, "lr"), ("widget/trainer.py", 16, "train"), ("widget/trainer.py", 19, "upcast_vae"),
        ("docs/api.rst", 2, "Trainer.train")]  # a comment that mentions it and a test are no notice
    assert found[0].code == "warnings.warn("
    assert found[0].evidence == "widget/trainer.py:12 lr"


def test_real_deprecations_name_what_they_deprecate() -> None:
    """diffusers #12619 deprecates ``upcast_vae`` in a dozen pipelines; DeepSpeed #7881 deprecates an
    environment variable with a builder warning (and says so in its docs)."""
    sdxl = _real("diffusers.jsonl.gz", "huggingface/diffusers", 2025, 49, 12619)
    found = _meaning(sdxl).deprecations
    assert set(_names(found)) == {"upcast_vae"}
    assert len(found) == 8  # one per file, at most MAX_FINDINGS
    evo = _real("deepspeed.jsonl.gz", "deepspeedai/DeepSpeed", 2026, 11, 7881)
    assert "DS_EVOFORMER_GPU_ARCH" in _names(_meaning(evo).deprecations)


def test_removing_deprecated_code_is_a_removal_unless_it_moves() -> None:
    removed = ("@@ -20,6 +20,2 @@ def load(path, legacy=False):\n"
               "-    if legacy:\n"
               '-        warnings.warn("`legacy` is deprecated and will be removed in 2.0", DeprecationWarning)\n'
               "-        return _old(path)\n"
               "     return _new(path)\n")
    pr = _pr("Remove deprecated legacy loading", ("widget/io.py", removed))
    assert [(f.name, f.line) for f in _meaning(pr).deprecated_removals] == [("legacy", 21)]
    line = '    warnings.warn("`legacy` is deprecated and will be removed in 2.0", DeprecationWarning)'
    moved = _pr("Move loading", ("widget/io.py", f"@@ -20,2 +20 @@\n-{line}\n x = 1\n"),
                ("widget/load.py", f"@@ -3 +3,2 @@\n y = 2\n+{line}\n"))
    assert _meaning(moved).deprecated_removals == ()


def test_a_raise_where_a_fallback_was() -> None:
    """DeepSpeed #7890 raises RuntimeError where it called sys.exit; a made-up except path that warned now
    raises; a raise whose message is reworded is no new raise."""
    bloom = _real("deepspeed.jsonl.gz", "deepspeedai/DeepSpeed", 2026, 11, 7890)
    assert [(f.path, f.line, f.name) for f in _meaning(bloom).raises_instead] == [
        ("deepspeed/module_inject/containers/bloom.py", 29, "RuntimeError")]
    patch = ("@@ -5,6 +5,5 @@ def init_weights(model):\n"
             "     try:\n"
             "         model.load()\n"
             "     except KeyError:\n"
             '-        logger.warning("no weights, falling back to random init")\n'
             "-        return model.init_random()\n"
             '+        raise ValueError("weights missing")\n')
    assert _names(_meaning(_pr("fix", ("widget/init.py", patch))).raises_instead) == ["ValueError"]
    reworded = '@@ -5,2 +5,2 @@\n-    raise ValueError("bad")\n+    raise ValueError("bad value")\n     return x\n'
    assert _meaning(_pr("fix", ("widget/init.py", reworded))).raises_instead == ()


def test_changed_numerics_are_read_from_the_changed_tokens() -> None:
    patch = ("@@ -40,4 +40,4 @@ def compute_loss(logits, labels, mask):\n"
             "-    loss = (per_token * mask).sum() / mask.sum()\n"
             "+    loss = (per_token * mask).sum() / mask.numel()\n"
             '-    logger.info("loss %s", loss)\n'
             '+    logger.info("loss=%s", loss)\n'
             "-    eps = 1e-6\n"
             "+    eps = 1e-5\n")
    found = _meaning(_pr("fix: normalise by all tokens", ("widget/loss.py", patch))).numerics
    assert [(f.line, f.name) for f in found] == [(40, "loss"), (42, "eps")]  # the log line is no computation
    added = ("@@ -690,3 +690,4 @@ class Model:\n             scale=self.time_factor,\n"
             "+            downscale_freq_shift=0.0,\n             ).to(dtype)\n")
    assert _names(_meaning(_pr("fix", ("widget/model.py", added))).numerics) == ["downscale_freq_shift"]
    # a new file, a renamed logger, a plumbing name (a config, a mesh) and a class name are none
    new = _pr("add", ("widget/new_loss.py", "@@ -0,0 +1 @@\n+loss = x.sum() / n\n"), status="added")
    plumbing = ("@@ -1,3 +1,3 @@\n-norm_config = make(a)\n+norm_config = make(b)\n"
                "-mesh = loss_mesh(a)\n+mesh = loss_mesh(b)\n-vae = AutoencoderKL(a)\n+vae = AutoencoderKL(b)\n")
    assert _meaning(new).numerics == ()
    assert _meaning(_pr("refactor", ("widget/setup.py", plumbing))).numerics == ()


@pytest.mark.parametrize(("snapshot", "repo", "year", "week", "number", "name"), [
    ("diffusers.jsonl.gz", "huggingface/diffusers", 2025, 49, 12791, "downscale_freq_shift"),
    ("diffusers.jsonl.gz", "huggingface/diffusers", 2026, 14, 13364, "dtype"),  # the cast goes the other way
    ("axolotl.jsonl.gz", "axolotl-ai-cloud/axolotl", 2026, 10, 3444, "calculate_total_num_steps"),
    ("torchtitan.jsonl.gz", "pytorch/torchtitan", 2026, 34, 4167, "accumulated_losses"),
])
def test_real_numerics_changes(snapshot: str, repo: str, year: int, week: int, number: int, name: str) -> None:
    """Changes the judges read as changing results: a timestep embedding's frequency shift (#12791), a blur
    kernel's dtype (#13364), the step count that drives the LR schedule under context parallelism (#3444), the
    validation loss's averaging (#4167)."""
    pr = _real(snapshot, repo, year, week, number)
    assert name in _names(read_diff(pr, {f.path: classify(f.path) for f in pr.files}).numerics)


def test_a_rename_sweep_of_a_loss_variable_is_no_numerics_change() -> None:
    hunk = "@@ -3,2 +3,2 @@\n-    total_loss = step(batch)\n+    train_loss = step(batch)\n     x = 1\n"
    pr = _pr("rename total_loss", *[(f"widget/m{i}.py", hunk) for i in range(4)])
    facts = read_diff(pr, {f.path: FileKind.SOURCE for f in pr.files})
    assert facts.substituted_lines == 8
    assert facts.numerics == ()


def test_caches_over_live_objects() -> None:
    """diffusers #13317 keys a text K/V cache on ``encoder_hidden_states.data_ptr()``; made-up caches keyed on
    ``id(module)``, on a module, and an ``lru_cache`` on a method; a weakref-keyed cache and a local grouping by
    pointer are none."""
    kv = _real("diffusers.jsonl.gz", "huggingface/diffusers", 2026, 14, 13317)
    assert _names(_meaning(kv).object_caches) == ["state.key"]
    patch = ("@@ -1,2 +1,9 @@ class Hooks:\n"
             "+        self._outputs[id(module)] = out\n"
             "+        layer_cache[module] = weights\n"
             "+    @functools.lru_cache(maxsize=None)\n"
             "+    def plan(self, n):\n"
             "+        pointers[p.data_ptr()].append(name)\n")
    assert _names(_meaning(_pr("feat: cache", ("widget/hooks.py", patch))).object_caches) == [
        "self._outputs", "layer_cache", "plan"]
    weak = "@@ -1 +1,3 @@\n+import weakref\n+self._outputs[id(module)] = out\n x = 1\n"
    assert _meaning(_pr("feat: cache", ("widget/hooks.py", weak))).object_caches == ()


@pytest.mark.parametrize(("language", "titles"), [
    ("en", {"deprecation": "Deprecation", "behavior_change": "Raises where it fell back",
            "numerics_change": "Numerics change"}),
    ("zh", {"deprecation": "新增弃用", "behavior_change": "兜底处理改为报错", "numerics_change": "计算结果可能变化"}),
])
def test_meaning_becomes_risks_with_evidence(default_settings: Settings, language: Language,
                                             titles: dict[str, str]) -> None:
    patch = ("@@ -5,6 +5,6 @@ def init(model, lr=None):\n"
             "     if lr is not None:\n"
             '-        logger.warning("ignoring lr")\n'
             '-        return model\n'
             '+        warnings.warn("`lr` is deprecated", FutureWarning)\n'
             '+        raise ValueError("lr is gone")\n'
             "-    scale = 1.0\n"
             "+    scale = 0.5\n")
    a = _analyze(_pr("fix: stricter init", ("widget/init.py", patch)), default_settings, language)
    by_kind = {r.kind: r for r in a.risks}
    assert {k: by_kind[k].title for k in titles} == titles
    assert by_kind["deprecation"].evidence == ("widget/init.py:6 lr",)
    assert by_kind["behavior_change"].evidence == ("widget/init.py:7 ValueError",)
    assert by_kind["numerics_change"].evidence == ("widget/init.py:8 scale",)
    assert "lr" in by_kind["deprecation"].detail


def test_a_deprecated_key_is_named_by_the_line_below_its_comment() -> None:
    """verl #5986 marks config keys with ``# Deprecated and ignored.`` comments and ``# Deprecated: precision_debugger
    …``: the key below the comment, or the name after "Deprecated:", is what is deprecated."""
    pr = _real("verl-prs-with-patches.jsonl.gz", "verl-project/verl", 2026, 16, 5986)
    names = _names(_meaning(pr).deprecations)
    assert {"steps", "precision_debugger"} <= set(names)


@pytest.mark.parametrize(("title", "kind", "first"), [
    ("[misc] refactor: remove deprecated codes", "deprecated_removal", "[misc] refactor: remove deprecated codes"),
    ("Deprecate Flax support", "deprecation", "Deprecate Flax support"),
    ("[graph_trainer] Start deprecating jit and aot compile modes", "deprecation", None),
    ("fix: replace deprecated fractions.gcd with math.gcd", None, None),
    ("Resolve deprecation of `vllm.utils.get_open_port`", None, None),
])
def test_a_title_that_deprecates_or_removes_deprecated_code(default_settings: Settings, title: str,
                                                           kind: str | None, first: str | None) -> None:
    """Where no line says it, the title does: the title is the evidence, with what the diff removes."""
    pr = _pr(title, ("widget/buffer.py", "@@ -1,3 +0,0 @@\n-class MemoryBuffer:\n-    size: int = 0\n-    pass\n"))
    pr = pr.model_copy(update={"files": (pr.files[0].model_copy(update={"status": "removed"}),)})
    risks = {r.kind: r for r in _analyze(pr, default_settings).risks}
    got = {k for k in ("deprecation", "deprecated_removal") if k in risks}
    assert got == ({kind} if kind else set())
    if kind and first:
        assert risks[kind].evidence[0] == first
    if kind == "deprecated_removal":
        assert "widget/buffer.py" in risks[kind].evidence
