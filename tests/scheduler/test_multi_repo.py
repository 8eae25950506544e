"""A channel that follows several repositories (issue 29): the weekly push of verl + torchtitan + OpenRLHF is one post
(a cross-repository headline) with each repository's own digest in its thread — message for message what that
repository's own channel gets — within Slack's limits (the fake refuses any message over them); and each repository's
digest is built once for every channel that follows it."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from fakes.slack_api import BOT_TOKEN, FakeSlack

from bot.app import build_services
from bot.config import ChannelConfig, ChannelRepo, load_settings
from bot.store import RedisStore

from .conftest import EXAMPLE, MONDAY_W17, REPO, ROOT

TITAN, RLHF = "pytorch/torchtitan", "OpenRLHF/OpenRLHF"
SOURCES = {REPO: f"jsonl:{EXAMPLE}", TITAN: f"jsonl:{ROOT / 'tests' / 'data' / 'torchtitan.jsonl.gz'}",
           RLHF: f"jsonl:{ROOT / 'tests' / 'data' / 'openrlhf.jsonl.gz'}"}
SOLO = {REPO: "C0VERL", TITAN: "C0TITAN", RLHF: "C0RLHF"}


def _config(repo: str | None = None, repos: tuple[ChannelRepo, ...] = ()) -> ChannelConfig:
    return ChannelConfig(repo=repo, source=SOURCES[repo] if repo else None, repos=repos, language="zh",
                         timezone="Asia/Shanghai", push="mon 10:00")


def _posted(fake: FakeSlack, channel: str) -> list[tuple[str, Any]]:
    """What was posted to ``channel``, in order: each message's text and blocks (chart images left out: each
    channel gets its own upload)."""
    out = []
    for call in fake.of("chat.postMessage"):
        if call.args["channel"] != channel or not call.args.get("_accepted"):
            continue
        blocks = call.args.get("blocks")
        blocks = json.loads(blocks) if isinstance(blocks, str) else blocks or []
        out.append((call.args["text"], [b for b in blocks if b.get("type") != "image"]))
    return out


async def test_one_post_with_each_repository_s_own_digest_built_once(fake_slack: FakeSlack,
                                                                     store: RedisStore) -> None:
    channels = {f"slack:{c}": _config(repo) for repo, c in SOLO.items()}
    channels["slack:C0TEAM"] = _config(repos=tuple(ChannelRepo(repo=r, source=s) for r, s in SOURCES.items()))
    settings = load_settings(slack_bot_token=BOT_TOKEN, slack_api_url=fake_slack.base_url + "/api",
                             channels=channels)
    push = build_services(settings, store, clock=lambda: MONDAY_W17 + timedelta(seconds=1)).pusher()
    team = await push.run_scheduled("slack:C0TEAM")
    assert team is not None
    assert (team.status, team.week, team.prs) == ("posted", "2026-W16", 39 + 41 + 1)
    assert push.builds == 3
    for channel in SOLO.values():
        solo = await push.run_scheduled(f"slack:{channel}")
        assert solo is not None
        assert solo.status == "posted"
    assert push.builds == 3  # the three channels of one repository each took the digest already built
    posted = _posted(fake_slack, "C0TEAM")
    roots = [c for c in fake_slack.of("chat.postMessage") if c.args["channel"] == "C0TEAM" and
             not c.args.get("thread_ts")]
    assert len(roots) == 1  # one post; everything else in its thread
    headline = posted[0][0]
    assert headline.startswith("2026-W16：3 个仓库合并 81 个 PR；重点：verl #")
    assert "• pytorch/torchtitan：41 个 PR" in headline
    sections = posted[1:]
    own = [_posted(fake_slack, SOLO[repo]) for repo in SOURCES]
    assert sections == own[0] + own[1] + own[2]  # each section is that repository's own digest, in order
    assert len(fake_slack.of("chat.postMessage")) == len([c for c in fake_slack.of("chat.postMessage")
                                                          if c.args.get("_accepted")])  # none refused
    again = await push.run_scheduled("slack:C0TEAM")
    assert again is not None
    assert again.status == "already_done"


async def test_the_same_post_on_feishu(fake_feishu: Any, store: RedisStore) -> None:
    """On Feishu too: one card in the chat, each repository's cards replying to it, every card accepted by the fake
    (its schema, size and element limits) — none cut."""
    from fakes.feishu_api import APP_ID, APP_SECRET
    from pydantic import SecretStr

    team = _config(repos=tuple(ChannelRepo(repo=r, source=s) for r, s in SOURCES.items()))
    settings = load_settings(feishu_app_id=APP_ID, feishu_app_secret=SecretStr(APP_SECRET),
                             feishu_api_url=fake_feishu.base_url, channels={"feishu:oc_team": team})
    push = build_services(settings, store, clock=lambda: MONDAY_W17 + timedelta(seconds=1)).pusher()
    outcome = await push.run_scheduled("feishu:oc_team")
    assert outcome is not None
    assert (outcome.status, outcome.prs) == ("posted", 81)
    roots = [m for m in fake_feishu.messages if m.target == "oc_team"]
    assert len(roots) == 1
    assert "3 个仓库合并 81 个 PR" in json.dumps(roots[0].content, ensure_ascii=False)
    thread = [m for m in fake_feishu.messages if m.target == roots[0].message_id]
    text = json.dumps([m.content for m in thread], ensure_ascii=False)
    for repo in SOURCES:
        assert repo in text
    assert len(thread) >= 3
