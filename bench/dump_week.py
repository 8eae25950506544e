"""Print one ISO week of merged PRs, with their diffs, for a person who judges them by hand.

Run: ``python bench/dump_week.py DATA.jsonl.gz 2026-W16 --tz Asia/Shanghai > week.txt``

``DATA`` is a snapshot file (``tests/data/*.jsonl.gz`` or ``../shared/data/``): one PR record a line,
``merged_at`` an ISO 8601 instant. The week is half-open ``[Monday 00:00, next Monday 00:00)`` in ``--tz``.
Each PR is printed with its title, author, size, description (cut at ``--body-chars``), its files and
their unified diffs (each file cut at ``--file-chars``, a PR at ``--pr-chars``; what was cut is said),
in merge order; the last line gives the count. Standard library only, so a judge needs no install and
sees nothing of the project's own reading of the PRs (see ``tests/data/judged/RUBRIC.md``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo


def week_bounds(week: str, tz: str) -> tuple[datetime, datetime]:
    """``2026-W16`` → the aware (start, end) of that ISO week in ``tz``; ValueError on a malformed week."""
    year, _, number = week.partition("-W")
    monday = date.fromisocalendar(int(year), int(number), 1)
    start = datetime(monday.year, monday.month, monday.day, tzinfo=ZoneInfo(tz))
    return start, start + timedelta(days=7)


def records(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        return [json.loads(line) for line in handle if line.strip()]


def render(pr: dict, *, body_chars: int, file_chars: int, pr_chars: int) -> str:
    out = [f"=== PR #{pr['number']}: {pr['title']}",
           f"author {pr['author']} · merged {pr['merged_at']} · +{pr['additions']} −{pr['deletions']} "
           f"in {pr['changed_files']} files"]
    body = (pr.get("body") or "").strip()
    if len(body) > body_chars:
        body = body[:body_chars] + f"\n[… description cut: {len(body) - body_chars} more characters]"
    out += ["--- description", body or "(empty)", "--- files"]
    for f in pr["files"]:
        moved = f" (from {f['previous_path']})" if f.get("previous_path") else ""
        out.append(f"  {f['status']:9s} +{f['additions']} −{f['deletions']}  {f['path']}{moved}")
    out.append("--- diff")
    used = 0
    for f in pr["files"]:
        patch = f.get("patch")
        if patch is None:
            out.append(f"## {f['path']}: no patch (binary or too large)")
            continue
        if used >= pr_chars:
            out.append(f"## {f['path']}: diff left out (PR over {pr_chars} characters)")
            continue
        cut = min(file_chars, pr_chars - used)
        text = patch if len(patch) <= cut else patch[:cut] + f"\n[… diff cut: {len(patch) - cut} more characters]"
        used += len(text)
        out += [f"## {f['path']}", text]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("week", help="ISO week, e.g. 2026-W16")
    parser.add_argument("--tz", default="Asia/Shanghai")
    parser.add_argument("--body-chars", type=int, default=3000)
    parser.add_argument("--file-chars", type=int, default=6000)
    parser.add_argument("--pr-chars", type=int, default=24000)
    args = parser.parse_args(argv)
    start, end = week_bounds(args.week, args.tz)
    prs = [r for r in records(args.data) if start <= datetime.fromisoformat(r["merged_at"]) < end]
    prs.sort(key=lambda r: datetime.fromisoformat(r["merged_at"]))
    repo = prs[0]["repo"] if prs else "?"
    print(f"# {repo} {args.week} ({args.tz}): {len(prs)} merged PRs\n")
    for pr in prs:
        print(render(pr, body_chars=args.body_chars, file_chars=args.file_chars, pr_chars=args.pr_chars))
    print(f"# end: {len(prs)} PRs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
