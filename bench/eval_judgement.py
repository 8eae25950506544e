"""How far the digest's judgement agrees with maintainers, on the hand-judged weeks.

Run: ``.venv/bin/python bench/eval_judgement.py``  (offline; well under a minute without a model).

Each ``tests/data/judged/*.toml`` is one week of one repository, every merged PR judged from its diff
(see ``tests/data/judged/RUBRIC.md``). For each, the digest of that repository, ISO week and time zone
is built from the shipped PR records (``tests/data/*.jsonl.gz``; ``verl-prs-with-patches`` for verl)
the way every door builds it — :class:`bot.digest.service.DigestService`, with the source's look back —
and **with no configuration at all** (a repository nobody configured). verl 2026-W16 is also built
with the shipped ``prhub.toml``.

Printed per week and pooled over all judged PRs:

- ``verdict``: share of PRs whose recommendation (close_read / skim / skip) is the judge's;
- ``kappa``: Cohen's κ of those verdicts (agreement beyond chance, 1 = perfect, 0 = chance);
- ``imp±1``: share of PRs whose importance is within 1 of the judge's;
- ``key P`` / ``key R``: precision and recall of key PRs (judged importance >= 6; the digest's key
  bar for the digest), over the weeks with at least one judged key PR;
- ``other``: share of PRs whose only label is ``other``.

Then the reference check on verl 2026-W16 (the week of ``../shared/reference/``): how many of the
reference report's 10 key PRs the digest lists as key, and for how many of the reference's 10 label
counts the digest's count is within ±30 %, with the shipped config and with none.

With ``PRHUB_LLM_MODEL`` set (and its key), the configured model analyses the same PRs (an in-memory
cache; no narrative) and its rows are printed beside the heuristic's.

Self-contained: ``python <checkout>/bench/eval_judgement.py`` measures the code of the checkout it is
run from (the current directory when it holds ``bot/``, else the one this file is in; ``--root``
chooses). ``--json FILE`` writes the figures (``tests/data/judged/recorded.json`` holds the last
recorded ones, which ``tests/digest/test_judgement_eval.py`` keeps from dropping).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tomllib
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
HERE = Path(__file__).resolve().parents[1]

DATA = {"verl-project/verl": "verl-prs-with-patches.jsonl.gz", "pytorch/torchtitan": "torchtitan.jsonl.gz",
        "OpenRLHF/OpenRLHF": "openrlhf.jsonl.gz", "deepspeedai/DeepSpeed": "deepspeed.jsonl.gz",
        "axolotl-ai-cloud/axolotl": "axolotl.jsonl.gz",
        "EleutherAI/lm-evaluation-harness": "lm-evaluation-harness.jsonl.gz",
        "huggingface/diffusers": "diffusers.jsonl.gz"}
JUDGED_KEY = 6
VERDICTS = ("close_read", "skim", "skip")
BUSY_WEEK_PRS = 30

# From the reference report of verl 2026-W16 (../shared/reference/weekly-report-verl-2026-W16.txt):
# its key-PR table and the label counts its text gives.
REFERENCE_WEEK = ("verl-project/verl", "2026-W16")
REFERENCE_KEY_PRS = (5951, 6039, 6024, 6046, 6029, 6053, 5969, 5997, 5900, 6005)
REFERENCE_LABELS = {"trainer": 18, "rollout": 13, "npu": 11, "ci": 9, "fully_async": 6, "docker": 5, "doc": 5,
                    "megatron": 4, "perf": 4, "veomni": 2}
LABEL_TOLERANCE = 0.30


def _root(argv_root: str | None) -> Path:
    if argv_root:
        return Path(argv_root).resolve()
    cwd = Path.cwd()
    return cwd if (cwd / "bot").is_dir() and (cwd / "tests" / "data").is_dir() else HERE


@dataclass
class Judged:
    """One judged PR and what the digest said of it."""

    number: int
    verdict: str
    importance: int
    got_verdict: str | None = None
    got_importance: int | None = None
    got_key: bool = False
    other_only: bool = False


@dataclass
class Week:
    """One judged week, one analyzer, one configuration."""

    name: str  # e.g. verl-2026-W16
    repo: str
    week: str
    analyzer: str
    config: str  # "none" or "shipped"
    prs: list[Judged] = field(default_factory=list)
    key_prs: tuple[int, ...] = ()
    label_counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Figures:
    """The agreement figures of a set of judged PRs (shares in 0..1; ``None`` when not defined)."""

    prs: int
    verdict: float
    kappa: float
    importance_within_1: float
    key_precision: float | None
    key_recall: float | None
    key_said: int
    key_judged: int
    other_only: float


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float:
    """Cohen's κ of (judged, got) verdict pairs; 1.0 when both always agree on one class."""
    n = len(pairs)
    if n == 0:
        return 0.0
    observed = sum(a == b for a, b in pairs) / n
    left, right = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(left[c] * right[c] for c in set(left) | set(right)) / (n * n)
    return 1.0 if expected >= 1 else (observed - expected) / (1 - expected)


