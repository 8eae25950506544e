"""Benchmark: how long the digest core and the renderers take on real data.

Run: ``.venv/bin/python bench/bench_digest.py`` (add ``--repeat N``; default 3).

Figures are reported as ratios to a baseline measured in the same run — parsing
every record of the snapshot with pydantic — because absolute times on shared
machines are noisy. Workloads:

- ``load``      read and validate the 2,883 records (the baseline, = 1.00);
- ``digest``    build_digest for every ISO week of 2026 with data (heuristic analyzer);
- ``busiest``   build_digest for 2025-W23 (63 PRs), the busiest week;
- ``markdown`` / ``slack`` / ``feishu``  render all 2026 digests;
- ``compare``   2025-W23 with week over week, as the chat bots and the push build it: the look back
                over the 11 weeks before (records of the last 4, analysed by the heuristic) and the digest;
- ``charts``    draw that digest's card charts (labels, weekly; matplotlib Agg), as each posted card does.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bot.config import load_settings
from bot.digest.service import build_digest
from bot.digest.window import week_window
from bot.models import Digest
from bot.sources.jsonl import SnapshotSource

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "verl-prs.jsonl.gz"
REPO = "verl-project/verl"
NOW = datetime(2026, 11, 30, tzinfo=UTC)


def best_of(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("PRHUB_CONFIG", str(ROOT / "prhub.toml"))
    settings = load_settings()

    def load() -> SnapshotSource:
        source = SnapshotSource(DATA)
        source.load()
        return source

    source = load()
    weeks = [week_window(2026, w, "Asia/Shanghai") for w in range(1, 54)]
    windows = [(w, prs) for w in weeks if (prs := source.merged_prs(REPO, w))]
    busiest = week_window(2025, 23, "Asia/Shanghai")
    busiest_prs = source.merged_prs(REPO, busiest)
    digests: list[Digest] = []

    def all_weeks() -> None:
        digests.clear()
        digests.extend(build_digest(prs, repo=REPO, window=w, settings=settings, now=NOW) for w, prs in windows)

    from bot.cards.feishu import render_feishu
    from bot.cards.markdown import render_markdown
    from bot.cards.slack import render_slack

    results = {"load": best_of(args.repeat, load), "digest": best_of(args.repeat, all_weeks),
               "busiest": best_of(args.repeat, lambda: build_digest(busiest_prs, repo=REPO, window=busiest,
                                                                    settings=settings, now=NOW))}
    for name, render in (("markdown", render_markdown), ("slack", render_slack), ("feishu", render_feishu)):
        results[name] = best_of(args.repeat, lambda r=render: [r(d) for d in digests])  # type: ignore[misc]
    from bot.cards.charts import render_charts
    from bot.cards.extras import CARD_CHARTS
    from bot.digest.history import read_earlier

    def compare() -> Digest:
        return build_digest(busiest_prs, repo=REPO, window=busiest, settings=settings, now=NOW,
                            lookback=read_earlier(source, REPO, busiest))

    results["compare"] = best_of(args.repeat, compare)
    compared = compare()
    render_charts(compared, names=CARD_CHARTS)  # the first drawing loads matplotlib and its font cache
    results["charts"] = best_of(args.repeat, lambda: render_charts(compared, names=CARD_CHARTS))
    base = results["load"]
    n_prs = sum(len(p) for _, p in windows)
    print(f"{len(windows)} weeks of 2026, {n_prs} PRs; best of {args.repeat}; baseline = load of 2,883 records")
    for name, seconds in results.items():
        print(f"{name:9s} {seconds * 1000:9.1f} ms   {seconds / base:6.2f} x load")
    print(f"per PR (digest): {results['digest'] / n_prs * 1e6:.0f} µs; median week "
          f"{statistics.median(len(p) for _, p in windows)} PRs")


if __name__ == "__main__":
    main()
