"""The weekly personal digest ("my area this week") on a real Redis, to the fake Slack and Feishu APIs.

A person subscribed to ``path:verl/trainer/** -label:ci`` in their DM opts in (``每周给我发我的周报``); the job
sends, at ``mon 09:00`` in their time zone (Slack ``users.info``), verl 2026-W16's PRs that touch those paths
and don't carry ``ci`` — checked against a set computed from the file — with the reading budget summed from
their analyses; once, across runs and restarts. ``我的周报`` shows it now; ``不要再发我的周报`` stops it; a
Feishu group is asked to say it in the p2p chat.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI
from fakes.slack_api import BOT_TOKEN, FakeSlack
from pydantic import SecretStr

from bot.app import Services, build_services
from bot.cards.personal import budget_line
from bot.config import Settings
from bot.delivery.pacing import Pacer
from bot.digest.personal import Budget
from bot.digest.service import build_digest
from bot.digest.window import week_window
from bot.handlers.core import Conversation
from bot.handlers.intents import parse_intent
from bot.replies import MyDigestReply, PersonalDigestReply
from bot.sources.jsonl import SnapshotSource
from bot.store import RedisStore

from .conftest import EXAMPLE, REPO

BERLIN = ZoneInfo("Europe/Berlin")
SHANGHAI = ZoneInfo("Asia/Shanghai")
DANA = Conversation("slack", "D0DANA", "U0DANA")


@pytest.fixture
def settings(verl_settings: Settings, fake_slack: FakeSlack, fake_feishu: FakeFeishuAPI) -> Settings:
    return verl_settings.model_copy(update={
        "slack_bot_token": SecretStr(BOT_TOKEN), "slack_api_url": fake_slack.base_url + "/api",
        "feishu_app_id": APP_ID, "feishu_app_secret": SecretStr(APP_SECRET), "feishu_api_url": fake_feishu.base_url,
        "default_source": f"jsonl:{EXAMPLE}", "default_repo": REPO,
    })


def _services(settings: Settings, store: RedisStore, clock: list[datetime]) -> Services:
    return build_services(settings, store, clock=lambda: clock[0], pacer=Pacer({"slack": ((1, 0.01),)}))


def _trainer_without_ci(settings: Settings) -> tuple[set[int], Budget]:
    """Independently of the filter code: the PRs of the file with a file (or old path) under verl/trainer/ and
    without the digest label ci, and the budget summed from the week digest's analyses of them."""
    touching = set()
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if any(p.startswith("verl/trainer/") for f in record["files"] for p in (f["path"], f.get("previous_path"))
               if p):
            touching.add(record["number"])
    window = week_window(2026, 16, "Asia/Shanghai")
    digest = build_digest(SnapshotSource(EXAMPLE).merged_prs(REPO, window), repo=REPO, window=window,
                          settings=settings, now=datetime(2026, 4, 20, tzinfo=SHANGHAI))
    mine = {item.number for item in digest.prs if "ci" not in item.labels} & touching
    budget = Budget()
    for number in mine:
        analysis = digest.pr(number).analysis
        assert analysis is not None
        rec = analysis.recommendation
        if rec.level == "close_read":
            budget = budget.model_copy(update={"close_reads": budget.close_reads + 1,
                                               "close_read_minutes": budget.close_read_minutes + rec.minutes})
        elif rec.level == "skim":
            budget = budget.model_copy(update={"skims": budget.skims + 1,
                                               "skim_minutes": budget.skim_minutes + rec.minutes})
        else:
            budget = budget.model_copy(update={"skips": budget.skips + 1})
    return mine, budget


def _numbers(blocks: object) -> list[int]:
    return [int(n) for n in re.findall(r"\|#(\d+) ", json.dumps(blocks, ensure_ascii=False))]