def figures(weeks: Sequence[Week]) -> Figures:
    """Pooled figures over ``weeks``; key precision/recall only over weeks with a judged key PR."""
    rows = [p for w in weeks for p in w.prs]
    n = len(rows)
    keyed = [p for w in weeks if any(q.importance >= JUDGED_KEY for q in w.prs) for p in w.prs]
    said = sum(p.got_key for p in keyed)
    real = sum(p.importance >= JUDGED_KEY for p in keyed)
    hit = sum(p.got_key and p.importance >= JUDGED_KEY for p in keyed)
    return Figures(
        prs=n,
        verdict=sum(p.got_verdict == p.verdict for p in rows) / max(n, 1),
        kappa=cohen_kappa([(p.verdict, p.got_verdict or "-") for p in rows]),
        importance_within_1=sum(p.got_importance is not None and abs(p.got_importance - p.importance) <= 1
                                for p in rows) / max(n, 1),
        key_precision=hit / said if keyed and said else (None if not keyed else 0.0),
        key_recall=hit / real if real else None,
        key_said=said,
        key_judged=real,
        other_only=sum(p.other_only for p in rows) / max(n, 1),
    )


@contextmanager
def _environment(config: Path | None, keep_llm: bool) -> Iterator[None]:
    """Settings are read from the environment and the working directory: make both say what is wanted."""
    names = ["PRHUB_CONFIG"] + ([] if keep_llm else ["PRHUB_LLM_MODEL"])
    saved = {k: os.environ.pop(k) for k in names if k in os.environ}
    cwd = Path.cwd()
    try:
        if config is not None:
            os.environ["PRHUB_CONFIG"] = str(config)
        os.chdir(Path(__file__).resolve().parent if config is None else config.parent)
        yield
    finally:
        os.chdir(cwd)
        os.environ.pop("PRHUB_CONFIG", None)
        os.environ.update(saved)


def _settings(config: Path | None, keep_llm: bool) -> Any:
    from bot.config import load_settings

    with _environment(config, keep_llm):
        settings = load_settings()
    if config is None and settings.repositories:
        raise SystemExit("eval_judgement: a prhub.toml was found although none was wanted")
    return settings


