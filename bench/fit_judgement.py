"""Fit the judgement's weights (``bot/digest/weights.json``) from the hand-judged weeks.

Run: ``.venv/bin/python bench/fit_judgement.py``            (writes bot/digest/weights.json)
     ``.venv/bin/python bench/fit_judgement.py --loo --json tests/data/judged/loo.json``  (records the figures
                                                              tests/digest/test_judgement_fit.py keeps from
                                                              dropping)
     ``.venv/bin/python bench/fit_judgement.py --check``    (exit 1 when the file differs from a fresh fit)
     ``.venv/bin/python bench/fit_judgement.py --loo``      (leave one repository out: fit on six, measure the
                                                              seventh, for each; prints in- and out-of-repository
                                                              figures)
     ``.venv/bin/python bench/fit_judgement.py --misses``   (the out-of-repository disagreements, one line each:
                                                              judged and fitted importance and verdict, the title,
                                                              the facts that moved it most — where to look before
                                                              adding a feature)

Offline, deterministic, well under two minutes. For every judged PR of ``tests/data/judged/*.toml`` (never the
``held-out/`` folder) the features the heuristic analyzer reads (:meth:`HeuristicAnalyzer.features`) are taken
in the same context a digest of that week gives them — no configuration, the repository's history from the
records before the window — together with the repository's *profile* (the mean path-level features of its
history, see :mod:`bot.digest.judgement`). Then, on those rows:

- importance: a ridge regression (scikit-learn ``Ridge``, ``alpha`` = :data:`IMPORTANCE_ALPHA`), each repository
  weighted so that it counts as much as any other (a 66-PR week must not outvote a whole repository);
- the fitted scores are moved away from their mean by the factor of :data:`STRETCHES` that serves the judged
  importance best (within one point, key PRs found): a regression pulls everything toward the mean;
- verdict: the two whole-number cuts on the fitted importance that agree most often with the judged verdicts;
- calibration: the share of the repository offset taken out, chosen from :data:`CALIBRATIONS` by the pooled
  leave-one-repository-out figures (the only thing chosen by looking at held-out repositories, and it is one
  number).

Features, penalties and the calibration grid are constants here; change them, run ``--loo`` and keep a change
only if the pooled out-of-repository figures improve.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from eval_judgement import DATA, _settings  # noqa: E402

IMPORTANCE_ALPHA = 1.0
CALIBRATIONS = (0.0, 0.25, 0.5, 0.75, 1.0)
STRETCHES = (1.0, 1.1, 1.2, 1.3, 1.4, 1.5)
FEATURE_SET = (
    # the rubric's kinds of change (see bot/digest/heuristic.py, _rubric)
    "fix_core", "feature_core", "feature_secondary", "contract", "numerics", "upgrade_with_code", "local_fix",
    "small_fix", "minor_non_code", "trivial",
    # what moves a kind up or down
    "type_revert", "mechanical", "guard", "instrumentation", "breaking", "project_rename", "dependency_range",
    "dependency_pin", "version_bump", "explained", "code_size", "files", "code_new", "new_module",
    # what the diff means (bot/digest/diff.py findings)
    "deprecation", "deprecated_removal", "behavior_change", "numerics_change", "object_cache", "core",
)
"""The features the models weigh (a subset of bot.digest.judgement.FEATURES; each kept by the pooled
out-of-repository figures of ``--loo``)."""
VERDICT_INDEX = {"skip": 0, "skim": 1, "close_read": 2}
WEIGHTS = ROOT / "bot" / "digest" / "weights.json"


@dataclass
class Row:
    """One judged PR: where it is from, its features, the judge's importance and verdict."""

    repo: str
    week: str
    number: int
    values: dict[str, float]
    importance: int
    verdict: str
    title: str = ""


@dataclass
class WeekData:
    """One judged week: its rows, and the repository's profile before it (mean path-level features)."""

    repo: str
    week: str
    rows: list[Row]
    profile: dict[str, float] | None


