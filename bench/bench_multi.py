"""Push to many channels over many repositories (issue 29): each repository's digest is built once per window and
language, however many channels follow it.

Run: ``.venv/bin/python bench/bench_multi.py [--channels 100] [--repos 10] [--week 2026-W16] [--redis URL]``
(Redis must answer; default ``redis://127.0.0.1:6379/15``, under a unique key prefix deleted at the end).

The repositories: the seven of ``tests/data`` (verl, torchtitan, OpenRLHF, axolotl, DeepSpeed, diffusers,
lm-evaluation-harness) and, past seven, copies of verl under other names — each served by its own local fake GitHub
(:class:`fakes.github_server.MultiGitHub`, its weeks 12 before the pushed one and that week, with a token: GraphQL
search, file lists, releases and tags, the week-over-week counts and history), pushed to a local fake Slack. Three
rounds in one run, each with fresh services and a fresh store:

1. **one channel** — the baseline: one push of the first repository;
2. **N channels, built once** — every channel (channel *i* follows repository *i mod R*) pushed at once, as the
   scheduler fires them;
3. **N channels, built per channel** — the same with the build-once cache turned off (what each channel cost before).

For each: digest builds, GitHub API requests, Slack messages and wall time, and the ratio of rounds 2 and 3 to round 1.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import redis.asyncio as aioredis  # noqa: E402
from fakes.github_server import FakeGitHub, MultiGitHub  # noqa: E402
from fakes.github_server import serve as serve_github  # noqa: E402
from fakes.slack_api import BOT_TOKEN, FakeSlack  # noqa: E402
from fakes.slack_api import serve as serve_slack  # noqa: E402

from bot.app import build_services  # noqa: E402
from bot.config import ChannelConfig, Settings, load_settings  # noqa: E402
from bot.digest.window import parse_week  # noqa: E402
from bot.models import PullRequest  # noqa: E402
from bot.scheduler import push as push_module  # noqa: E402
from bot.store import RedisStore  # noqa: E402

FILES = ["verl-prs", "torchtitan", "openrlhf", "axolotl", "deepspeed", "diffusers", "lm-evaluation-harness"]
TOKEN = "bench-token"
ZONE = "Asia/Shanghai"


def _records(name: str, start: Any, end: Any) -> list[PullRequest]:
    out = []
    with gzip.open(ROOT / "tests" / "data" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            pr = PullRequest.model_validate(json.loads(line))
            if start <= pr.merged_at < end:
                out.append(pr)
    return out


def repositories(count: int, week: str) -> list[list[PullRequest]]:
    """``count`` repositories' PRs of the 12 weeks before ``week`` and ``week`` (past seven: verl, renamed)."""
    window = parse_week(week, tz=ZONE, now=datetime.now(UTC))
    start, end = window.start - timedelta(weeks=12), window.end
    real = [_records(name, start, end) for name in FILES]
    out = real[:count]
    for n in range(len(out), count):
        out.append([pr.model_copy(update={"repo": f"mirror-{n}/verl"}) for pr in real[0]])
    return out


def settings_for(github: str, slack: str, repos: list[str], channels: int) -> Settings:
    bound = {f"slack:C{n:04d}": ChannelConfig(repo=repos[n % len(repos)], source="github", language="zh",
                                              timezone=ZONE, push="mon 10:00") for n in range(channels)}
    return load_settings(slack_bot_token=BOT_TOKEN, slack_api_url=slack + "/api", github_token=TOKEN,
                         github_api_url=github, channels=bound)


async def round_(settings: Settings, redis_url: str, channels: list[str], week: str, github: MultiGitHub,
                 slack: FakeSlack, *, cached: bool) -> dict[str, float]:
    """One round: fresh services on a fresh key prefix; every channel pushed at once."""
    client = aioredis.Redis.from_url(redis_url)
    prefix = f"bench-multi-{uuid.uuid4().hex[:10]}:"
    kept = push_module.BUILT_KEPT
    push_module.BUILT_KEPT = kept if cached else 0
    requests_before, messages_before = len(github.log), len(slack.of("chat.postMessage"))
    try:
        services = build_services(settings, RedisStore(client, key_prefix=prefix))
        pusher = services.pusher()
        started = time.perf_counter()
        outcomes = await asyncio.gather(*(pusher.push(channel, week) for channel in channels))
        wall = time.perf_counter() - started
        assert all(o.status == "posted" for o in outcomes), [o.status for o in outcomes]
        await services.aclose()
    finally:
        push_module.BUILT_KEPT = kept
        keys = [key async for key in client.scan_iter(match=prefix + "*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
    return {"channels": len(channels), "builds": pusher.builds, "requests": len(github.log) - requests_before,
            "messages": len(slack.of("chat.postMessage")) - messages_before, "wall_s": wall}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--channels", type=int, default=100)
    parser.add_argument("--repos", type=int, default=10)
    parser.add_argument("--week", default="2026-W16")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15")
    args = parser.parse_args()
    data = repositories(args.repos, args.week)
    names = [prs[0].repo for prs in data]
    github = MultiGitHub([FakeGitHub(prs, token=TOKEN) for prs in data])
    slack = FakeSlack()
    with serve_github(github) as github_url, serve_slack(slack):
        settings = settings_for(github_url, slack.base_url, names, args.channels)
        everyone = sorted(settings.channels)
        rows = [("one channel", await round_(settings, args.redis, everyone[:1], args.week, github, slack,
                                              cached=True)),
                (f"{args.channels} channels, built once", await round_(settings, args.redis, everyone, args.week,
                                                                       github, slack, cached=True)),
                (f"{args.channels} channels, built per channel", await round_(settings, args.redis, everyone,
                                                                              args.week, github, slack,
                                                                              cached=False))]
    base = rows[0][1]
    print(f"{args.channels} channels over {args.repos} repositories ({', '.join(names)}), {args.week}")
    print(f"{'round':34} {'builds':>7} {'GitHub req':>10} {'Slack msg':>9} {'wall s':>8}   ratios to one channel "
          "(builds, requests, wall)")
    for label, row in rows:
        ratio = (f"{row['builds'] / base['builds']:.1f}, {row['requests'] / base['requests']:.1f}, "
                 f"{row['wall_s'] / base['wall_s']:.1f}")
        print(f"{label:34} {row['builds']:>7.0f} {row['requests']:>10.0f} {row['messages']:>9.0f} "
              f"{row['wall_s']:>8.2f}   {ratio}")


if __name__ == "__main__":
    asyncio.run(main())