async def _one_week(table: dict[str, Any], name: str, data: Path, settings: Any, config_name: str,
                    use_llm: bool, model: Any = None) -> Week:
    from bot.digest.heuristic import HeuristicAnalyzer
    from bot.digest.service import DigestService
    from bot.digest.window import week_window
    from bot.sources.jsonl import SnapshotSource

    repo = table["repo"]
    year, number = table["week"].split("-W")
    window = week_window(int(year), int(number), table["timezone"])
    source = SnapshotSource(data / DATA[repo])
    prs = source.merged_prs(repo, window)
    llm = None
    if use_llm:
        from bot.digest.llm import llm_runtime
        from bot.store import MemoryStore

        llm = llm_runtime(settings, MemoryStore())
    service = DigestService(settings, llm=llm, analyzer=HeuristicAnalyzer(model=model) if model is not None else None)
    earlier = await service.look_back(source, repo, window)
    digest = await service.digest(prs, repo=repo, window=window, lookback=earlier.lookback, known=earlier.known)
    await service.aclose()
    key = set(digest.key_prs)
    week = Week(name=name, repo=repo, week=table["week"], analyzer=digest.analyzer, config=config_name,
                key_prs=tuple(digest.key_prs),
                label_counts={g.label: len(g.pr_numbers) for g in digest.label_view})
    by_number = {p.number: p for p in digest.prs}
    for judged in table["pr"]:
        got = by_number.get(judged["number"])
        analysis = got.analysis if got is not None else None
        week.prs.append(Judged(
            number=judged["number"], verdict=judged["verdict"], importance=judged["importance"],
            got_verdict=analysis.recommendation.level if analysis else None,
            got_importance=analysis.importance if analysis else None,
            got_key=judged["number"] in key,
            other_only=got is not None and tuple(got.labels) == ("other",),
        ))
    return week


def evaluate(root: Path, judged_dir: Path, data: Path, *, use_llm: bool = False,
             models: dict[str, Any] | None = None) -> dict[str, list[Week]]:
    """Build every judged week's digest; returns the weeks by analyzer run (``heuristic``, ``llm``),
    the unconfigured ones first and the shipped-config verl W16 last (its ``config`` is ``shipped``).

    ``models``: per repository, the judgement model its digests use (leave one repository out: each fitted on the
    other repositories); default the shipped one."""
    tables = []
    for path in sorted(judged_dir.glob("*.toml")):
        table = tomllib.loads(path.read_text(encoding="utf-8"))
        if "pr" in table:
            tables.append((path.stem, table))
    if not tables:
        raise SystemExit(f"eval_judgement: no judged tables in {judged_dir}")
    runs = {"heuristic": False, **({"llm": True} if use_llm else {})}
    out: dict[str, list[Week]] = {}
    for run, llm in runs.items():
        bare = _settings(None, keep_llm=llm)
        shipped = _settings(root / "prhub.toml", keep_llm=llm) if (root / "prhub.toml").is_file() else None

        async def all_weeks(bare: Any = bare, shipped: Any = shipped, llm: bool = llm) -> list[Week]:
            pick = (lambda repo: models.get(repo)) if models else (lambda repo: None)
            weeks = [await _one_week(t, name, data, bare, "none", llm, pick(t["repo"])) for name, t in tables]
            for name, t in tables:
                if shipped is not None and (t["repo"], t["week"]) == REFERENCE_WEEK:
                    weeks.append(await _one_week(t, name, data, shipped, "shipped", llm, pick(t["repo"])))
            return weeks

        out[run] = asyncio.run(all_weeks())
    return out