async def _week(table: dict[str, Any], data: Path, settings: Any) -> WeekData:
    from bot.digest.heuristic import HeuristicAnalyzer, history_profile
    from bot.digest.service import DigestService, pr_context
    from bot.digest.window import week_window
    from bot.sources.jsonl import SnapshotSource

    repo = table["repo"]
    year, number = table["week"].split("-W")
    window = week_window(int(year), int(number), table["timezone"])
    source = SnapshotSource(data / DATA[repo])
    prs = {p.number: p for p in source.merged_prs(repo, window)}
    service = DigestService(settings)
    earlier = await service.look_back(source, repo, window)
    await service.aclose()
    history = list(earlier.lookback.records)
    analyzer = HeuristicAnalyzer()
    window_prs = list(prs.values())
    # the context a digest of the week gives every PR of it: core files from the history, the window's titles
    context = pr_context(window_prs[0], settings=settings, window_prs=window_prs, history=history, calibrated=False)
    rows = [Row(repo, table["week"], j["number"], analyzer.features(prs[j["number"]], context), j["importance"],
                j["verdict"], prs[j["number"]].title) for j in table["pr"]]
    return WeekData(repo, table["week"], rows, history_profile(history, context))


def collect(judged: Path, data: Path) -> list[WeekData]:
    """The features of every judged PR of ``judged/*.toml`` and of its repository's history (no configuration)."""
    settings = _settings(None, keep_llm=False)
    tables = [tomllib.loads(p.read_text(encoding="utf-8")) for p in sorted(judged.glob("*.toml"))]

    async def run() -> list[WeekData]:
        return [await _week(t, data, settings) for t in tables if "pr" in t]

    return asyncio.run(run())


def _matrix(rows: Sequence[dict[str, float]], names: Sequence[str]) -> np.ndarray:
    return np.array([[r.get(n, 0.0) for n in names] for r in rows], dtype=float).reshape(len(rows), len(names))


def _repo_weights(repos: Sequence[str]) -> np.ndarray:
    """Sample weights that give every repository the same total weight (mean 1)."""
    counts = {r: repos.count(r) for r in set(repos)}
    w = np.array([1.0 / counts[r] for r in repos])
    return w * len(repos) / w.sum()


def _stretch(score: np.ndarray, judged: np.ndarray, sample: np.ndarray) -> float:
    """The factor in :data:`STRETCHES` by which the importance scores move away from their mean that serves the
    judged importance best: within one point, and key PRs (>= 6) found with precision and recall (F1)."""
    centre = float(np.average(score, weights=sample))
    real = judged >= 6

    def merit(k: float) -> float:
        got = np.clip(np.floor(centre + k * (score - centre) + 0.5), 1, 10)
        within = float(np.average(np.abs(got - judged) <= 1, weights=sample))
        said = got >= 6
        hit = float((sample * (said & real)).sum())
        f1 = 2 * hit / max(float((sample * said).sum() + (sample * real).sum()), 1e-9)
        return within + f1

    return max(STRETCHES, key=lambda k: (merit(k), -k))


def fit(weeks: Sequence[WeekData], *, calibration: float, names: Sequence[str] | None = None) -> Any:
    """The model fitted on ``weeks`` with calibration strength ``calibration`` (see the module docstring)."""
    from sklearn.linear_model import Ridge

    from bot.digest.judgement import Model

    names = list(names or FEATURE_SET)
    rows = [r for w in weeks for r in w.rows]
    x = _matrix([r.values for r in rows], names)
    y = np.array([r.importance for r in rows], dtype=float)
    sample = _repo_weights([r.repo for r in rows])
    offsets = np.zeros(len(rows))
    reference = 0.0
    for _ in range(3 if calibration else 1):  # the offsets depend on the fit and the fit on them: settle
        ridge = Ridge(alpha=IMPORTANCE_ALPHA).fit(x, y - offsets, sample_weight=sample)
        means = {(w.repo, w.week): float(ridge.intercept_ + _matrix([w.profile], names)[0] @ ridge.coef_)
                 for w in weeks if w.profile is not None}
        by_repo: dict[str, list[float]] = {}
        for (repo, _week), m in means.items():
            by_repo.setdefault(repo, []).append(m)
        reference = float(np.mean([np.mean(v) for v in by_repo.values()])) if by_repo else 0.0
        offsets = np.array([calibration * (reference - means[(r.repo, r.week)]) if (r.repo, r.week) in means
                            else 0.0 for r in rows])
    intercept, coef = float(ridge.intercept_), ridge.coef_
    stretch = _stretch(intercept + x @ coef + offsets, y, sample)
    if stretch != 1.0:
        # a regression pulls every prediction toward the mean: the judged key PRs end up below the bar
        centre = float(np.average(intercept + x @ coef + offsets, weights=sample))
        intercept, coef = centre + stretch * (intercept - centre), coef * stretch
        reference = centre + stretch * (reference - centre)
        offsets = offsets * stretch
    verdicts = np.array([VERDICT_INDEX[r.verdict] for r in rows])
    importance = np.clip(np.floor(intercept + x @ coef + offsets + 0.5), 1, 10)
    cuts = _verdict_cuts(importance, verdicts, sample)
    return Model(names=tuple(names), importance_intercept=intercept,
                 importance_weights=tuple(float(v) for v in coef), verdict_cuts=cuts, calibration=calibration,
                 reference=reference)


