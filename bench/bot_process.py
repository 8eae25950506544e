"""The Slack bot of ``tests/reliability`` in a process of its own, for the benchmarks::

    python bench/bot_process.py SLACK_API_BASE REDIS_URL

Prints the bot's URL once it serves, runs until its standard input closes, then prints one JSON line
of its store's counters (``outages``, ``busy``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.slack_api import BOT_TOKEN  # noqa: E402
from reliability.conftest import EXAMPLE, REPO, SIGNING_SECRET, Bot  # noqa: E402

from bot.config import load_settings  # noqa: E402


def main() -> None:
    slack, redis_url = sys.argv[1:3]
    settings = load_settings(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET,
                             slack_api_url=slack + "/api", default_source=f"jsonl:{EXAMPLE}", default_repo=REPO,
                             language="zh")
    with Bot(settings, redis_url) as bot:
        print(bot.url, flush=True)
        sys.stdin.read()
        store = bot.store
        counters = {"outages": store.outages, "busy": store.busy} if store is not None else {}
    print(json.dumps(counters), flush=True)


if __name__ == "__main__":
    main()