def out_of_repository_models(root: Path, judged: Path, data: Path) -> dict[str, Any]:
    """Per repository of ``judged``, the judgement fitted (``bench/fit_judgement.py``, calibration chosen
    inside the fold) on the judged weeks of every other repository."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fit_judgement

    weeks = fit_judgement.collect(judged, data)
    repos = sorted({w.repo for w in weeks})
    return {repo: fit_judgement.fit_chosen([w for w in weeks if w.repo != repo]) for repo in repos}


def reference_check(week: Week) -> tuple[int, int]:
    """(reference key PRs the digest lists as key, reference labels whose count is within ±30 %)."""
    keys = sum(n in week.key_prs for n in REFERENCE_KEY_PRS)
    labels = sum(abs(week.label_counts.get(label, 0) - n) <= LABEL_TOLERANCE * n
                 for label, n in REFERENCE_LABELS.items())
    return keys, labels


def summary(runs: dict[str, list[Week]]) -> dict[str, Any]:
    """The figures as plain data: per run, per week (unconfigured), pooled, busy pooled, and the reference check."""
    result: dict[str, Any] = {}
    for run, weeks in runs.items():
        bare = [w for w in weeks if w.config == "none"]
        busy = [w for w in bare if len(w.prs) >= BUSY_WEEK_PRS]
        entry: dict[str, Any] = {
            "weeks": {w.name: asdict(figures([w])) for w in bare},
            "pooled": asdict(figures(bare)),
            "busy": {w.name: asdict(figures([w])) for w in busy},
            "reference": {},
        }
        for w in weeks:
            if (w.repo, w.week) == REFERENCE_WEEK:
                keys, labels = reference_check(w)
                entry["reference"][w.config] = {"key_prs": keys, "of_key_prs": len(REFERENCE_KEY_PRS),
                                                "labels_within": labels, "of_labels": len(REFERENCE_LABELS)}
                if w.config == "shipped":
                    entry["weeks"][f"{w.name} (shipped config)"] = asdict(figures([w]))
        result[run] = entry
    return result


def _pct(x: float | None) -> str:
    return "   -" if x is None else f"{x:4.0%}"


def render(result: dict[str, Any]) -> str:
    """The table a person reads."""
    lines = []
    head = f"{'week':38s} {'PRs':>4s} {'verdict':>7s} {'kappa':>6s} {'imp±1':>6s} {'key P':>12s} " \
           f"{'key R':>12s} {'other':>6s}"
    for run, entry in result.items():
        lines += [f"== {run} (no configuration unless said) ==", head]
        rows = [*entry["weeks"].items(), ("pooled", entry["pooled"])]
        for name, f in rows:
            tp = round((f["key_recall"] or 0) * f["key_judged"])
            kp = f"{tp:>3}/{f['key_said']:<3} {_pct(f['key_precision'])}" if f["key_precision"] is not None \
                else f"{'-':>12s}"
            kr = f"{tp:>3}/{f['key_judged']:<3} {_pct(f['key_recall'])}" if f["key_recall"] is not None \
                else f"{'-':>12s}"
            lines.append(f"{name:38s} {f['prs']:>4d} {_pct(f['verdict']):>7s} {f['kappa']:6.2f} "
                         f"{_pct(f['importance_within_1']):>6s} {kp:>12s} {kr:>12s} {_pct(f['other_only']):>6s}")
        for config, ref in entry["reference"].items():
            lines.append(f"verl 2026-W16 reference ({config} config): key PRs {ref['key_prs']}/{ref['of_key_prs']}, "
                         f"label counts within ±30 % {ref['labels_within']}/{ref['of_labels']}")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", help="the checkout whose code and data are measured (default: see above)")
    parser.add_argument("--judged", help="folder of judged tables (default: <root>/tests/data/judged)")
    parser.add_argument("--data", help="folder of the PR records (default: <root>/tests/data)")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--loo", action="store_true",
                        help="leave one repository out: each repository's digests use the judgement fitted on the "
                             "other repositories' judged weeks (bench/fit_judgement.py); printed beside the shipped "
                             "model's (in-repository) figures")
    args = parser.parse_args(argv)
    root = _root(args.root)
    sys.path.insert(0, str(root))
    judged = Path(args.judged).resolve() if args.judged else root / "tests" / "data" / "judged"
    data = Path(args.data).resolve() if args.data else root / "tests" / "data"
    use_llm = bool(os.environ.get("PRHUB_LLM_MODEL"))
    result = summary(evaluate(root, judged, data, use_llm=use_llm))
    if args.loo:
        outside = summary(evaluate(root, judged, data, models=out_of_repository_models(root, judged, data)))
        result["heuristic, out of repository"] = outside["heuristic"]
    print(render(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