def _verdict_cuts(importance: np.ndarray, verdicts: np.ndarray, sample: np.ndarray) -> tuple[int, int]:
    """The two whole numbers (lowest ``skim``, lowest ``close_read``) that turn the fitted importance into the
    judged verdicts most often (weighted); the pair nearest the rubric's (4, 6) on a tie."""
    best: tuple[float, int, tuple[int, int]] | None = None
    for low in range(2, 8):
        for high in range(low + 1, 10):
            got = np.where(importance < low, 0, np.where(importance >= high, 2, 1))
            agree = float((sample * (got == verdicts)).sum())
            key = (agree, -(abs(low - 4) + abs(high - 6)), (low, high))
            if best is None or key[:2] > best[:2]:
                best = key
    assert best is not None
    return best[2]


def predict(model: Any, weeks: Sequence[WeekData]) -> list[tuple[Row, int, str]]:
    """(row, importance, verdict) of every judged PR of ``weeks`` under ``model``, calibrated by the week's history."""
    from bot.digest.judgement import judge, repository_offset

    out = []
    for w in weeks:
        offset = repository_offset(model, w.profile)
        for r in w.rows:
            j = judge(r.values, model=model, offset=offset)
            out.append((r, j.importance, j.verdict))
    return out


def _figures(predicted: Sequence[tuple[Row, int, str]]) -> Any:
    from eval_judgement import Judged, Week, figures

    weeks: dict[tuple[str, str], Week] = {}
    for r, importance, verdict in predicted:
        week = weeks.setdefault((r.repo, r.week), Week(name=f"{r.repo}-{r.week}", repo=r.repo, week=r.week,
                                                      analyzer="fitted", config="none"))
        week.prs.append(Judged(number=r.number, verdict=r.verdict, importance=r.importance, got_verdict=verdict,
                               got_importance=importance, got_key=importance >= 6))
    return figures(list(weeks.values()))


def choose_calibration(weeks: Sequence[WeekData]) -> float:
    """The calibration strength of :data:`CALIBRATIONS` whose models, fitted on all repositories of ``weeks`` but
    one, agree best with the judges of the one left out (verdict + κ + importance within one, pooled); the
    smaller strength on a tie. With fewer than three repositories: none (0)."""
    repos = sorted({w.repo for w in weeks})
    if len(repos) < 3:
        return 0.0

    def merit(strength: float) -> float:
        out: list[tuple[Row, int, str]] = []
        for repo in repos:
            model = fit([w for w in weeks if w.repo != repo], calibration=strength)
            out += predict(model, [w for w in weeks if w.repo == repo])
        f = _figures(out)
        return float(f.verdict + f.kappa + f.importance_within_1)

    return max(CALIBRATIONS, key=lambda c: (merit(c), -c))


def fit_chosen(weeks: Sequence[WeekData]) -> Any:
    """:func:`fit` with the calibration :func:`choose_calibration` picks from ``weeks`` alone."""
    return fit(weeks, calibration=choose_calibration(weeks))


def leave_one_out(weeks: Sequence[WeekData]) -> dict[str, tuple[Any, Any]]:
    """Per repository and pooled: (in-repository figures — the model fitted on all seven —, out-of-repository
    figures — for each repository, everything, the calibration included, chosen and fitted on the other six)."""
    repos = sorted({w.repo for w in weeks})
    inside = predict(fit_chosen(weeks), weeks)
    outside: list[tuple[Row, int, str]] = []
    for repo in repos:
        outside += predict(fit_chosen([w for w in weeks if w.repo != repo]), [w for w in weeks if w.repo == repo])
    result = {repo: (_figures([p for p in inside if p[0].repo == repo]),
                     _figures([p for p in outside if p[0].repo == repo])) for repo in repos}
    result["pooled"] = (_figures(inside), _figures(outside))
    return result


