"""Issue 30: a rate-limited GitHub source keeps its own askers waiting (and tells them so), never another
channel's — the real bolt app over HTTP, a private Redis, and the fake GitHub API answering rate limits."""

from __future__ import annotations

import json
import time

import pytest
from fakes.github_server import FakeGitHub, serve
from fakes.slack_api import FakeSlack

from bot.config import ChannelConfig
from bot.models import PullRequest

from .conftest import REPO, Bot, PrivateRedis, bot_settings
from .test_chat_faults import answers, mention, wait_until

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def test_a_rate_limited_source_delays_no_other_channel_and_tells_its_askers(
        fake_slack: FakeSlack, private_redis: PrivateRedis, all_prs: list[PullRequest]) -> None:
    fake = FakeGitHub(all_prs)
    with serve(fake) as url:
        settings = bot_settings(fake_slack, github_token=fake.token, github_api_url=url,
                                channels={"slack:C0GH": ChannelConfig(repo=REPO, source="github")})
        with Bot(settings, private_redis.url) as bot:
            fake.limit_until(time.time() + 5)  # every GitHub read now waits ~6 s
            for n in range(8):  # more waiting reads than asyncio's default thread pool has threads
                mention(bot, f"EvGH{n}", "C0GH", f"1713800000.{n:06d}", "PR #6046 值得读吗")
            time.sleep(0.3)
            started = time.monotonic()
            mention(bot, "EvSnap", "C0SNAP", "1713800001.000001", "PR #6046 值得读吗")  # the snapshot channel
            assert wait_until(lambda: answers(fake_slack, "C0SNAP", "1713800001.000001"), timeout=20)
            snapshot_s = time.monotonic() - started
            assert snapshot_s < 2.5, snapshot_s  # not behind GitHub's ~6 s wait
            told = [c.args for c in fake_slack.of("chat.postEphemeral") if c.args.get("channel") == "C0GH"
                    and "GitHub 限流中" in str(c.args.get("text", ""))]
            assert wait_until(lambda: len([c for c in fake_slack.of("chat.postEphemeral")
                                           if "GitHub 限流中，约 1 分钟后回答" in str(c.args.get("text", ""))]) >= 8,
                              timeout=15), told
            for n in range(8):  # and each GitHub question is answered once the limit is over
                assert wait_until(lambda n=n: answers(fake_slack, "C0GH", f"1713800000.{n:06d}",
                                                      ("chat.postMessage",)), timeout=30), n
            said = json.dumps(answers(fake_slack, "C0GH", "1713800000.000000", ("chat.postMessage",)),
                              ensure_ascii=False)
            assert "6046" in said
