"""Cards with their extras (:mod:`bot.cards.extras`): the uploaded charts shown in the card, and 完整报告
as a link to the page — within every platform limit, and unchanged without extras."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.cards.actions import ACTION_FULL_REPORT, ACTION_OPEN_PAGE
from bot.cards.chat import render_reply_feishu, render_reply_slack
from bot.cards.extras import CardExtras, CardImage
from bot.cards.feishu import WEBHOOK_CARD_BYTES, card_bytes, render_feishu, render_feishu_webhook
from bot.cards.slack import render_slack
from bot.models import Digest
from bot.replies import DigestReply
from cards.card_checks import check_feishu, check_slack, feishu_texts, slack_texts
from cards.card_digests import ALL_DIGESTS

PAGE = "https://prhub.example.com/pages/eyJwIjoiMSJ9.Zx1a2b.c3d4e5"
LONG_ALT = "标签 PR 数对比图。" + "；".join(f"label{i} 本周 {i}，平均 {i}.5" for i in range(300))


def _images(prefix: str) -> tuple[CardImage, ...]:
    return (CardImage(ref=f"{prefix}0001", name="labels", title="标签：本周与前 4 周平均", alt=LONG_ALT),
            CardImage(ref=f"{prefix}0002", name="weekly", title="每周合并的 PR（最近 12 周）",
                      alt="每周合并 PR 数柱状图：W05 无数据；W16 39。"))


def _blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for m in messages for b in m["blocks"]]


@pytest.mark.parametrize("fixture", ALL_DIGESTS)
def test_slack_card_with_charts_and_page_link_fits(fixture: str, request: pytest.FixtureRequest,
                                                   caplog: Any) -> None:
    digest: Digest = request.getfixturevalue(fixture)
    extras = CardExtras(page_url=PAGE, images=_images("F0CHART"))
    messages = render_slack(digest, extras)
    check_slack(messages, caplog)
    if not digest.prs:
        assert messages == render_slack(digest)
        return
    card = messages[0]["blocks"]
    images = [b for b in card if b["type"] == "image"]
    assert [b["slack_file"] for b in images] == [{"id": "F0CHART0001"}, {"id": "F0CHART0002"}]
    assert images[0]["title"]["text"] == "标签：本周与前 4 周平均"
    assert images[0]["alt_text"].startswith("标签 PR 数对比图。")
    assert len(images[0]["alt_text"]) <= 2000
    assert card[-1]["type"] == "actions"  # the pictures come before the buttons
    button = card[-1]["elements"][0]
    assert (button["action_id"], button["url"]) == (ACTION_OPEN_PAGE, PAGE)
    assert button["value"] == f"{digest.repo}|{digest.window.name}"
    # with the page, the digest is the card: no thread of the full report
    plain = render_slack(digest)
    headers = {b["text"]["text"] for b in _blocks(plain) if b["type"] == "header"}
    assert "完整周报" in headers
    assert "完整周报" not in {b["text"]["text"] for b in _blocks(messages) if b["type"] == "header"}
    assert len(messages) < len(plain)
    assert not any(b["type"] == "image" for m in messages[1:] for b in m["blocks"])


def test_slack_without_extras_is_unchanged(realistic_digest: Digest) -> None:
    plain = render_slack(realistic_digest)
    assert render_slack(realistic_digest, CardExtras()) == plain
    assert plain[0]["blocks"][-1]["elements"][0]["action_id"] == ACTION_FULL_REPORT
    assert not any(b["type"] == "image" for b in _blocks(plain))
    assert len(plain) > 1  # the full report follows in the thread
    # charts without a page: the pictures in the card, the report still in its thread
    with_charts = render_slack(realistic_digest, CardExtras(images=_images("F0X")))
    assert len(with_charts) == len(plain)
    assert slack_texts(with_charts[1:]) == slack_texts(plain[1:])
    assert with_charts[0]["blocks"][-1]["elements"][0]["action_id"] == ACTION_FULL_REPORT


@pytest.mark.parametrize("fixture", ALL_DIGESTS)
def test_feishu_card_with_charts_and_page_link_fits(fixture: str, request: pytest.FixtureRequest) -> None:
    digest: Digest = request.getfixturevalue(fixture)
    extras = CardExtras(page_url=PAGE, images=_images("img_v3_chart_"))
    cards = render_feishu(digest, extras)
    check_feishu(cards)
    if not digest.prs:
        assert cards == render_feishu(digest)
        return
    elements = cards[0]["body"]["elements"]
    images = [e for e in elements if e["tag"] == "img"]
    assert [e["img_key"] for e in images] == ["img_v3_chart_0001", "img_v3_chart_0002"]
    assert images[1]["alt"]["content"] == "每周合并 PR 数柱状图：W05 无数据；W16 39。"
    assert images[0]["scale_type"] == "fit_horizontal"
    assert elements[-1]["tag"] == "button"
    assert elements[-1]["behaviors"] == [{"type": "open_url", "default_url": PAGE}]
    plain = render_feishu(digest)
    assert len(cards) < len(plain)
    assert "**完整周报**" in feishu_texts(plain)
    assert "**完整周报**" not in feishu_texts(cards)


def test_feishu_without_extras_is_unchanged(realistic_digest: Digest) -> None:
    plain = render_feishu(realistic_digest)
    assert render_feishu(realistic_digest, CardExtras()) == plain
    button = plain[0]["body"]["elements"][-1]
    assert button["behaviors"][0]["type"] == "callback"
    assert button["behaviors"][0]["value"]["action"] == ACTION_FULL_REPORT


@pytest.mark.parametrize("fixture", ALL_DIGESTS)
def test_webhook_card_links_the_page_and_carries_no_picture(fixture: str, request: pytest.FixtureRequest) -> None:
    digest: Digest = request.getfixturevalue(fixture)
    cards = render_feishu_webhook(digest, CardExtras(page_url=PAGE, images=_images("img_v3_x_")))
    assert all(card_bytes(c) <= WEBHOOK_CARD_BYTES for c in cards)
    elements = [e for c in cards for e in c["body"]["elements"]]
    assert not any(e["tag"] == "img" for e in elements)
    urls = [b["default_url"] for e in elements if e["tag"] == "button" for b in e["behaviors"]]
    assert all(b["type"] == "open_url" for e in elements if e["tag"] == "button" for b in e["behaviors"])
    if digest.prs:
        assert urls[0] == PAGE
        assert "完整报告" in json.dumps(cards, ensure_ascii=False) or "Full report" in json.dumps(cards)
    else:
        assert PAGE not in urls


def test_the_thread_text_stays_the_fallback_without_a_page(realistic_digest: Digest) -> None:
    hook = render_feishu_webhook(realistic_digest)
    assert PAGE not in json.dumps(hook)
    assert feishu_texts(render_feishu(realistic_digest, CardExtras(images=_images("img_v3_y_")))) == \
        feishu_texts(render_feishu(realistic_digest))


def test_chat_replies_pass_the_extras_to_the_digest_card(realistic_digest: Digest) -> None:
    extras = CardExtras(page_url=PAGE, images=_images("F0R"))
    assert render_reply_slack(DigestReply(realistic_digest), extras) == render_slack(realistic_digest, extras)
    assert render_reply_feishu(DigestReply(realistic_digest), extras) == render_feishu(realistic_digest, extras)
