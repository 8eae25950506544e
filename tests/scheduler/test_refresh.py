"""A push posted with pending analyses is filled in when they land: the lead card edited in place (Slack
``chat.update``, Feishu's message patch) and the thread's follow-ups edited — against the fake APIs."""

from __future__ import annotations

import asyncio
import json

from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI
from fakes.slack_api import BOT_TOKEN, FakeSlack
from pydantic import SecretStr

from bot.app import build_services
from bot.config import ChannelConfig, Settings, load_settings
from bot.delivery.pacing import Pacer
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer
from bot.digest.service import DigestService
from bot.digest.usage import UsageMeter
from bot.models import Analysis, Digest, PullRequest
from bot.scheduler.push import Pusher
from bot.scheduler.refresh import PendingRefresher
from bot.store import RedisStore

from .conftest import EXAMPLE, MONDAY_W17, REPO

PENDING = "分析结果尚未生成"
FAST = {"slack": ((1, 0.02),), "feishu": ((1, 0.02),)}


class LateAnalyzer:
    """Answers PRs with an even number at once; the odd ones once ``landed`` is set (the workers' jobs)."""

    name = "late"

    def __init__(self) -> None:
        self._inner = HeuristicAnalyzer()
        self.landed = asyncio.Event()

    async def analyze_async(self, pr: PullRequest, context: AnalysisContext) -> Analysis | None:
        if pr.number % 2:
            await self.landed.wait()
        return self._inner.analyze(pr, context)


class Model:
    def __init__(self, analyzer: LateAnalyzer) -> None:
        self.analyzer = analyzer
        self.narrator = self
        self.meter = UsageMeter()

    async def narrate(self, digest: Digest) -> Digest:
        return digest


def settings_for(channel: str, fake_slack: FakeSlack, fake_feishu: FakeFeishuAPI) -> Settings:
    return load_settings(
        slack_bot_token=BOT_TOKEN, slack_api_url=fake_slack.base_url + "/api", feishu_app_id=APP_ID,
        feishu_app_secret=SecretStr(APP_SECRET), feishu_api_url=fake_feishu.base_url, charts=False,
        channels={channel: ChannelConfig(repo=REPO, source=f"jsonl:{EXAMPLE}", language="zh",
                                         timezone="Asia/Shanghai", push="mon 10:00")})


async def pushed(settings: Settings, store: RedisStore, channel: str,
                 wait_s: float = 30) -> tuple[DigestService, PendingRefresher, LateAnalyzer]:
    services = build_services(settings, store, clock=lambda: MONDAY_W17, pacer=Pacer(FAST))
    analyzer = LateAnalyzer()
    digests = DigestService(settings, llm=Model(analyzer))
    refresher = PendingRefresher(digests, wait_s=wait_s)
    push = Pusher(settings=settings, claims=services.claims, channels=services.channels,
                  deliverers=services.deliverers, digests=digests, clock=lambda: MONDAY_W17, deadline_s=0.3,
                  refresher=refresher)
    outcome = await push.push(channel, "2026-W16")
    assert outcome.status == "posted"
    assert 0 < outcome.pending < outcome.prs
    return digests, refresher, analyzer


async def test_slack_the_lead_card_and_its_thread_are_edited_when_the_analyses_land(
        fake_slack: FakeSlack, fake_feishu: FakeFeishuAPI, store: RedisStore) -> None:
    settings = settings_for("slack:C0PUSH", fake_slack, fake_feishu)
    _, refresher, analyzer = await pushed(settings, store, "slack:C0PUSH")
    posts = [c.args for c in fake_slack.of("chat.postMessage") if c.args["channel"] == "C0PUSH"]
    assert PENDING in json.dumps([p.get("blocks") for p in posts], ensure_ascii=False)
    assert fake_slack.of("chat.update") == []
    analyzer.landed.set()
    assert await refresher.idle() == [True]
    updates = [c.args for c in fake_slack.of("chat.update")]
    root = posts[0]["_ts"]
    assert updates[0]["ts"] == root  # the lead card, in place
    thread = [p["_ts"] for p in posts]
    assert [u["ts"] for u in updates] == sorted({u["ts"] for u in updates}, key=thread.index)  # its thread, in order
    assert PENDING not in json.dumps([u.get("blocks") for u in updates], ensure_ascii=False)
    # nothing new at the top of the channel
    assert len([c for c in fake_slack.of("chat.postMessage") if not c.args.get("thread_ts")]) == 1


async def test_feishu_the_card_is_patched_in_place(
        fake_slack: FakeSlack, fake_feishu: FakeFeishuAPI, store: RedisStore) -> None:
    settings = settings_for("feishu:oc_push", fake_slack, fake_feishu)
    _, refresher, analyzer = await pushed(settings, store, "feishu:oc_push")
    first = fake_feishu.messages[0]
    assert first.content["config"]["update_multi"] is True
    analyzer.landed.set()
    assert await refresher.idle() == [True]
    patched = [message_id for message_id, _ in fake_feishu.patches]
    assert patched[0] == first.message_id
    assert PENDING not in json.dumps([card for _, card in fake_feishu.patches], ensure_ascii=False)


async def test_nothing_landed_leaves_the_post_as_it_is(
        fake_slack: FakeSlack, fake_feishu: FakeFeishuAPI, store: RedisStore) -> None:
    settings = settings_for("slack:C0PUSH", fake_slack, fake_feishu)
    digests, refresher, _ = await pushed(settings, store, "slack:C0PUSH", wait_s=0.2)
    assert await refresher.idle() == [False]
    assert fake_slack.of("chat.update") == []
    await digests.aclose()
