"""The digest card's extras on the way out: charts uploaded to the fake Slack (files upload v2, then
``files.info`` until shared) and to the fake Feishu (im/v1/images), the cards referencing them, the page
link on 完整报告 — and every failure leaving the card whole, without the picture, and logged."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from cards.card_checks import check_feishu, check_slack
from fakes.feishu_api import FakeFeishuAPI
from fakes.slack_api import BOT_TOKEN, FakeSlack, serve
from page_support import compared_w16
from pydantic import SecretStr

from bot.app import Services, build_services
from bot.cards.actions import ACTION_FULL_REPORT, ACTION_OPEN_PAGE
from bot.cards.extras import CardExtras, CardImage
from bot.claims import full_report_key
from bot.config import FeishuWebhook, Settings
from bot.delivery import Place, post_digest
from bot.delivery import slack as slack_delivery
from bot.delivery.feishu import FeishuClient, FeishuDeliverer
from bot.delivery.webhook import WebhookDeliverer
from bot.models import Digest
from bot.store import MemoryStore

SECRET = "media-test-secret-0123456789abcdef"
PUBLIC = "https://prhub.example.com"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    fake = FakeSlack()
    with serve(fake):
        yield fake


@pytest.fixture(scope="module")
def digest(verl_settings: Settings) -> Digest:
    return compared_w16(verl_settings)


def _services(settings: Settings, fake: FakeSlack, *, page: bool = True) -> Services:
    update: dict[str, Any] = {"slack_bot_token": SecretStr(BOT_TOKEN), "slack_api_url": fake.base_url + "/api"}
    if page:
        update |= {"page_secret": SecretStr(SECRET), "public_url": PUBLIC}
    return build_services(settings.model_copy(update=update), MemoryStore())


def _card_blocks(fake: FakeSlack) -> list[dict[str, Any]]:
    return list(fake.of("chat.postMessage")[0].args["blocks"])


async def _page_of(services: Services, url: str) -> Digest | None:
    assert url.startswith(PUBLIC + "/pages/")
    assert services.links is not None
    return await services.pages.get(services.links.page_id(url.rsplit("/", 1)[1]))


async def test_slack_uploads_the_charts_waits_until_shared_and_the_card_shows_them(
    verl_settings: Settings, fake_slack: FakeSlack, digest: Digest, caplog: Any,
) -> None:
    services = _services(verl_settings, fake_slack)
    assert services.slack is not None
    posted = await post_digest(services.slack, services.claims, Place("C0DIGEST"), digest)
    files = fake_slack.uploaded()
    assert [f.filename for f in files] == ["labels.png", "weekly.png"]
    assert all(f.data.startswith(PNG) and f.channel == "C0DIGEST" and f.thread_ts is None for f in files)
    assert "npu 本周 13，平均 8" in files[0].alt_txt
    assert files[1].title == "每周合并的 PR（最近 12 周）"
    # Slack shares an upload asynchronously: the bot asked files.info until each file was shared
    assert all(f.checks >= fake_slack.share_after + 1 for f in files)
    [card] = fake_slack.of("chat.postMessage")  # with the page, the digest is one card
    assert posted.ids == (posted.anchor,)
    blocks = _card_blocks(fake_slack)
    images = [b for b in blocks if b["type"] == "image"]
    assert [b["slack_file"]["id"] for b in images] == [f.id for f in files]
    assert images[0]["alt_text"] == files[0].alt_txt  # the same sentence with the numbers, on the file and the block
    assert images[0]["title"]["text"] == files[0].title == "标签：本周与前 4 周平均"
    button = blocks[-1]["elements"][0]
    assert button["action_id"] == ACTION_OPEN_PAGE
    assert await _page_of(services, button["url"]) == digest
    check_slack([{"text": card.args["text"], "blocks": blocks}], caplog)


async def test_slack_in_a_thread_shares_the_charts_there(
    verl_settings: Settings, fake_slack: FakeSlack, digest: Digest,
) -> None:
    services = _services(verl_settings, fake_slack)
    assert services.slack is not None
    await post_digest(services.slack, services.claims, Place("C0ASK", thread="1713500001.000200"), digest)
    assert {(f.channel, f.thread_ts) for f in fake_slack.uploaded()} == {("C0ASK", "1713500001.000200")}
    assert fake_slack.of("chat.postMessage")[0].args["thread_ts"] == "1713500001.000200"


async def test_without_a_public_url_the_report_stays_in_the_thread(
    verl_settings: Settings, fake_slack: FakeSlack, digest: Digest,
) -> None:
    services = _services(verl_settings, fake_slack, page=False)
    assert services.slack is not None
    posted = await post_digest(services.slack, services.claims, Place("C0DIGEST"), digest)
    posts = fake_slack.of("chat.postMessage")
    assert len(posts) > 1
    blocks = _card_blocks(fake_slack)
    assert [b["type"] for b in blocks].count("image") == 2  # the charts are there all the same
    assert blocks[-1]["elements"][0]["action_id"] == ACTION_FULL_REPORT
    assert "url" not in blocks[-1]["elements"][0]
    assert await services.claims.is_done(full_report_key("slack", "C0DIGEST", posted.ids[0], "2026-W16"))


async def test_a_refused_upload_leaves_the_card_whole_and_is_logged(
    verl_settings: Settings, fake_slack: FakeSlack, digest: Digest, caplog: pytest.LogCaptureFixture,
) -> None:
    services = _services(verl_settings, fake_slack)
    assert services.slack is not None
    fake_slack.refuse_uploads = "missing_scope"
    with caplog.at_level(logging.WARNING, logger="bot.delivery.media"):
        await post_digest(services.slack, services.claims, Place("C0DIGEST"), digest)
    [card] = fake_slack.of("chat.postMessage")
    blocks = card.args["blocks"]
    assert not [b for b in blocks if b["type"] == "image"]
    assert blocks[-1]["elements"][0]["action_id"] == ACTION_OPEN_PAGE  # the link is still there
    assert any(s["text"]["text"].startswith("*本周亮点*") for s in blocks if s["type"] == "section")
    assert "missing_scope" in caplog.text
    assert "without them" in caplog.text


async def test_a_malformed_upload_answer_leaves_the_card_without_the_charts(
    verl_settings: Settings, fake_slack: FakeSlack, digest: Digest, caplog: pytest.LogCaptureFixture,
) -> None:
    services = _services(verl_settings, fake_slack)
    assert services.slack is not None
    fake_slack.broken_uploads = True  # "ok" without the fields slack_sdk reads: it raises inside files_upload_v2
    with caplog.at_level(logging.WARNING, logger="bot.delivery.media"):
        await post_digest(services.slack, services.claims, Place("C0DIGEST"), digest)
    [card] = fake_slack.of("chat.postMessage")
    assert not [b for b in card.args["blocks"] if b["type"] == "image"]
    assert "without them" in caplog.text


async def test_files_never_shared_in_time_leave_the_card_without_them(
    verl_settings: Settings, fake_slack: FakeSlack, digest: Digest, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(slack_delivery, "FILE_READY_S", 0.5)
    services = _services(verl_settings, fake_slack)
    assert services.slack is not None
    fake_slack.share_after = 10**6
    with caplog.at_level(logging.WARNING):
        await post_digest(services.slack, services.claims, Place("C0DIGEST"), digest)
    assert not [b for b in _card_blocks(fake_slack) if b["type"] == "image"]
    assert "file_not_ready" in caplog.text or "did not share" in caplog.text


async def test_a_card_slack_refuses_for_its_pictures_goes_again_without_them(
    verl_settings: Settings, fake_slack: FakeSlack, digest: Digest, caplog: pytest.LogCaptureFixture,
) -> None:
    services = _services(verl_settings, fake_slack, page=False)
    slack = services.slack
    assert slack is not None
    gone = CardExtras(images=(CardImage(ref="F0NOTHERE01", name="labels", title="t", alt="a"),))
    with caplog.at_level(logging.WARNING):
        posted = await slack.post(Place("C0DIGEST"), slack.digest_messages(digest, gone))
    attempts = [c for c in fake_slack.calls if c.method == "chat.postMessage"]
    assert len(posted.ids) == len(fake_slack.of("chat.postMessage")) == len(attempts) - 1
    assert not [b for b in _card_blocks(fake_slack) if b["type"] == "image"]
    assert "without them" in caplog.text


async def test_feishu_uploads_images_and_the_card_shows_them(
    verl_settings: Settings, fake_api: FakeFeishuAPI, client: FeishuClient, digest: Digest, fake_slack: FakeSlack,
) -> None:
    services = _services(verl_settings, fake_slack)
    feishu = FeishuDeliverer(client, media=services.media)
    await post_digest(feishu, services.claims, Place("oc_push"), digest, key="push")
    assert list(fake_api.images) == ["img_v3_fake_0001", "img_v3_fake_0002"]
    assert all(png.startswith(PNG) for png in fake_api.images.values())
    uploads = [c for c in fake_api.calls if c.path == "/open-apis/im/v1/images"]
    assert {c.body["image_type"] for c in uploads} == {"message"}
    [message] = fake_api.messages  # with the page, the digest is one card
    elements = message.content["body"]["elements"]
    images = [e for e in elements if e["tag"] == "img"]
    assert [e["img_key"] for e in images] == list(fake_api.images)
    assert images[1]["title"]["content"] == "每周合并的 PR（最近 12 周）"
    assert "W16 39" in images[1]["alt"]["content"]
    link = elements[-1]["behaviors"][0]
    assert link["type"] == "open_url"
    assert await _page_of(services, link["default_url"]) == digest
    check_feishu([message.content])


async def test_feishu_without_im_resource_sends_the_card_without_pictures(
    verl_settings: Settings, fake_api: FakeFeishuAPI, client: FeishuClient, digest: Digest, fake_slack: FakeSlack,
    caplog: pytest.LogCaptureFixture,
) -> None:
    services = _services(verl_settings, fake_slack, page=False)
    fake_api.refuse_images = True
    feishu = FeishuDeliverer(client, media=services.media)
    with caplog.at_level(logging.WARNING, logger="bot.delivery.media"):
        await post_digest(feishu, services.claims, Place("oc_push"), digest, key="push")
    first = fake_api.messages[0].content
    assert not [e for e in first["body"]["elements"] if e["tag"] == "img"]
    assert first["body"]["elements"][-1]["behaviors"][0]["type"] == "callback"
    assert len(fake_api.messages) > 1  # no page: the full report follows in the thread
    assert "99991672" in caplog.text


async def test_a_card_feishu_rejects_for_its_pictures_goes_again_without_them(
    fake_api: FakeFeishuAPI, client: FeishuClient, digest: Digest, caplog: pytest.LogCaptureFixture,
) -> None:
    feishu = FeishuDeliverer(client)
    gone = CardExtras(images=(CardImage(ref="img_v3_not_uploaded", name="labels", title="t", alt="a"),))
    cards = feishu.digest_messages(digest, gone)
    with caplog.at_level(logging.WARNING):
        await feishu.post(Place("oc_push"), cards[:1], key="k")
    [message] = fake_api.messages
    assert not [e for e in message.content["body"]["elements"] if e["tag"] == "img"]
    assert message.content["body"]["elements"] == [e for e in cards[0]["body"]["elements"] if e["tag"] != "img"]
    assert "without them" in caplog.text


async def test_a_webhook_card_carries_the_page_link_and_uploads_nothing(
    verl_settings: Settings, fake_api: FakeFeishuAPI, digest: Digest, fake_slack: FakeSlack,
) -> None:
    settings = verl_settings.model_copy(update={
        "page_secret": SecretStr(SECRET), "public_url": PUBLIC,
        "feishu_webhooks": {"team": FeishuWebhook(url=f"{fake_api.base_url}/open-apis/bot/v2/hook/team")}})
    services = build_services(settings, MemoryStore())
    hook, _ = services.deliverers.for_channel("feishu-webhook:team")
    assert isinstance(hook, WebhookDeliverer)
    try:
        await post_digest(hook, services.claims, Place("team"), digest)
    finally:
        await services.aclose()
    assert fake_api.images == {}
    first = fake_api.webhook_posts[0]["card"]
    buttons = [e for e in first["body"]["elements"] if e["tag"] == "button"]
    assert buttons[0]["text"]["content"] == "完整报告"
    assert await _page_of(services, buttons[0]["behaviors"][0]["default_url"]) == digest
    assert not [e for e in first["body"]["elements"] if e["tag"] == "img"]


async def test_charts_off_means_no_plotting_and_no_upload(
    verl_settings: Settings, fake_slack: FakeSlack, digest: Digest,
) -> None:
    services = build_services(verl_settings.model_copy(update={
        "slack_bot_token": SecretStr(BOT_TOKEN), "slack_api_url": fake_slack.base_url + "/api", "charts": False}),
        MemoryStore())
    assert services.slack is not None
    await post_digest(services.slack, services.claims, Place("C0DIGEST"), digest)
    assert [c for c in fake_slack.calls if c.method.startswith("files.")] == []
    assert not [b for b in _card_blocks(fake_slack) if b["type"] == "image"]
