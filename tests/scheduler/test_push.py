"""The weekly push: exactly once per (channel, repository, week) across replicas, restarts and
manual runs, against the fake Slack Web API and a real Redis."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta
from typing import Any

import pytest
from fakes.slack_api import BOT_TOKEN, FakeSlack

from bot.app import build_services
from bot.claims import full_report_key
from bot.config import ChannelConfig, Settings, load_settings
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer
from bot.digest.service import AsyncAnalyzer, DigestService
from bot.digest.usage import UsageMeter
from bot.errors import DeliveryError
from bot.models import Analysis, Digest, PullRequest
from bot.scheduler.jobs import build_scheduler
from bot.scheduler.push import Pusher
from bot.store import RedisStore

from .conftest import EXAMPLE, MONDAY_W17, REPO

CHANNEL = "slack:C0PUSH"


def settings_for(fake: FakeSlack, **extra: Any) -> Settings:
    return load_settings(
        slack_bot_token=BOT_TOKEN, slack_api_url=fake.base_url + "/api",
        channels={CHANNEL: ChannelConfig(repo=REPO, source=f"jsonl:{EXAMPLE}", language="zh",
                                         timezone="Asia/Shanghai", push="mon 10:00")},
        **extra,
    )


def roots(fake: FakeSlack, channel: str = "C0PUSH") -> list[dict[str, Any]]:
    """The top-level messages posted to ``channel`` (a digest's first message each)."""
    return [c.args for c in fake.of("chat.postMessage") if c.args["channel"] == channel and not c.args.get("thread_ts")]


def pusher(settings: Settings, store: RedisStore, now: datetime, **kwargs: Any) -> Pusher:
    return build_services(settings, store, clock=lambda: now).pusher(**kwargs)


async def test_a_fire_posts_the_week_that_ended_once(fake_slack: FakeSlack, store: RedisStore) -> None:
    settings = settings_for(fake_slack)
    outcome = await pusher(settings, store, MONDAY_W17 + timedelta(seconds=1)).run_scheduled(CHANNEL)
    assert outcome is not None
    assert (outcome.status, outcome.week, outcome.prs) == ("posted", "2026-W16", 39)
    first = roots(fake_slack)
    assert len(first) == 1
    assert "2026" in first[0]["text"]
    thread = [c for c in fake_slack.of("chat.postMessage") if c.args.get("thread_ts")]
    assert thread, "the rest of the digest continues in the first message's thread"
    late = await pusher(settings, store, MONDAY_W17 + timedelta(hours=5)).run_scheduled(CHANNEL)
    assert late is not None
    assert late.status == "already_done"
    assert len(roots(fake_slack)) == 1


async def test_pushes_and_their_digests_are_counted_in_the_metrics(fake_slack: FakeSlack, store: RedisStore) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    from bot import metrics

    def sample(name: str, **labels: str) -> float:
        for family in text_string_to_metric_families(metrics.render().decode()):
            for s in family.samples:
                if s.name == name and s.labels == labels:
                    return float(s.value)
        return 0.0

    posted, done = sample("prhub_pushes_total", outcome="posted"), sample("prhub_pushes_total", outcome="already_done")
    built = sample("prhub_digests_total", door="push", outcome="built")
    settings = settings_for(fake_slack)
    for hours in (0, 5):
        await pusher(settings, store, MONDAY_W17 + timedelta(hours=hours, seconds=1)).run_scheduled(CHANNEL)
    assert sample("prhub_pushes_total", outcome="posted") == posted + 1
    assert sample("prhub_pushes_total", outcome="already_done") == done + 1
    assert sample("prhub_digests_total", door="push", outcome="built") == built + 1


async def test_two_schedulers_sharing_redis_post_once(
    fake_slack: FakeSlack, store: RedisStore, second_store: RedisStore,
) -> None:
    """Two replicas' real AsyncIOSchedulers fire the same push at the same moment."""
    settings = settings_for(fake_slack)
    now = MONDAY_W17 + timedelta(seconds=2)
    schedulers = [build_scheduler(pusher(settings, s, now)) for s in (store, second_store)]
    for scheduler in schedulers:
        scheduler.start()
        scheduler.get_job(f"push:{CHANNEL}").modify(next_run_time=datetime.now(MONDAY_W17.tzinfo))
    for _ in range(100):  # the jobs run on this loop within a fraction of a second
        await asyncio.sleep(0.05)
        if roots(fake_slack) and all(s.get_job(f"push:{CHANNEL}").next_run_time > now for s in schedulers):
            break
    await asyncio.sleep(0.3)
    for scheduler in schedulers:
        scheduler.shutdown(wait=False)
    assert len(roots(fake_slack)) == 1


async def test_a_restart_after_a_missed_fire_catches_up_once(fake_slack: FakeSlack, store: RedisStore,
                                                             second_store: RedisStore) -> None:
    settings = settings_for(fake_slack)
    afternoon = MONDAY_W17 + timedelta(hours=5)  # the bot was down at 10:00
    outcomes = await pusher(settings, store, afternoon).catch_up()
    assert [(o.status, o.week) for o in outcomes] == [("posted", "2026-W16")]
    again = await pusher(settings, second_store, afternoon + timedelta(minutes=1)).catch_up()  # restarted again
    assert [o.status for o in again] == ["already_done"]
    assert len(roots(fake_slack)) == 1


async def test_a_miss_beyond_the_grace_is_logged_not_posted(
    fake_slack: FakeSlack, store: RedisStore, caplog: pytest.LogCaptureFixture,
) -> None:
    settings = settings_for(fake_slack, push_grace_s=3600)
    with caplog.at_level(logging.ERROR, logger="bot.scheduler.push"):
        outcomes = await pusher(settings, store, MONDAY_W17 + timedelta(hours=3)).catch_up()
    assert [(o.status, o.week) for o in outcomes] == [("missed", "2026-W16")]
    assert "MISSED weekly push" in caplog.text
    assert "prhub push --channel slack:C0PUSH --week 2026-W16" in caplog.text
    assert roots(fake_slack) == []


async def test_a_failed_post_releases_the_lock(fake_slack: FakeSlack, store: RedisStore) -> None:
    settings = settings_for(fake_slack)
    settings = settings.model_copy(update={"channels": {"slack:CGONE1": settings.channels[CHANNEL]}})
    with pytest.raises(DeliveryError, match="channel_not_found"):
        await pusher(settings, store, MONDAY_W17).push("slack:CGONE1", "2026-W16")
    fake_slack.not_member.clear()
    again = pusher(settings, store, MONDAY_W17)
    with pytest.raises(DeliveryError):  # tried again (not "busy"), refused again
        await again.push("slack:CGONE1", "2026-W16")


class HalfSlowAnalyzer:
    """Answers PRs with an even number at once; the odd ones never finish (a model still working)."""

    name = "half-slow"

    def __init__(self) -> None:
        self._inner = HeuristicAnalyzer()

    async def analyze_async(self, pr: PullRequest, context: AnalysisContext) -> Analysis | None:
        if pr.number % 2:
            await asyncio.sleep(3600)
        return self._inner.analyze(pr, context)


class SlowModel:
    """LLM parts for the digest service: the half-slow analyzer, no narrative change."""

    def __init__(self, analyzer: AsyncAnalyzer) -> None:
        self.analyzer = analyzer
        self.narrator = self
        self.meter = UsageMeter()

    async def narrate(self, digest: Digest) -> Digest:
        return digest


async def test_a_week_still_being_analysed_posts_what_is_ready(fake_slack: FakeSlack, store: RedisStore) -> None:
    settings = settings_for(fake_slack)
    services = build_services(settings, store, clock=lambda: MONDAY_W17)
    digests = DigestService(settings, llm=SlowModel(HalfSlowAnalyzer()))
    push = Pusher(settings=settings, claims=services.claims, channels=services.channels,
                  deliverers=services.deliverers, digests=digests, clock=lambda: MONDAY_W17, deadline_s=0.2)
    outcome = await push.push(CHANNEL, "2026-W16")
    odd = outcome.pending
    assert outcome.status == "posted"
    assert 0 < odd < outcome.prs
    text = " ".join(str(c.args.get("blocks", "")) for c in fake_slack.of("chat.postMessage"))
    assert "分析结果尚未生成" in text
    await digests.aclose()  # the slow analyses still running in the background


async def test_serve_runs_the_jobs_and_stops_them(fake_slack: FakeSlack, store: RedisStore) -> None:
    from bot.scheduler.jobs import scheduled

    settings = settings_for(fake_slack, push_grace_s=0)  # no catch-up post whatever today is
    services = build_services(settings, store)
    async with scheduled(services.pusher(), services.poller()) as scheduler:
        assert {job.id for job in scheduler.get_jobs()} == {f"push:{CHANNEL}", "push-retry", "push-resume", "alerts"}
        assert scheduler.running
    assert not scheduler.running


async def test_a_pushed_digest_thread_is_marked_complete(fake_slack: FakeSlack, store: RedisStore) -> None:
    """完整报告 under a pushed digest must not post the thread's messages a second time."""
    settings = settings_for(fake_slack)
    services = build_services(settings, store, clock=lambda: MONDAY_W17 + timedelta(seconds=1))
    outcome = await services.pusher().run_scheduled(CHANNEL)
    await services.aclose()
    assert outcome is not None
    assert outcome.status == "posted"
    threaded = {c.args["thread_ts"] for c in fake_slack.of("chat.postMessage") if c.args.get("thread_ts")}
    assert len(threaded) == 1  # every further message is in the first one's thread
    (root_ts,) = threaded
    assert not await store.claim(full_report_key("slack", "C0PUSH", root_ts, "2026-W16"), 60)


async def test_a_push_that_failed_at_its_fire_is_retried_within_the_grace(
    fake_slack: FakeSlack, store: RedisStore,
) -> None:
    settings = settings_for(fake_slack)
    settings = settings.model_copy(update={"channels": {"slack:C0LATE": settings.channels[CHANNEL]}})
    fake_slack.not_member.add("C0LATE")
    with pytest.raises(DeliveryError):  # the platform refused at the fire
        await pusher(settings, store, MONDAY_W17 + timedelta(seconds=1)).run_scheduled("slack:C0LATE")
    fake_slack.not_member.clear()  # it works again
    retried = await pusher(settings, store, MONDAY_W17 + timedelta(minutes=15)).catch_up(report_missed=False)
    assert [(o.week, o.status) for o in retried] == [("2026-W16", "posted")]
    again = await pusher(settings, store, MONDAY_W17 + timedelta(minutes=30)).catch_up(report_missed=False)
    assert [o.status for o in again] == ["already_done"]
    jobs = {job.id for job in build_scheduler(pusher(settings, store, MONDAY_W17)).get_jobs()}
    assert "push-retry" in jobs