@dataclass
class Miss:
    """One judged PR the model fitted without its repository disagrees on: by verdict, or by more than one point
    of importance."""

    row: Row
    importance: int
    verdict: str
    moved: tuple[tuple[str, float], ...]
    """The facts that moved its importance most (name, points), largest first; the calibration offset among them."""


MISS_FACTS = 3


def misses(weeks: Sequence[WeekData]) -> list[Miss]:
    """The out-of-repository disagreements of :func:`leave_one_out` (each repository judged by the model chosen
    and fitted on the others), in repository, week and PR order."""
    from bot.digest.judgement import CALIBRATION_FEATURE, judge, repository_offset

    out: list[Miss] = []
    for repo in sorted({w.repo for w in weeks}):
        model = fit_chosen([w for w in weeks if w.repo != repo])
        for w in (w for w in weeks if w.repo == repo):
            offset = repository_offset(model, w.profile)
            for r in w.rows:
                j = judge(r.values, model=model, offset=offset)
                if j.verdict == r.verdict and abs(j.importance - r.importance) <= 1:
                    continue
                parts = [(p.name, p.importance) for p in j.contributions] + [(CALIBRATION_FEATURE, offset)]
                moved = tuple(sorted((p for p in parts if p[1]), key=lambda p: -abs(p[1]))[:MISS_FACTS])
                out.append(Miss(r, j.importance, j.verdict, moved))
    return out


def render_misses(found: Sequence[Miss]) -> str:
    """One line per miss: repository, PR, judged → fitted importance and verdict, title, the facts that moved it."""
    lines = [f"{len(found)} out-of-repository disagreements (verdict, or importance off by more than one)"]
    for m in found:
        r = m.row
        facts = ", ".join(f"{name} {points:+.1f}" for name, points in m.moved)
        lines.append(f"{r.repo.split('/')[-1][:14]:14s} {r.week} #{r.number:<6d} judged {r.importance} "
                     f"{r.verdict:10s} fitted {m.importance} {m.verdict:10s} {r.title[:60]:60s} [{facts}]")
    return "\n".join(lines)


def render_loo(result: dict[str, tuple[Any, Any]]) -> str:
    """The in- and out-of-repository table a person reads."""
    def cell(f: Any) -> str:
        key = f"{f.key_precision:4.0%}/{f.key_recall:4.0%}" if f.key_precision is not None and \
            f.key_recall is not None else "    -    "
        return f"{f.verdict:4.0%} {f.kappa:5.2f} {f.importance_within_1:4.0%} {key}"

    head = (f"{'repository':34s} {'PRs':>4s}  {'in: verdict kappa imp±1 keyP/keyR':36s}  "
            "out: verdict kappa imp±1 keyP/keyR")
    lines = [head]
    for name, (inside, outside) in result.items():
        lines.append(f"{name:34s} {inside.prs:4d}  {cell(inside):36s}  {cell(outside)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when weights.json differs from a fresh fit")
    parser.add_argument("--loo", action="store_true", help="print in- and out-of-repository figures")
    parser.add_argument("--out", type=Path, default=WEIGHTS, help="where the weights go (default: the package's)")
    parser.add_argument("--json", type=Path, help="with --loo: also write the figures to this file")
    parser.add_argument("--misses", action="store_true",
                        help="list the PRs the model fitted without their repository disagrees on, and why")
    args = parser.parse_args(argv)
    weeks = collect(ROOT / "tests" / "data" / "judged", ROOT / "tests" / "data")
    if args.misses:
        print(render_misses(misses(weeks)))
        return 0
    if args.loo:
        result = leave_one_out(weeks)
        print(render_loo(result))
        if args.json:
            figures = {name: {"in_repository": asdict(inside), "out_of_repository": asdict(outside)}
                       for name, (inside, outside) in result.items()}
            args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return 0
    model = fit_chosen(weeks)
    text = json.dumps(model.to_json(), indent=1, sort_keys=True) + "\n"
    if args.check:
        same = args.out.is_file() and args.out.read_text(encoding="utf-8") == text
        print("weights.json is what the fit gives" if same else "weights.json differs from a fresh fit")
        return 0 if same else 1
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} (calibration {model.calibration:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
