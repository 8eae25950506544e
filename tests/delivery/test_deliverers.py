"""The one Deliverer protocol over Slack, the Feishu app and a Feishu webhook: where the messages go, the
thread's anchor, typed refusals, the full-report mark, and the per-chat pacing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from fakes.feishu_api import FakeFeishuAPI
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve
from pydantic import SecretStr

from bot.app import build_services
from bot.claims import full_report_key
from bot.config import FeishuWebhook, Settings
from bot.delivery import Place, post_digest
from bot.delivery.feishu import FeishuClient, FeishuDeliverer
from bot.delivery.pacing import Pacer
from bot.errors import DeliveryError
from bot.models import Digest
from bot.replies import HelpReply
from bot.store import MemoryStore


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake


def _slack_settings(settings: Settings, fake: FakeSlack) -> Settings:
    return settings.model_copy(update={"slack_bot_token": SecretStr(BOT_TOKEN),
                                       "slack_api_url": fake.base_url + "/api"})


async def test_slack_posts_the_first_message_and_threads_the_rest(
    default_settings: Settings, fake_slack: FakeSlack, w16_digest: Digest,
) -> None:
    services = build_services(_slack_settings(default_settings, fake_slack), MemoryStore())
    slack = services.slack
    assert slack is not None
    posted = await post_digest(slack, services.claims, Place("C0DIGEST"), w16_digest, key="k")
    calls = fake_slack.of("chat.postMessage")
    assert len(calls) == len(posted.ids) == len(slack.digest_messages(w16_digest)) > 1
    assert calls[0].args.get("thread_ts") in (None, "")
    assert {c.args["thread_ts"] for c in calls[1:]} == {posted.anchor} == {posted.ids[0]}
    # the thread holds the whole digest: 完整报告 under it finds the claim taken
    assert await services.claims.is_done(full_report_key("slack", "C0DIGEST", posted.ids[0], "2026-W16"))


async def test_a_slack_refusal_is_a_delivery_error_with_slacks_code(
    default_settings: Settings, fake_slack: FakeSlack,
) -> None:
    services = build_services(_slack_settings(default_settings, fake_slack), MemoryStore())
    assert services.slack is not None
    fake_slack.not_member.add("C0CLOSED")
    with pytest.raises(DeliveryError, match="not_in_channel") as refused:
        await services.slack.post(Place("C0CLOSED"), services.slack.reply_messages(HelpReply("zh", None)))
    assert refused.value.code == "not_in_channel"


async def test_feishu_into_a_chat_then_its_thread_or_under_a_message(
    fake_api: FakeFeishuAPI, client: FeishuClient, w16_digest: Digest,
) -> None:
    feishu = FeishuDeliverer(client)
    cards = feishu.digest_messages(w16_digest)
    pushed = await feishu.post(Place("oc_push"), cards, key="push-key")
    first, *rest = fake_api.messages
    assert (first.kind, first.target) == ("create", "oc_push")
    assert {(m.kind, m.target, m.reply_in_thread) for m in rest} == {("reply", first.message_id, True)}
    assert pushed.anchor == first.message_id
    answered = await feishu.post(Place("oc_push", thread="om_question"), cards[:2], key="om_question")
    assert [m.target for m in fake_api.messages[len(cards):]] == ["om_question", "om_question"]
    assert answered.anchor == answered.ids[0]
    with pytest.raises(DeliveryError, match="oc_"):
        await feishu.post(Place("ou_person"), cards[:1])


async def test_a_webhook_pushes_to_its_group_only(default_settings: Settings, w16_digest: Digest) -> None:
    settings = default_settings.model_copy(update={"feishu_webhooks": {"team": FeishuWebhook(url="http://127.0.0.1:9/")}})
    services = build_services(settings, MemoryStore())
    hook, name = services.deliverers.for_channel("feishu-webhook:team")
    with pytest.raises(DeliveryError, match="own group"):
        await hook.post(Place(name, thread="om_1"), hook.digest_messages(w16_digest))
    with pytest.raises(DeliveryError, match="only pushes"):
        hook.reply_messages(HelpReply("zh", None))
    await services.aclose()


async def test_the_pacer_spaces_one_chat_and_not_the_others() -> None:
    pacer = Pacer({"slack": ((1, 0.1),)})
    started = time.monotonic()
    await asyncio.gather(*(pacer.wait("slack", "C1") for _ in range(3)))
    assert time.monotonic() - started >= 0.18  # three to one chat: at least two waits of 0.1 s
    slow = Pacer({"slack": ((1, 10.0),)})
    started = time.monotonic()
    await asyncio.gather(*(slow.wait("slack", f"C{n}") for n in range(10)))
    assert time.monotonic() - started < 5.0  # one each to ten chats: nobody waited the 10 s of another's
    await pacer.wait("unknown-platform", "x")  # no limit configured: no wait
