"""Label alerts on the real 2026-W16 PRs of verl, arriving in batches through the poll job, to the
fake Slack and Feishu APIs: each subscriber gets exactly the matching PRs, once, paced per chat;
after unsubscribing, none."""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta

import pytest
from fakes.feishu_api import APP_ID, APP_SECRET, FakeFeishuAPI
from fakes.slack_api import BOT_TOKEN, FakeSlack
from pydantic import SecretStr

from bot.app import build_services
from bot.config import Settings
from bot.delivery.pacing import Pacer
from bot.digest.labels import Labeler
from bot.digest.window import week_window
from bot.handlers.core import Conversation
from bot.handlers.intents import SubscribeIntent, UnsubscribeIntent
from bot.models import PullRequest, Window
from bot.scheduler.alerts import AlertPoller
from bot.sources.jsonl import SnapshotSource
from bot.store import RedisStore
from bot.subscriptions import Subscriptions, known_labels

from .conftest import EXAMPLE, REPO, SHANGHAI

ALICE = Conversation("slack", "D0ALICE", "U0ALICE")  # Alice's DM with the bot: npu
BOB = Conversation("feishu", "oc_bob_p2p", "ou_bob")  # Bob's Feishu p2p chat: fully_async
CI_CHANNEL = Conversation("slack", "C0CI", "U0CAROL")  # a channel: ci
CAROL = Conversation("slack", "U0CAROL", "U0CAROL")  # Carol by user id (a DM): npu and fully_async


class RevealingSource:
    """The snapshot, but a PR is listed only once the clock passed its merge by ``lag`` (a source
    that learns of merges late), so the week arrives poll by poll."""

    def __init__(self, clock: list[datetime], lag: timedelta) -> None:
        self._inner = SnapshotSource(EXAMPLE)
        self._clock = clock
        self._lag = lag
        self.calls = 0

    def merged_prs(self, repo: str, window: Window) -> list[PullRequest]:
        self.calls += 1
        visible = self._clock[0] - self._lag
        return [p for p in self._inner.merged_prs(repo, window) if p.merged_at <= visible]

    def pull_request(self, repo: str, number: int) -> PullRequest:
        return self._inner.pull_request(repo, number)

    def repos(self) -> list[str]:
        return self._inner.repos()


@pytest.fixture
def settings(verl_settings: Settings, fake_slack: FakeSlack, fake_feishu: FakeFeishuAPI) -> Settings:
    return verl_settings.model_copy(update={
        "slack_bot_token": SecretStr(BOT_TOKEN), "slack_api_url": fake_slack.base_url + "/api",
        "feishu_app_id": APP_ID, "feishu_app_secret": SecretStr(APP_SECRET), "feishu_api_url": fake_feishu.base_url,
        "default_source": f"jsonl:{EXAMPLE}", "default_repo": REPO, "alerts_overlap_s": 3600,
    })


FAST = {"slack": ((1, 0.02),), "feishu": ((1, 0.02),)}
"""One message per 20 ms to a chat: paced as the platforms are, without their real seconds."""


class RecordingPacer(Pacer):
    """The pacer, noting which chat each message waited for."""

    def __init__(self) -> None:
        super().__init__(FAST)
        self.waits: Counter[tuple[str, str]] = Counter()

    async def wait(self, platform: str, conversation: str) -> None:
        self.waits[(platform, conversation)] += 1
        await super().wait(platform, conversation)

W16: list[tuple[int, tuple[str, ...], datetime]] = []
"""``(number, labels, merged_at)`` of the week's PRs, filled by the test."""


def expected(label: str, until: datetime | None = None) -> set[int]:
    """The week's PRs carrying ``label`` (merged by ``until``)."""
    return {n for n, labels, merged in W16 if label in labels and (until is None or merged <= until)}


def received_slack(fake: FakeSlack, channel: str) -> Counter[int]:
    out: Counter[int] = Counter()
    for call in fake.of("chat.postMessage"):
        if call.args["channel"] == channel:
            out[int(re.search(r"#(\d+) ", call.args["text"]).group(1))] += 1  # type: ignore[union-attr]
    return out


def received_feishu(fake: FakeFeishuAPI, chat: str) -> Counter[int]:
    out: Counter[int] = Counter()
    for sent in fake.messages:
        if sent.target == chat:
            first = sent.content["body"]["elements"][0]["content"]
            out[int(re.search(r"#(\d+) ", first).group(1))] += 1  # type: ignore[union-attr]
    return out


