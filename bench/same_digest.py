"""Check that a speed change leaves every digest as it was: build a set of digests with ``prhub digest
--format json`` (the markdown too, for the README's), and save them or compare them with a saved set.

Run: ``.venv/bin/python bench/same_digest.py --save DIR`` on the code before the change, then
``.venv/bin/python bench/same_digest.py --against DIR`` on the code after it (a few minutes; the
``generated_at`` stamp is left out of the comparison). Exit status 1 when any digest differs; the first
differing JSON path of each is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PRHUB = str(Path(sys.executable).with_name("prhub"))
EXAMPLE = "jsonl:examples/verl-2026-W12-W16.jsonl.gz"
VERL = "jsonl:tests/data/verl-prs.jsonl.gz"
PATCHES = "jsonl:tests/data/verl-prs-with-patches.jsonl.gz"
ALL = ["--since", "2024-10-01", "--until", "2026-08-31"]
CASES: dict[str, list[str]] = {
    "example-w16": ["--source", EXAMPLE, "--repo", "verl-project/verl", "--week", "2026-W16"],
    "example-w16-en": ["--source", EXAMPLE, "--repo", "verl-project/verl", "--week", "2026-W16", "--lang", "en"],
    "verl-w16": ["--source", VERL, "--repo", "verl-project/verl", "--week", "2026-W16"],
    "verl-all": ["--source", VERL, "--repo", "verl-project/verl", *ALL],
    "patches-w28": ["--source", PATCHES, "--repo", "verl-project/verl", "--week", "2026-W28"],
    "patches-all": ["--source", PATCHES, "--repo", "verl-project/verl", *ALL],
    "torchtitan-w34": ["--source", "jsonl:tests/data/torchtitan.jsonl.gz", "--repo", "pytorch/torchtitan",
                       "--week", "2026-W34"],
    "torchtitan-all": ["--source", "jsonl:tests/data/torchtitan.jsonl.gz", "--repo", "pytorch/torchtitan", *ALL],
    "openrlhf-all": ["--source", "jsonl:tests/data/openrlhf.jsonl.gz", "--repo", "OpenRLHF/OpenRLHF",
                     "--since", "2024-06-01", "--until", "2026-08-31"],
}


def build(args: list[str], fmt: str) -> str:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("PRHUB_LLM_MODEL", None)
    done = subprocess.run([PRHUB, "digest", *args, "--format", fmt], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"prhub digest {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def digests() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, args in CASES.items():
        data = json.loads(build(args, "json"))
        data.pop("generated_at", None)
        out[name] = data
        print(f"built {name}", file=sys.stderr)
    markdown = build(CASES["example-w16"], "markdown")
    out["example-w16.md"] = [line for line in markdown.splitlines() if "生成" not in line and "generated" not in line]
    return out


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    if type(a) is not type(b):
        return f"{path or '/'}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}/{key}: only on one side"
            found = first_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{path}: {a!r:.120} vs {b!r:.120}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path, help="write the digests into this folder")
    group.add_argument("--against", type=Path, help="compare the digests with those saved in this folder")
    args = parser.parse_args()
    now = digests()
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for name, data in now.items():
            (args.save / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True))
        print(f"saved {len(now)} digests in {args.save}")
        return 0
    failed = 0
    for name, data in now.items():
        saved = json.loads((args.against / f"{name}.json").read_text())
        found = first_difference(saved, data)
        if found:
            failed += 1
            print(f"DIFFERS {name}: {found}")
        else:
            print(f"same    {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
