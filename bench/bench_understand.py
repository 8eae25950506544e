"""Benchmark: reading messages (bot/understand) and answering questions about a window (bot/digest/ask.py).

Run: ``.venv/bin/python bench/bench_understand.py`` (add ``--repeat N``; default 3).

Figures are ratios to a baseline measured in the same run, because absolute times on
shared machines are noisy:

- ``understand``  every phrasing of the understanding table, read by ``understand()``,
  against ``normalize()`` of the same messages (= 1.00: NFKC, mention removal, cut); the
  segmenter (jieba) is loaded before the clock starts, and its one-time load is printed apart;
- ``corpus``      the phrasing corpus (tests/understand/corpus/tuning.toml; ``--corpus held_out``
  for the held-out set) read by ``understand()`` as above, then played through the chat core
  (:mod:`corpus_check`: thread, subscriptions, reply language) and compared with each case's
  ``expect``: right / total, Chinese and English apart, and the cases read wrong;
- ``hostile``     twelve 40,000-character messages (digits, letters, 订阅…, #6046…, a
  random mix — issue 14 stalled the parser of its day 16 s on the first) against
  ``normalize()`` of them; per message, the time is also printed in milliseconds;
- ``ask W16``     six questions on verl 2026-W16 (39 PRs with diffs) against building that
  week's digest (= 1.00);
- ``ask month``   the same questions on April 2026 (with diffs) against that month's digest.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from bot.config import load_settings  # noqa: E402
from bot.digest.ask import answer_question  # noqa: E402
from bot.digest.service import build_digest  # noqa: E402
from bot.digest.window import date_window, week_window  # noqa: E402
from bot.sources.jsonl import SnapshotSource  # noqa: E402
from bot.understand import normalize, understand  # noqa: E402

REPO = "verl-project/verl"
NOW = datetime(2026, 11, 30, tzinfo=UTC)
QUESTIONS = (["rollout", "配置"], ["fully_async"], ["megatron"], ["routed_experts"], ["依赖"], ["docker", "npu"])


def best_of(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def hostile() -> list[str]:
    mix = "".join(random.Random(14).choice("周报上第16Ww-/#和0123456789 abc标签订阅PR.") for _ in range(40_000))
    return ["9" * 40_000, "a" * 40_000, "订阅" * 20_000, "npu 标签" * 6_000, "#6046 " * 6_000, "上周" * 20_000,
            "a/" * 20_000, "4/13-" * 8_000, "PR 6046 和 " * 4_000, "w1" * 20_000, "https://x/" + "a" * 39_990, mix]


def corpus(name: str, repeat: int, *, quiet: bool = False) -> None:
    """Time ``understand()`` on the corpus' messages and score the corpus through the chat core."""
    import asyncio

    sys.path.insert(0, str(ROOT / "tests" / "understand"))
    import corpus_check as cc

    from bot.app import build_services
    from bot.store import MemoryStore

    cases = cc.load(name)
    texts = [c["text"] for c in cases]
    base = best_of(repeat, lambda: [normalize(t) for t in texts])
    read = best_of(repeat, lambda: [understand(t) for t in texts])
    print(f"corpus      {len(texts)} {name} phrasings: {read / base:6.1f} × normalize  "
          f"({read / len(texts) * 1e3:.3f} ms a message)")
    settings = load_settings().model_copy(update={
        "default_source": f"jsonl:{ROOT / 'tests' / 'data' / 'verl-prs-with-patches.jsonl.gz'}",
        "default_repo": REPO, "language": "zh", "channels": {}})

    async def run() -> list[cc.Outcome]:
        services = build_services(settings, MemoryStore(), clock=lambda: cc.TODAY)
        reader = cc.Reader(services)
        try:
            return [await reader.read(case, i) for i, case in enumerate(cases)]
        finally:
            await services.aclose()

    outcomes = asyncio.run(run())
    got = cc.score(outcomes)
    print("            right: " + ", ".join(f"{k} {r}/{t} ({r / t:.0%})" for k, (r, t) in got.items() if t))
    if quiet or name.startswith("held_out"):  # a held-out set is scored, never shown
        return
    for o in outcomes:
        if not o.right:
            print(f"            ✗ [{o.case['lang']}] {o.case['text']!r} ({o.case['expect']}): {'; '.join(o.problems)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", default="tuning",
                        help="corpus file to score (tuning | tuning2 … tuning9 | audit | held_out … held_out4 | none); "
                             "a held-out set's cases are never printed")
    parser.add_argument("--quiet", action="store_true", help="print the scores only, not the cases read wrong")
    args = parser.parse_args()
    os.environ.setdefault("PRHUB_CONFIG", str(ROOT / "prhub.toml"))
    settings = load_settings()
    from understand.test_understand import TABLE  # the phrasings people use

    table = [row[0] for row in TABLE]
    started = time.perf_counter()
    understand("上周谁改了 megatron 的 checkpoint 逻辑")  # loads the segmenter once, outside the measure
    print(f"segmenter   loaded once in {(time.perf_counter() - started) * 1e3:.0f} ms (the first Chinese message)")
    base = best_of(args.repeat, lambda: [normalize(t) for t in table])
    read = best_of(args.repeat, lambda: [understand(t) for t in table])
    print(f"understand  {len(table)} phrasings: {read / base:6.1f} × normalize  "
          f"({read / len(table) * 1e6:.0f} µs a message)")

    if args.corpus != "none":
        corpus(args.corpus, args.repeat, quiet=args.quiet)

    long = hostile()
    base = best_of(args.repeat, lambda: [normalize(t) for t in long])
    read = best_of(args.repeat, lambda: [understand(t) for t in long])
    worst = max(best_of(args.repeat, lambda t=t: understand(t)) for t in long)  # type: ignore[misc]
    print(f"hostile     12 × 40,000 chars: {read / base:6.1f} × normalize  (slowest message {worst * 1e3:.1f} ms)")

    source = SnapshotSource(ROOT / "tests" / "data" / "verl-prs-with-patches.jsonl.gz")
    for name, window in (("ask W16", week_window(2026, 16, "Asia/Shanghai")),
                         ("ask month", date_window(date(2026, 4, 1), date(2026, 4, 30), "Asia/Shanghai"))):
        prs = source.merged_prs(REPO, window)
        digest = build_digest(prs, repo=REPO, window=window, settings=settings, now=NOW)
        base = best_of(args.repeat, lambda p=prs, w=window: build_digest(p, repo=REPO, window=w,  # type: ignore[misc]
                                                                         settings=settings, now=NOW))
        ask = best_of(args.repeat, lambda d=digest, p=prs: [answer_question(d, p, q) for q in QUESTIONS])  # type: ignore[misc]
        print(f"{name:10}  {len(QUESTIONS)} questions over {len(prs)} PRs: {ask / base:6.2f} × build_digest "
              f"({ask / len(QUESTIONS) * 1e3:.1f} ms a question)")


if __name__ == "__main__":
    main()
