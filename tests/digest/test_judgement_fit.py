"""The fitted judgement's weights: bench/fit_judgement.py reproduces bot/digest/weights.json from the judged weeks,
and its leave-one-repository-out figures never drop below the recorded ones (tests/data/judged/loo.json)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "data" / "judged" / "loo.json"
HIGHER_IS_BETTER = ("verdict", "kappa", "importance_within_1", "key_precision", "key_recall")


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fit() -> ModuleType:
    return _load("fit_judgement")


@pytest.fixture(scope="module")
def weeks(fit: ModuleType) -> list[Any]:
    return fit.collect(ROOT / "tests" / "data" / "judged", ROOT / "tests" / "data")  # type: ignore[no-any-return]


def test_the_fitting_script_reproduces_the_shipped_weights(fit: ModuleType, weeks: list[Any]) -> None:
    model = fit.fit_chosen(weeks)
    shipped = json.loads((ROOT / "bot" / "digest" / "weights.json").read_text(encoding="utf-8"))
    assert model.to_json() == shipped, "weights.json is stale: run bench/fit_judgement.py"


def test_out_of_repository_figures_do_not_drop_below_the_recorded_ones(fit: ModuleType, weeks: list[Any]) -> None:
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    result = fit.leave_one_out(weeks)
    assert set(result) == set(recorded)
    got, was = result["pooled"][1], recorded["pooled"]["out_of_repository"]
    assert got.prs == was["prs"]
    for name in HIGHER_IS_BETTER:
        assert getattr(got, name) >= was[name] - 1e-9, f"pooled {name}: {getattr(got, name):.3f} < {was[name]:.3f}"


def test_every_repository_is_left_out_once(fit: ModuleType, weeks: list[Any]) -> None:
    repos = {w.repo for w in weeks}
    assert len(repos) == 7
    assert sum(len(w.rows) for w in weeks) == 322
    # a repository's own weeks never reach the model that judges them
    seen: list[str] = []
    original = fit.fit

    def spy(train: list[Any], **kwargs: Any) -> Any:
        seen.append(",".join(sorted({w.repo for w in train})))
        return original(train, **kwargs)

    fit.fit = spy
    try:
        model = fit.fit_chosen([w for w in weeks if w.repo != "pytorch/torchtitan"])
    finally:
        fit.fit = original
    assert all("pytorch/torchtitan" not in s for s in seen)
    assert model.calibration in fit.CALIBRATIONS


def test_the_misses_are_the_out_of_repository_disagreements(fit: ModuleType, weeks: list[Any]) -> None:
    found = fit.misses(weeks)
    pooled = fit.leave_one_out(weeks)["pooled"][1]
    wrong_verdicts = [m for m in found if m.verdict != m.row.verdict]
    # the same models as --loo: as many verdicts differ as its pooled out-of-repository agreement leaves
    assert len(wrong_verdicts) == round((1 - pooled.verdict) * pooled.prs)
    for m in found:
        assert m.verdict != m.row.verdict or abs(m.importance - m.row.importance) > 1
        assert 0 < len(m.moved) <= fit.MISS_FACTS
        sizes = [abs(points) for _, points in m.moved]
        assert sizes == sorted(sizes, reverse=True)
    text = fit.render_misses(found).splitlines()
    assert len(text) == len(found) + 1
    assert all(f"#{m.row.number}" in line for m, line in zip(found, text[1:], strict=True))