async def test_subscribers_get_exactly_their_prs_once(
    settings: Settings, store: RedisStore, fake_slack: FakeSlack, fake_feishu: FakeFeishuAPI,
) -> None:
    week = week_window(2026, 16, "Asia/Shanghai")
    labeler = Labeler(settings.repo(REPO))
    W16[:] = [(p.number, labeler.labels(p), p.merged_at) for p in SnapshotSource(EXAMPLE).merged_prs(REPO, week)]
    core = build_services(settings, store).core
    for who, label in ((ALICE, "npu"), (BOB, "fully_async"), (CI_CHANNEL, "ci"), (CAROL, "npu"),
                       (CAROL, "fully_async")):
        await core.answer(SubscribeIntent(label), who)

    clock = [week.start.astimezone(SHANGHAI)]
    source = RevealingSource(clock, lag=timedelta(minutes=30))
    pacer = RecordingPacer()  # one machine's pacing across the restarts below

    def poller() -> AlertPoller:  # a fresh poller is a restarted bot: only Redis remembers
        return build_services(settings, store, open_source=lambda spec: source, clock=lambda: clock[0],
                              pacer=pacer).poller()

    job = poller()
    midweek = datetime(2026, 4, 16, 12, 0, tzinfo=SHANGHAI)
    while clock[0] < midweek:  # every 6 hours, a restart on each day's first poll
        clock[0] += timedelta(hours=6)
        if clock[0].hour < 6:
            job = poller()
        await job.poll()
        await job.poll()  # the same poll twice: nothing new
    assert received_slack(fake_slack, "D0ALICE") == Counter(expected("npu", midweek - timedelta(minutes=30)))

    await core.answer(UnsubscribeIntent("npu"), ALICE)
    assert "slack:D0ALICE" not in {who.key for who in await Subscriptions(store).all()}
    end = week.end.astimezone(SHANGHAI) + timedelta(hours=2)
    while clock[0] < end:
        clock[0] += timedelta(hours=6)
        await job.poll()
    report = await poller().poll()
    assert report.sent == []

    counts = [*received_slack(fake_slack, "D0ALICE").values(), *received_slack(fake_slack, "C0CI").values(),
              *received_slack(fake_slack, "U0CAROL").values(), *received_feishu(fake_feishu, "oc_bob_p2p").values()]
    assert set(counts) == {1}, "every (subscriber, PR) is alerted once"
    unsubscribed_at = midweek - timedelta(minutes=30)
    assert set(received_slack(fake_slack, "D0ALICE")) == expected("npu", unsubscribed_at)
    assert expected("npu") - expected("npu", unsubscribed_at), "npu PRs were merged after Alice left"
    assert set(received_slack(fake_slack, "C0CI")) == expected("ci")
    assert set(received_slack(fake_slack, "U0CAROL")) == expected("npu") | expected("fully_async")
    assert set(received_feishu(fake_feishu, "oc_bob_p2p")) == expected("fully_async")
    for chat, got in (("U0CAROL", received_slack(fake_slack, "U0CAROL")), ("C0CI", received_slack(fake_slack, "C0CI"))):
        assert pacer.waits[("slack", chat)] == sum(got.values()) > 1, "every alert to a chat waits for its pace"
    assert pacer.waits[("feishu", "oc_bob_p2p")] == sum(received_feishu(fake_feishu, "oc_bob_p2p").values())
    assert all(m.msg_type == "interactive" for m in fake_feishu.messages)


async def test_a_refused_alert_is_retried_by_the_next_poll(
    settings: Settings, store: RedisStore, fake_slack: FakeSlack,
) -> None:
    clock = [datetime(2026, 4, 13, 10, 0, tzinfo=SHANGHAI)]
    source = RevealingSource(clock, lag=timedelta(0))
    services = build_services(settings, store, open_source=lambda spec: source, clock=lambda: clock[0],
                              pacer=Pacer(FAST))
    await services.core.answer(SubscribeIntent("npu"), Conversation("slack", "C0LATE", "U0X"))
    job = services.poller()
    await job.poll()  # the first poll sets the checkpoint
    fake_slack.not_member.add("C0LATE")
    clock[0] = datetime(2026, 4, 13, 11, 0, tzinfo=SHANGHAI)
    refused = await job.poll()
    assert refused.failed
    assert not refused.sent
    fake_slack.not_member.clear()
    clock[0] = datetime(2026, 4, 13, 23, 0, tzinfo=SHANGHAI)  # beyond the overlap: the checkpoint waited
    retried = await job.poll()
    assert [n for _, _, n in retried.sent] == [5982, 5935, 5950]


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

    class Broken:
        def merged_prs(self, repo: str, window: object) -> list[object]:
            raise SourceError("GitHub rate limit")

    settings = load_settings()
    poller = build_services(settings, store, open_source=lambda spec: Broken()).poller()  # type: ignore[arg-type,return-value]
    report = PollReport()
    await poller._poll_repo("a/broken", {}, report)
    assert report.failed == ["a/broken: GitHub rate limit"]
