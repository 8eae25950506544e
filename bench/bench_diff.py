"""Benchmark: how long reading the diffs takes (bot.digest.diff.read_diff: surface, contract, dependencies, meaning).

Run: ``.venv/bin/python bench/bench_diff.py`` (add ``--repeat N``; default 3; ``--root CHECKOUT`` measures the code
of another checkout on this checkout's data, e.g. main's, for a before/after).

Figures are ratios to a baseline measured in the same run — validating every record of the six repositories with
per-file patches in tests/data (axolotl, DeepSpeed, diffusers, lm-evaluation-harness, torchtitan, OpenRLHF) with
pydantic — because absolute times on shared machines are noisy. Workloads:

- ``load``   validate the records (the baseline, = 1.00);
- ``first``  read_diff of every PR, the patch cache emptied first (what one digest of new PRs costs);
- ``again``  read_diff of every PR once more (what a second look at the same PRs costs).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
SNAPSHOTS = ("axolotl", "deepspeed", "diffusers", "lm-evaluation-harness", "torchtitan", "openrlhf")


def best_of(repeat: int, work: Callable[[], object], before: Callable[[], object] = lambda: None) -> float:
    times = []
    for _ in range(repeat):
        before()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--root", help="the checkout whose code is measured (default: this one)")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.root).resolve() if args.root else HERE))
    from bot.digest import diffscan
    from bot.digest.diff import read_diff
    from bot.digest.files import classify
    from bot.models import PullRequest

    raw: list[dict[str, Any]] = []
    for name in SNAPSHOTS:
        with gzip.open(HERE / "tests" / "data" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
            raw += [json.loads(line) for line in f]
    prs = [PullRequest.model_validate(r) for r in raw]
    kinds = [{f.path: classify(f.path) for f in p.files} for p in prs]

    def read() -> None:
        for pr, k in zip(prs, kinds, strict=True):
            read_diff(pr, k)

    load = best_of(args.repeat, lambda: [PullRequest.model_validate(r) for r in raw])
    first = best_of(args.repeat, read, diffscan.changed_lines.cache_clear)
    again = best_of(args.repeat, read)
    print(f"{len(prs)} PRs of {len(SNAPSHOTS)} repositories; best of {args.repeat}; code of "
          f"{args.root or HERE}")
    for name, seconds in (("load", load), ("first", first), ("again", again)):
        print(f"{name:8s} {seconds * 1000:9.1f} ms {seconds / load:7.2f} x load")
    print(f"per PR (first): {first / len(prs) * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
