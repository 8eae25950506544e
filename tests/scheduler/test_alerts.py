"""Alerts on a real Redis through the poll job, to the fake Slack and Feishu APIs, with an injected clock.

- a burst of 30 matching PRs (among others that do not match: excluded labels, a bot, another label)
  within a minute, to a subscriber with a 10-minute batch: ONE message listing exactly those 30 — with
  the bot restarted between polls, and killed in the middle of a send (once before the platform took
  the message, once after): nothing lost, nothing repeated;
- quiet hours in the person's time zone (Slack ``users.info``), held until morning, then one message;
- the real 2026-W16 PRs of verl arriving poll by poll: each subscriber gets exactly the matching PRs,
  once, paced per chat; after unsubscribing, none;
- a refused send is retried by the next poll; a PR alerted before batching is not alerted again.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest
from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI
from fakes.slack_api import BOT_TOKEN, FakeSlack
from pydantic import SecretStr

from bot.app import Services, build_services
from bot.claims import alert_keys
from bot.config import Settings
from bot.delivery import Message, Place, Posted
from bot.delivery.pacing import Pacer
from bot.digest.labels import Labeler
from bot.digest.window import week_window
from bot.filters import parse_filter
from bot.handlers.core import Conversation
from bot.handlers.intents import SubscribeIntent, UnsubscribeIntent, parse_intent
from bot.models import FileChange, PullRequest, Window
from bot.scheduler.alerts import AlertPoller, queue_key
from bot.sources.jsonl import SnapshotSource
from bot.store import RedisStore
from bot.subscriptions import Subscriber, Subscriptions, known_labels

from .conftest import EXAMPLE, REPO, ROOT, SHANGHAI

ALICE = Conversation("slack", "D0ALICE", "U0ALICE")  # Alice's DM with the bot: npu
BOB = Conversation("feishu", "oc_bob_p2p", "ou_bob", direct=True)  # Bob's Feishu p2p chat: fully_async
CI_CHANNEL = Conversation("slack", "C0CI", "U0CAROL")  # a channel: ci
CAROL = Conversation("slack", "U0CAROL", "U0CAROL")  # Carol by user id (a DM): npu and fully_async
FAST = {"slack": ((1, 0.02),), "feishu": ((1, 0.02),)}
"""One message per 20 ms to a chat: paced as the platforms are, without their real seconds."""


class ListedSource:
    """PR records a source lists only once the clock passed their merge by ``lag`` (a source that learns
    of merges late), so they arrive poll by poll."""

    def __init__(self, prs: Sequence[PullRequest], clock: list[datetime], lag: timedelta = timedelta(0)) -> None:
        self._prs = list(prs)
        self._clock = clock
        self._lag = lag
        self.asked: list[Window] = []

    def merged_prs(self, repo: str, window: Window) -> list[PullRequest]:
        self.asked.append(window)
        visible = self._clock[0] - self._lag
        return sorted((p for p in self._prs if window.start <= p.merged_at < window.end and p.merged_at <= visible),
                      key=lambda p: (p.merged_at, p.number))

    def pull_request(self, repo: str, number: int) -> PullRequest:
        return next(p for p in self._prs if p.number == number)

    def repos(self) -> list[str]:
        return [REPO]


@pytest.fixture
def settings(verl_settings: Settings, fake_slack: FakeSlack, fake_feishu: FakeFeishuAPI) -> Settings:
    return verl_settings.model_copy(update={
        "slack_bot_token": SecretStr(BOT_TOKEN), "slack_api_url": fake_slack.base_url + "/api",
        "feishu_app_id": APP_ID, "feishu_app_secret": SecretStr(APP_SECRET), "feishu_api_url": fake_feishu.base_url,
        "default_source": f"jsonl:{EXAMPLE}", "default_repo": REPO, "alerts_overlap_s": 3600,
    })


class RecordingPacer(Pacer):
    """The pacer, noting which chat each message waited for."""

    def __init__(self) -> None:
        super().__init__(FAST)
        self.waits: Counter[tuple[str, str]] = Counter()

    async def wait(self, platform: str, conversation: str) -> None:
        self.waits[(platform, conversation)] += 1
        await super().wait(platform, conversation)


def slack_messages(fake: FakeSlack, channel: str) -> list[list[int]]:
    """The PR numbers of each message posted to ``channel`` (its thread's continuation counted with it)."""
    out: list[list[int]] = []
    for call in fake.of("chat.postMessage"):
        if call.args["channel"] != channel:
            continue
        numbers = [int(n) for n in re.findall(r"\|#(\d+) ", str(call.args.get("blocks")))]
        if call.args.get("thread_ts"):
            out[-1] += numbers
        else:
            out.append(numbers)
    return out


def feishu_messages(fake: FakeFeishuAPI, chat: str) -> list[list[int]]:
    return [[int(n) for n in re.findall(r"\[#(\d+) ", str(sent.content))] for sent in fake.messages
            if sent.target == chat]


def _made(number: int, merged_at: datetime, labels: tuple[str, ...], author: str = "contributor-1") -> PullRequest:
    """A PR record made here (the shared data is pseudonymised: no bots in it)."""
    return PullRequest(repo=REPO, number=number, title=f"change {number} of the kernel", author=author,
                       merged_at=merged_at, url=f"https://github.com/{REPO}/pull/{number}", labels=labels,
                       additions=40, deletions=5, changed_files=1,
                       files=(FileChange(path=f"src/kernels/k{number}.py", status="modified", additions=40,
                                         deletions=5),))


def _burst(start: datetime) -> tuple[list[PullRequest], set[int]]:
    """45 PRs merged within one minute: 30 carry npu; 5 npu+ci, 5 npu by dependabot[bot], 5 doc do not match."""
    prs, matching = [], set()
    for i in range(45):
        number = 90001 + i
        labels: tuple[str, ...] = ("npu",) if i < 30 else ("npu", "ci") if i < 35 else ("npu",) if i < 40 else ("doc",)
        author = "dependabot[bot]" if 35 <= i < 40 else f"contributor-{i}"
        prs.append(_made(number, start + timedelta(seconds=i), labels, author))
        if i < 30:
            matching.add(number)
    return prs, matching


def _services(settings: Settings, store: RedisStore, source: Any, clock: list[datetime],
              pacer: Pacer | None = None) -> Services:
    """A fresh process: only Redis remembers (the bot restarted)."""
    return build_services(settings, store, open_source=lambda spec: source, clock=lambda: clock[0],
                          pacer=pacer or Pacer(FAST))


async def test_a_burst_of_30_prs_is_one_message_across_restarts(settings: Settings, store: RedisStore,
                                                                fake_slack: FakeSlack) -> None:
    t0 = datetime(2026, 4, 15, 10, 0, tzinfo=SHANGHAI)
    clock = [t0]
    prs, matching = _burst(t0 + timedelta(minutes=1))
    source = ListedSource(prs, clock)
    channel = Conversation("slack", "C0BURST", "U0LEAD")
    assert (await _services(settings, store, source, clock).core.answer(parse_intent("订阅 npu -ci"),
                                                                        channel)).change == "subscribed"
    sent: list[int] = []
    for minutes in (0, 5, 10, 15, 20, 25):  # a poll every 5 minutes, each by a freshly started bot
        clock[0] = t0 + timedelta(minutes=minutes)
        report = await _services(settings, store, source, clock).poller().poll()
        sent += [n for who, _, n in report.sent if who == "slack:C0BURST"]
        if minutes == 5:
            assert report.queued == 30  # found, held for the batch window
            assert not report.sent
    [listed] = slack_messages(fake_slack, "C0BURST")
    assert sorted(listed) == sorted(matching)  # all 30, none of the 15 that do not match
    assert sorted(sent) == sorted(matching)
    [message] = fake_slack.of("chat.postMessage")  # one message: nothing continued in a thread either
    assert message.args["channel"] == "C0BURST"
    assert "30 个 PR 合并 · verl-project/verl" in str(message.args["blocks"])


class Crashing:
    """A deliverer that dies (the process is killed) before or after the platform took the message."""

    def __init__(self, inner: Any, *, after: bool) -> None:
        self._inner = inner
        self._after = after
        self.platform = inner.platform

    def alert_messages(self, batch: Any) -> list[Message]:
        return list(self._inner.alert_messages(batch))

    async def person_timezone(self, user: str) -> str | None:
        return await self._inner.person_timezone(user)

    async def post(self, place: Place, messages: Sequence[Message], *, key: str = "") -> Posted:
        if self._after:
            await self._inner.post(place, messages, key=key)
        raise asyncio.CancelledError  # what the process sees when it is stopped in the middle


@pytest.mark.parametrize("after", [False, True], ids=["killed-before-the-send", "killed-after-the-send"])
async def test_a_kill_in_the_middle_of_a_send_loses_none_and_repeats_none(
    settings: Settings, store: RedisStore, fake_feishu: FakeFeishuAPI, after: bool,
) -> None:
    t0 = datetime(2026, 4, 15, 10, 0, tzinfo=SHANGHAI)
    clock = [t0]
    prs, matching = _burst(t0 + timedelta(minutes=1))
    source = ListedSource(prs, clock)
    team = Conversation("feishu", "oc_team", "ou_lead")
    await _services(settings, store, source, clock).core.answer(parse_intent("subscribe npu -ci"), team)
    await _services(settings, store, source, clock).poller().poll()
    clock[0] = t0 + timedelta(minutes=5)
    await _services(settings, store, source, clock).poller().poll()  # 30 queued
    clock[0] = t0 + timedelta(minutes=15)
    dying = _services(settings, store, source, clock)
    assert dying.deliverers.feishu is not None
    dying.deliverers.feishu = Crashing(dying.deliverers.feishu, after=after)  # type: ignore[assignment]
    with pytest.raises(asyncio.CancelledError):
        await dying.poller().poll()
    assert len(feishu_messages(fake_feishu, "oc_team")) == (1 if after else 0)
    for minutes in (20, 25, 40):  # restarted: the batch in flight goes out (again, with the same key)
        clock[0] = t0 + timedelta(minutes=minutes)
        await _services(settings, store, source, clock).poller().poll()
    [message] = feishu_messages(fake_feishu, "oc_team")  # Feishu took the repeated key once
    assert sorted(message) == sorted(matching)
    assert len({m.uuid for m in fake_feishu.messages}) == len(fake_feishu.messages)


async def test_quiet_hours_hold_alerts_until_morning_in_the_person_s_zone(
    settings: Settings, store: RedisStore, fake_slack: FakeSlack,
) -> None:
    fake_slack.users["U0NIGHT"] = {"tz": "America/Los_Angeles", "name": "night"}
    quiet = settings.model_copy(update={"quiet_hours": "22:00-08:00"})
    from zoneinfo import ZoneInfo

    la = ZoneInfo("America/Los_Angeles")
    t0 = datetime(2026, 4, 14, 21, 50, tzinfo=la)  # 12:50 the next day in Shanghai: not quiet there
    clock = [t0]
    prs = [_made(91001 + i, t0 + timedelta(minutes=20 + 30 * i), ("npu",)) for i in range(4)]  # 22:10 … 23:40
    source = ListedSource(prs, clock)
    dm = Conversation("slack", "D0NIGHT", "U0NIGHT")
    await _services(settings, store, source, clock).core.answer(parse_intent("订阅 npu"), dm)
    for step in range(1, 21):  # every 30 minutes, 22:20 … 07:50
        clock[0] = t0 + timedelta(minutes=30 * step)
        await _services(quiet, store, source, clock).poller().poll()
    assert slack_messages(fake_slack, "D0NIGHT") == []  # all night: nothing
    assert fake_slack.of("users.info"), "the person's zone comes from users.info"
    assert "users:read" in (ROOT / "slack" / "manifest.yml").read_text(encoding="utf-8"), "which needs this scope"
    clock[0] = datetime(2026, 4, 15, 8, 5, tzinfo=la)
    report = await _services(quiet, store, source, clock).poller().poll()
    assert report.messages == 1
    assert [sorted(m) for m in slack_messages(fake_slack, "D0NIGHT")] == [[91001, 91002, 91003, 91004]]


async def test_subscribers_get_exactly_their_prs_once(
    settings: Settings, store: RedisStore, fake_slack: FakeSlack, fake_feishu: FakeFeishuAPI,
) -> None:
    """The real week, every 6 hours, each poll's finds sent at once (``alerts_batch_s = 0``)."""
    now_batch = settings.model_copy(update={"alerts_batch_s": 0})
    week = week_window(2026, 16, "Asia/Shanghai")
    labeler = Labeler(settings.repo(REPO))
    records = SnapshotSource(EXAMPLE).merged_prs(REPO, week)
    w16 = [(p.number, labeler.labels(p), p.merged_at) for p in records]

    def expected(label: str, until: datetime | None = None) -> set[int]:
        return {n for n, labels, merged in w16 if label in labels and (until is None or merged <= until)}

    clock = [week.start.astimezone(SHANGHAI)]
    source = ListedSource(records, clock, lag=timedelta(minutes=30))
    pacer = RecordingPacer()  # one machine's pacing across the restarts below
    core = _services(now_batch, store, source, clock, pacer).core
    for who, label in ((ALICE, "npu"), (BOB, "fully_async"), (CI_CHANNEL, "ci"), (CAROL, "npu"),
                       (CAROL, "fully_async")):
        await core.answer(SubscribeIntent(label), who)

    def poller() -> AlertPoller:  # a fresh poller is a restarted bot: only Redis remembers
        return _services(now_batch, store, source, clock, pacer).poller()

    job = poller()
    midweek = datetime(2026, 4, 16, 12, 0, tzinfo=SHANGHAI)
    while clock[0] < midweek:  # every 6 hours, a restart on each day's first poll
        clock[0] += timedelta(hours=6)
        if clock[0].hour < 6:
            job = poller()
        await job.poll()
        await job.poll()  # the same poll twice: nothing new

    def received(messages: list[list[int]]) -> Counter[int]:
        return Counter(n for m in messages for n in m)

    assert received(slack_messages(fake_slack, "D0ALICE")) == Counter(expected("npu", midweek - timedelta(minutes=30)))
    await core.answer(UnsubscribeIntent("npu"), ALICE)
    assert "slack:D0ALICE" not in {who.key for who in await Subscriptions(store).all()}
    end = week.end.astimezone(SHANGHAI) + timedelta(hours=2)
    while clock[0] < end:
        clock[0] += timedelta(hours=6)
        await job.poll()
    report = await poller().poll()
    assert report.sent == []

    got = {chat: received(slack_messages(fake_slack, chat)) for chat in ("D0ALICE", "C0CI", "U0CAROL")}
    got["oc_bob_p2p"] = received(feishu_messages(fake_feishu, "oc_bob_p2p"))
    assert {n for counts in got.values() for n in counts.values()} == {1}, "every (subscriber, PR) is alerted once"
    unsubscribed_at = midweek - timedelta(minutes=30)
    assert set(got["D0ALICE"]) == expected("npu", unsubscribed_at)
    assert expected("npu") - expected("npu", unsubscribed_at), "npu PRs were merged after Alice left"
    assert set(got["C0CI"]) == expected("ci")
    assert set(got["U0CAROL"]) == expected("npu") | expected("fully_async")
    assert set(got["oc_bob_p2p"]) == expected("fully_async")
    for chat in ("U0CAROL", "C0CI"):
        posts = sum(1 for c in fake_slack.of("chat.postMessage") if c.args["channel"] == chat)
        assert pacer.waits[("slack", chat)] == posts > 1, "every message to a chat waits for its pace"
        assert posts < sum(got[chat].values()), "PRs found by one poll go out in one message"
    assert pacer.waits[("feishu", "oc_bob_p2p")] == len(fake_feishu.messages)
    assert all(m.msg_type == "interactive" for m in fake_feishu.messages)


async def test_a_refused_alert_is_retried_by_the_next_poll(
    settings: Settings, store: RedisStore, fake_slack: FakeSlack,
) -> None:
    clock = [datetime(2026, 4, 13, 10, 0, tzinfo=SHANGHAI)]
    source = ListedSource(SnapshotSource(EXAMPLE).merged_prs(REPO, week_window(2026, 16, "Asia/Shanghai")), clock)
    services = _services(settings.model_copy(update={"alerts_batch_s": 0}), store, source, clock)
    await services.core.answer(SubscribeIntent("npu"), Conversation("slack", "C0LATE", "U0X"))
    job = services.poller()
    await job.poll()  # the first poll sets the checkpoint
    fake_slack.not_member.add("C0LATE")
    clock[0] = datetime(2026, 4, 13, 11, 0, tzinfo=SHANGHAI)
    refused = await job.poll()
    assert refused.failed
    assert not refused.sent
    fake_slack.not_member.clear()
    clock[0] = datetime(2026, 4, 13, 23, 0, tzinfo=SHANGHAI)
    retried = await job.poll()
    assert sorted(n for _, _, n in retried.sent) == [5935, 5950, 5982]
    assert retried.messages == 1


async def test_unsubscribing_within_the_window_sends_nothing_and_old_markers_hold(
    settings: Settings, store: RedisStore, fake_slack: FakeSlack,
) -> None:
    t0 = datetime(2026, 4, 15, 10, 0, tzinfo=SHANGHAI)
    clock = [t0]
    prs, _ = _burst(t0 + timedelta(minutes=1))
    source = ListedSource(prs, clock)
    services = _services(settings, store, source, clock)
    gone, kept = Conversation("slack", "C0GONE", "U1"), Conversation("slack", "C0KEPT", "U1")
    for who in (gone, kept):
        await services.core.answer(parse_intent("订阅 npu -ci"), who)
    sent_before, _ = alert_keys("slack", "C0KEPT", REPO, 90001)  # alerted by the bot before batching
    await services.claims.take(sent_before)
    await services.poller().poll()
    clock[0] = t0 + timedelta(minutes=5)
    await services.poller().poll()
    await services.core.answer(parse_intent("退订 npu -ci"), gone)
    clock[0] = t0 + timedelta(minutes=15)
    await services.poller().poll()
    assert slack_messages(fake_slack, "C0GONE") == []
    [kept_message] = slack_messages(fake_slack, "C0KEPT")
    assert 90001 not in kept_message
    assert len(kept_message) == 29
    assert await store.get_json(queue_key(Subscriber("slack", "C0GONE"))) is not None  # kept, but nothing pending


def test_known_labels_cover_rules_and_history(settings: Settings) -> None:
    prs = SnapshotSource(EXAMPLE).merged_prs(REPO, week_window(2026, 16, "Asia/Shanghai"))
    labels = known_labels(prs, settings, REPO)
    assert {"npu", "fully_async", "ci"} <= set(labels)
    assert "no-such-label" not in labels


async def test_one_failing_repository_does_not_stop_the_others(store: RedisStore) -> None:
    """A source error on one repository is reported; the next repository is still polled."""
    from bot.config import load_settings
    from bot.errors import SourceError
    from bot.scheduler.alerts import PollReport
    from bot.subscriptions import Subscription

    class Broken:
        def merged_prs(self, repo: str, window: object) -> list[object]:
            raise SourceError("GitHub rate limit")

    settings = load_settings()
    poller = build_services(settings, store, open_source=lambda spec: Broken()).poller()  # type: ignore[arg-type,return-value]
    report = PollReport()
    who = Subscriber("slack", "C1")
    await poller._collect("a/broken", [(who, Subscription(repo="a/broken", filter=parse_filter("npu")))], report)
    assert report.failed == ["a/broken: GitHub rate limit"]



async def test_feishu_gives_no_person_zone_so_the_channel_s_applies(
    settings: Settings, store: RedisStore, fake_feishu: FakeFeishuAPI,
) -> None:
    from zoneinfo import ZoneInfo

    from bot.config import ChannelConfig

    berlin = ZoneInfo("Europe/Berlin")
    quiet = settings.model_copy(update={"quiet_hours": "22:00-08:00",
                                        "channels": {"feishu:oc_night": ChannelConfig(timezone="Europe/Berlin")}})
    t0 = datetime(2026, 4, 14, 21, 50, tzinfo=berlin)  # in the global zone (Shanghai) the quiet ends at 02:00 Berlin
    clock = [t0]
    source = ListedSource([_made(92001 + i, t0 + timedelta(minutes=20 + 40 * i), ("npu",)) for i in range(3)], clock)
    await _services(quiet, store, source, clock).core.answer(parse_intent("subscribe npu"),
                                                             Conversation("feishu", "oc_night", "ou_n", direct=True))
    for step in range(1, 21):  # 22:20 … 07:50 Berlin
        clock[0] = t0 + timedelta(minutes=30 * step)
        await _services(quiet, store, source, clock).poller().poll()
    assert feishu_messages(fake_feishu, "oc_night") == []
    clock[0] = datetime(2026, 4, 15, 8, 1, tzinfo=berlin)
    await _services(quiet, store, source, clock).poller().poll()
    assert [sorted(m) for m in feishu_messages(fake_feishu, "oc_night")] == [[92001, 92002, 92003]]


@pytest.mark.parametrize("polled_at", [datetime(2026, 4, 16, 12, 0, tzinfo=SHANGHAI),
                                       datetime(2026, 4, 20, 1, 0, tzinfo=SHANGHAI)], ids=["midweek", "next-monday"])
async def test_an_alert_judges_a_pr_as_that_week_s_digest_does(settings: Settings, store: RedisStore,
                                                               polled_at: datetime) -> None:
    """The poll analyses what it found with the repository's history (the source's earlier weeks) as the
    digest of the week does — not with only the PRs one poll happened to see — so the alert and the
    digest give a PR the same importance and verdict; a poll early on Monday judges last week's PRs with
    the history before last week, not before this one."""
    from page_support import FIVE_WEEKS

    from bot.batcher import Queue
    from bot.digest.service import DigestService

    week = week_window(2026, 16, "Asia/Shanghai")
    everything = SnapshotSource(FIVE_WEEKS).merged_prs(REPO, Window(
        start=week.start - timedelta(weeks=4), end=week.end, timezone="Asia/Shanghai", name="W12-W16"))
    clock = [polled_at]
    source = ListedSource(everything, clock)
    later = settings.model_copy(update={"alerts_batch_s": 86400, "alerts_overlap_s": 3 * 86400})
    services = _services(later, store, source, clock)
    reply = await services.core.answer(parse_intent("subscribe path:**"), ALICE)
    assert reply is not None
    source.asked.clear()  # saving read the last four weeks for its preview (issue 29); the poll's reads follow
    await services.poller().poll()
    raw = await store.get_json(queue_key(Subscriber("slack", "D0ALICE")))
    assert raw is not None
    queued = Queue.model_validate(raw).pending
    alerted = {item.payload["pr"]["number"]: item.payload["pr"]["analysis"] for item in queued}
    in_poll = [p for p in everything if p.merged_at >= clock[0] - timedelta(days=3) and p.merged_at <= clock[0]]
    assert len(alerted) == len(in_poll) > 5

    histories = [w for w in source.asked if w.name != "alerts"]
    assert histories, "the poll read the history"
    assert all(w.end == week.start for w in histories), "the history before the PRs' week, W16"
    service = DigestService(later)
    history = await service.earlier_records(source, REPO, week)
    assert len(history) > 100, "the four weeks before W16"
    digest = await service.digest([p for p in everything if week.start <= p.merged_at < week.end], repo=REPO,
                                  window=week, history=history)
    said = {p.number: p.analysis for p in digest.prs if p.number in alerted}
    assert {n: (a["importance"], a["recommendation"]["level"], a["recommendation"]["reason"])
            for n, a in alerted.items()} == {n: (a.importance, a.recommendation.level, a.recommendation.reason)
                                             for n, a in said.items() if a is not None}
    assert any("核心路径" in a["recommendation"]["reason"] for a in alerted.values()), "core files from the history"
