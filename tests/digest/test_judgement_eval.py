"""The judgement evaluation (bench/eval_judgement.py) on the judged weeks: its figures never drop below
the last recorded ones (tests/data/judged/recorded.json), and its arithmetic is right."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "data" / "judged" / "recorded.json"
HIGHER_IS_BETTER = ("verdict", "kappa", "importance_within_1", "key_precision", "key_recall")


def _judged_prs() -> int:
    """How many PRs the judged tables hold (the held-out folder not included)."""
    import tomllib

    return sum(len(tomllib.loads(p.read_text(encoding="utf-8")).get("pr", []))
               for p in (ROOT / "tests" / "data" / "judged").glob("*.toml"))


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_judgement", ROOT / "bench" / "eval_judgement.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _bench()


@pytest.fixture(scope="module")
def result(bench: ModuleType) -> dict[str, Any]:
    runs = bench.evaluate(ROOT, ROOT / "tests" / "data" / "judged", ROOT / "tests" / "data")
    return bench.summary(runs)["heuristic"]  # type: ignore[no-any-return]


def test_pooled_figures_do_not_drop_below_the_recorded_ones(result: dict[str, Any]) -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))["heuristic"]
    got, was = result["pooled"], recorded["pooled"]
    assert got["prs"] == was["prs"] == _judged_prs()
    for name in HIGHER_IS_BETTER:
        assert got[name] >= was[name] - 1e-9, f"pooled {name}: {got[name]:.3f} < recorded {was[name]:.3f}"
    assert got["other_only"] <= was["other_only"] + 1e-9
    for config, ref in recorded["reference"].items():
        assert result["reference"][config]["key_prs"] >= ref["key_prs"], config
        assert result["reference"][config]["labels_within"] >= ref["labels_within"], config


def test_every_judged_week_is_measured(result: dict[str, Any]) -> None:
    names = {p.stem for p in (ROOT / "tests" / "data" / "judged").glob("*.toml")}
    assert set(result["weeks"]) == names | {"verl-2026-W16 (shipped config)"}
    assert set(result["busy"]) == {"torchtitan-2026-W34", "verl-2026-W16", "verl-2026-W28", "diffusers-2025-W49"}
    assert set(result["reference"]) == {"none", "shipped"}


def test_kappa_and_key_figures(bench: ModuleType) -> None:
    assert bench.cohen_kappa([("skip", "skip"), ("skim", "skim")]) == 1.0
    # 2 of 4 agree; marginals 2/2 and 2/2 -> chance 0.5 -> kappa 0
    assert bench.cohen_kappa([("skip", "skip"), ("skim", "skim"), ("skip", "skim"), ("skim", "skip")]) == 0.0
    week = bench.Week(name="w", repo="r", week="2026-W01", analyzer="a", config="none", prs=[
        bench.Judged(1, "close_read", 7, "close_read", 6, got_key=True),
        bench.Judged(2, "skip", 2, "skim", 6, got_key=True, other_only=True),
        bench.Judged(3, "skim", 6, "skim", 4),
        bench.Judged(4, "skip", 1, "skip", 3),
    ])
    quiet = bench.Week(name="q", repo="r", week="2026-W02", analyzer="a", config="none", prs=[
        bench.Judged(5, "skip", 2, "skip", 7, got_key=True)])
    f = bench.figures([week, quiet])
    assert (f.prs, f.verdict, f.importance_within_1, f.other_only) == (5, 0.8, 0.2, 0.2)
    assert (f.key_said, f.key_judged, f.key_precision, f.key_recall) == (2, 2, 0.5, 0.5)  # the quiet week is left out
    assert bench.figures([quiet]).key_recall is None


def test_the_command_prints_every_row_and_writes_json(bench: ModuleType, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "figures.json"
    assert bench.main(["--root", str(ROOT), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    for row in ("pooled", "torchtitan-2026-W34", "verl-2026-W16 (shipped config)", "reference (none config)"):
        assert row in printed
    assert json.loads(out.read_text(encoding="utf-8"))["heuristic"]["pooled"]["prs"] == _judged_prs()


def test_with_a_model_configured_its_rows_are_printed_beside_the_heuristic(
    bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """The same harness measures the configured model (here the local fake, on the quiet week only)."""
    import shutil
    import uuid

    from fakes.llm_server import FakeLLMServer

    judged = tmp_path / "judged"
    judged.mkdir()
    shutil.copy(ROOT / "tests" / "data" / "judged" / "verl-2026-W08.toml", judged)
    with FakeLLMServer() as fake:
        monkeypatch.setenv("PRHUB_LLM_MODEL", f"openai/fake-{uuid.uuid4().hex[:8]}")
        monkeypatch.setenv("PRHUB_LLM_API_BASE", fake.base_url)
        monkeypatch.setenv("PRHUB_LLM_API_KEY", "test-key")
        out = tmp_path / "figures.json"
        assert bench.main(["--root", str(ROOT), "--judged", str(judged), "--json", str(out)]) == 0
        assert len(fake.pr_requests()) == 10
    printed = capsys.readouterr().out
    assert "== heuristic" in printed
    assert "== llm" in printed
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["llm"]["pooled"]["prs"] == figures["heuristic"]["pooled"]["prs"] == 10