async def test_my_area_this_week_goes_out_once_in_the_person_s_zone(
    settings: Settings, store: RedisStore, fake_slack: FakeSlack,
) -> None:
    fake_slack.users["U0DANA"] = {"tz": "Europe/Berlin"}
    clock = [datetime(2026, 4, 18, 12, 0, tzinfo=SHANGHAI)]
    core = _services(settings, store, clock).core
    assert (await core.answer(parse_intent("订阅 path:verl/trainer/** -label:ci"), DANA)).change == "subscribed"
    on = await core.answer(parse_intent("每周给我发我的周报"), DANA)
    assert isinstance(on, PersonalDigestReply)
    assert (on.change, on.when) == ("on", "mon 09:00")
    assert [s.filter.text() for s in on.filters] == ["path:verl/trainer/** -label:ci"]

    clock[0] = datetime(2026, 4, 20, 9, 5, tzinfo=SHANGHAI)  # Monday 09:05 in Shanghai is 03:05 in Berlin
    assert [o.status for o in await _services(settings, store, clock).personal_job().run()] == []
    assert fake_slack.of("chat.postMessage") == []
    clock[0] = datetime(2026, 4, 20, 9, 5, tzinfo=BERLIN)  # her Monday morning
    [outcome] = await _services(settings, store, clock).personal_job().run()
    assert (outcome.status, outcome.week) == ("sent", "2026-W16")
    for later in (10, 40):  # the next runs, another replica after a restart: nothing twice
        clock[0] = datetime(2026, 4, 20, 9, later, tzinfo=BERLIN)
        assert [o.status for o in await _services(settings, store, clock).personal_job().run()] == ["already_done"]

    posts = fake_slack.of("chat.postMessage")
    assert {p.args["channel"] for p in posts} == {"D0DANA"}
    assert not [p for p in posts[1:] if p.args.get("thread_ts") != posts[0].args["ts"]]  # one message (+ thread)
    expected, budget = _trainer_without_ci(settings)
    assert len(expected) >= 5
    listed = [n for p in posts for n in _numbers(p.args["blocks"])]
    assert sorted(listed) == sorted(expected)  # exactly those PRs, each once
    text = json.dumps([p.args["blocks"] for p in posts], ensure_ascii=False)
    assert budget_line(budget, "zh") in text  # the budget, summed from their analyses
    assert "我的周报 · 2026 第 16 周 · 04-13 至 04-19" in text
    assert "路径 verl/trainer/**，排除 ci" in text


async def test_show_now_stop_and_a_feishu_group(settings: Settings, store: RedisStore, fake_slack: FakeSlack,
                                                fake_feishu: FakeFeishuAPI) -> None:
    clock = [datetime(2026, 4, 22, 10, 0, tzinfo=SHANGHAI)]
    services = _services(settings, store, clock)
    core = services.core
    await core.answer(parse_intent("订阅 npu"), DANA)
    await core.answer(parse_intent("subscribe path:verl/trainer/** -label:ci"), DANA)
    shown = await core.answer(parse_intent("我的周报"), DANA)
    assert isinstance(shown, MyDigestReply)
    [mine] = shown.digests
    assert mine.window.name == "2026-W16"
    trainer, _ = _trainer_without_ci(settings)
    npu = {item.pr.number for item in mine.prs if "npu" in item.pr.labels}
    assert {item.pr.number for item in mine.prs} == trainer | npu  # any of her two filters
    assert len(services.slack.reply_messages(shown)) >= 1  # type: ignore[union-attr]

    assert (await core.answer(parse_intent("send me my weekly digest"), DANA)).change == "on"  # type: ignore[union-attr]
    assert (await core.answer(parse_intent("每周给我发我的周报"), DANA)).change == "already_on"  # type: ignore[union-attr]
    off = await core.answer(parse_intent("不要再发我的周报了"), DANA)
    assert isinstance(off, PersonalDigestReply)
    assert off.change == "off"
    clock[0] = datetime(2026, 4, 27, 9, 30, tzinfo=SHANGHAI)
    assert await _services(settings, store, clock).personal_job().run() == []
    assert fake_slack.of("chat.postMessage") == []

    group = await core.answer(parse_intent("每周给我发我的周报"), Conversation("feishu", "oc_group", "ou_erin"))
    assert isinstance(group, PersonalDigestReply)
    assert group.change == "refused"
    assert "私聊" in group.message
    p2p = Conversation("feishu", "oc_erin_p2p", "ou_erin", direct=True)
    assert (await core.answer(parse_intent("每周给我发我的周报"), p2p)).change == "on"  # type: ignore[union-attr]
    clock[0] = datetime(2026, 4, 27, 9, 30, tzinfo=SHANGHAI)  # Feishu gives no zone: the channel's (Shanghai)
    [sent] = await _services(settings, store, clock).personal_job().run()
    assert (sent.status, sent.week, sent.person) == ("sent", "2026-W17", "feishu:ou_erin")
    assert [m.target for m in fake_feishu.messages][:1] == ["oc_erin_p2p"]
    assert "我的周报" in fake_feishu.messages[0].content["header"]["title"]["content"]
