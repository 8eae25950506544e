"""Benchmark: the ``prhub`` command line end to end, as a user runs it, against floors measured in the same run.

Run: ``.venv/bin/python bench/bench_cli.py [--repeat N] [--redis URL]`` (default 3 rounds, Redis DB 15;
a few minutes). Every figure is the best of N runs of a fresh process, reported as a ratio (absolute
times on this shared machine are noisy); the runs go in rounds (each case once per round), so a load
that comes and goes weighs on every case alike. Peak RSS is the process's own (``wait4``); beside each
wall-time ratio is the same ratio of CPU time. Lines, with targets:

- ``help``       ``prhub --help`` / a minimal typer app's ``--help`` (the floor F)           ≤ 1.5
- ``example``    the README's digest (``examples/verl-2026-W12-W16.jsonl.gz``, W16 with week over
                 week) / F                                                                   ≤ 3
- ``history``    verl's whole history (``tests/data/verl-prs.jsonl.gz``, 2,883 PRs) / 2026-W16 read from
                 the same file; peak RSS                                                     ≤ 2.5, < 300 MB
- ``patches``    the same with the patch-bearing file; peak RSS                              < 400 MB
- ``llm cold``   the README's digest with a model (fake server: every reply after L seconds, C in flight,
                 empty cache) / (H + I + ⌈39/C⌉·L + L), H the heuristic digest (``example``), I the cost of
                 ``import litellm``, at (L, C) = (0.5 s, 8) and (0.2 s, 16)                  ≤ 1.15
- ``llm cached`` the same again, every analysis and the narrative from the Redis cache / H   ≤ 1.5

Two lines without a target say where ``example``'s time goes: ``fixed``, the same command on a week the file
holds no PR of (``2026-W30``, ``--no-compare``: start, imports, settings, reading the file, an empty digest) / F,
and ``work``, ``example`` minus ``fixed`` (reading the diffs of 164 PRs and building five digests) / F.

The processes write and read bytecode as a user's install does: ``PYTHONDONTWRITEBYTECODE`` is dropped from
their environment (with it set, every run compiles the project's own modules again).
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import redis  # noqa: E402
from fakes.llm_server import FakeLLMServer  # noqa: E402

PYTHON = sys.executable
PRHUB = str(Path(PYTHON).with_name("prhub"))
REPO = "verl-project/verl"
EXAMPLE = ["digest", "--source", "jsonl:examples/verl-2026-W12-W16.jsonl.gz", "--repo", REPO, "--week", "2026-W16"]
EMPTY = [*EXAMPLE[:-1], "2026-W30", "--no-compare"]  # the same file, a week it holds no PR of
HISTORY = "jsonl:tests/data/verl-prs.jsonl.gz"
PATCHES = "jsonl:tests/data/verl-prs-with-patches.jsonl.gz"
ALL = ["--since", "2024-10-01", "--until", "2026-08-31"]
MINIMAL_TYPER = '''
import typer

app = typer.Typer(add_completion=False)


@app.command()
def hello(name: str = "world", count: int = 1) -> None:
    """Say hello."""
    typer.echo(f"hello {name}" * count)


app()
'''


@dataclass
class Run:
    seconds: float
    rss_mb: float
    cpu: float = math.inf
    """User + system CPU seconds of the process (the best run's): steadier than wall time on a busy machine."""


def run(argv: Sequence[str], env: dict[str, str], into: Run | None = None) -> Run:
    """One fresh process: its wall time, peak RSS and CPU time, folded into ``into`` (best time, largest RSS)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{err.decode(errors='replace')}")
    one = Run(elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)
    if into is None:
        return one
    return Run(min(into.seconds, one.seconds), max(into.rss_mb, one.rss_mb), min(into.cpu, one.cpu))


def verdict(ok: bool) -> str:
    return "ok" if ok else "OVER"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15", help="Redis for the LLM cache")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PRHUB_", "SLACK_", "FEISHU_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", PRHUB_CONFIG=str(ROOT / "prhub.toml"), COLUMNS="100")
    minimal = Path(os.environ.get("TMPDIR", "/tmp")) / f"prhub-bench-typer-{os.getpid()}.py"
    minimal.write_text(MINIMAL_TYPER, encoding="utf-8")
    cases = {
        "floor": [PYTHON, str(minimal), "--help"], "bare": [PYTHON, "-c", "pass"],
        "litellm": [PYTHON, "-c", "import litellm"], "help": [PRHUB, "--help"], "example": [PRHUB, *EXAMPLE],
        "empty": [PRHUB, *EMPTY],
        "week": [PRHUB, "digest", "--source", HISTORY, "--repo", REPO, "--week", "2026-W16"],
        "history": [PRHUB, "digest", "--source", HISTORY, "--repo", REPO, *ALL],
        "patches": [PRHUB, "digest", "--source", PATCHES, "--repo", REPO, *ALL],
    }
    settings = ((0.5, 8), (0.2, 16))
    best: dict[str, Run] = {}
    client = redis.Redis.from_url(args.redis)
    client.ping()  # the cached re-run is across processes: it needs the real cache
    prefixes: list[str] = []
    requests: dict[tuple[float, int], int] = {}
    try:
        with FakeLLMServer(latency_s=0.5) as slow, FakeLLMServer(latency_s=0.2) as fast:
            fakes = {0.5: slow, 0.2: fast}
            run([PRHUB, *EXAMPLE], env)  # untimed: writes the bytecode of the modules the digest imports
            # Rounds: every case once per round, so that each sees the same share of a busy machine's load.
            for _ in range(args.repeat):
                for name, argv in cases.items():
                    best[name] = run(argv, env, best.get(name))
                for latency, concurrency in settings:
                    fake = fakes[latency]
                    prefixes.append(f"bench-cli-{uuid.uuid4().hex[:8]}:")
                    llm_env = {**env, "PRHUB_LLM_MODEL": "openai/fake-model", "PRHUB_LLM_API_BASE": fake.base_url,
                               "PRHUB_LLM_API_KEY": "bench", "PRHUB_LLM_CONCURRENCY": str(concurrency),
                               "PRHUB_REDIS_URL": args.redis, "PRHUB_REDIS_KEY_PREFIX": prefixes[-1]}
                    fake.reset()
                    best[f"cold{latency}"] = run([PRHUB, *EXAMPLE], llm_env, best.get(f"cold{latency}"))
                    requests[(latency, concurrency)] = len(fake.requests)
                    fake.reset()
                    best[f"cached{latency}"] = run([PRHUB, *EXAMPLE], llm_env, best.get(f"cached{latency}"))
                    if fake.requests:
                        raise SystemExit(f"the cached re-run made {len(fake.requests)} model requests")
    finally:
        minimal.unlink()
        for prefix in prefixes:
            keys = list(client.scan_iter(match=prefix + "*"))
            if keys:
                client.delete(*keys)
        client.close()
    report(best, requests, args.repeat)


def report(best: dict[str, Run], requests: dict[tuple[float, int], int], repeat: int) -> None:
    """The lines of the module docstring."""
    floor, week, example = best["floor"], best["week"], best["example"]
    print(f"best of {repeat} rounds; floor F = minimal typer --help {floor.seconds:.3f}s (CPU {floor.cpu:.3f}s); "
          f"python -c pass {best['bare'].seconds:.3f}s; wall-time ratios, then the same ratio of CPU time")
    line("help", "prhub --help", best["help"], floor, 1.5, "x F")
    line("example", "README digest", example, floor, 3, "x F", f"; RSS {example.rss_mb:.0f} MB")
    empty = best["empty"]
    line("  fixed", "no PR in the window", empty, floor, None, "x F")
    print(f"  work      example - fixed          {(example.seconds - empty.seconds) / floor.seconds:5.2f} x F")
    history, patches = best["history"], best["patches"]
    line("history", "2,883 PRs / one week", history, week, 2.5, "x  ",
         f"; RSS {history.rss_mb:.0f} MB (< 300 {verdict(history.rss_mb < 300)}); one week "
         f"{week.seconds / floor.seconds:.2f} x F")
    line("patches", "with patches / week", patches, week, None, "x  ",
         f"; RSS {patches.rss_mb:.0f} MB (< 400 {verdict(patches.rss_mb < 400)})")
    h, i = example.seconds, max(0.0, best["litellm"].seconds - best["bare"].seconds)
    print(f"H = {h:.3f}s (the example), I = {i:.3f}s (import litellm - python -c pass)")
    for (latency, concurrency), count in requests.items():
        cold, cached = best[f"cold{latency}"], best[f"cached{latency}"]
        bound = h + i + math.ceil(39 / concurrency) * latency + latency
        print(f"llm cold    L={latency:g}s C={concurrency:<3d}         {cold.seconds / bound:5.2f} x floor "
              f"(≤ 1.15 {verdict(cold.seconds <= 1.15 * bound)}); floor H + I + ⌈39/C⌉L + L = {bound:.2f}s; "
              f"{count} requests a run")
        print(f"llm cached  L={latency:g}s C={concurrency:<3d}         {cached.seconds / h:5.2f} x H     "
              f"(≤ 1.5  {verdict(cached.seconds <= 1.5 * h)})  CPU {cached.cpu / example.cpu:.2f}")


def line(name: str, what: str, run_: Run, base: Run, target: float | None, unit: str, extra: str = "") -> None:
    """One report line: the wall-time ratio against its target, then the CPU-time ratio."""
    ratio = run_.seconds / base.seconds
    goal = f"(≤ {target:<4g} {verdict(ratio <= target)})" if target is not None else " " * 12
    print(f"{name:11s} {what:23s} {ratio:5.2f} {unit} {goal}  CPU {run_.cpu / base.cpu:.2f}{extra}")


if __name__ == "__main__":
    main()
