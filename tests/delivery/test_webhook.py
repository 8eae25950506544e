"""Custom group-bot webhooks: the signature, card sizes, and a push to the fake webhook."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import httpx
import pytest
from fakes.feishu_api import FakeFeishuAPI, card_problem

from bot.cards.feishu import WEBHOOK_CARD_BYTES, card_bytes
from bot.cards.feishu import render_feishu_webhook as webhook_cards
from bot.delivery.feishu import FeishuAPIError
from bot.delivery.webhook import push_cards, sign
from bot.models import Digest

TIMESTAMP = 1599360473
SECRET = "demo-secret-for-tests"
EXPECTED_SIGN = "yXY1odLWMW4GXjv3q2YQQtb+h92WpORPeaMkRTvqrUU="
"""Computed once with the documented algorithm (see the test below), kept as a fixed vector."""


def test_signature_matches_the_documented_algorithm() -> None:
    # Feishu: the string "timestamp\nsecret" is the HMAC-SHA256 key, the message is empty, base64 of the digest.
    key = f"{TIMESTAMP}\n{SECRET}".encode()
    by_hand = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
    assert by_hand == EXPECTED_SIGN
    assert sign(TIMESTAMP, SECRET) == EXPECTED_SIGN


def test_webhook_cards_are_small_and_carry_link_buttons_only(w16_digest: Digest) -> None:
    cards = webhook_cards(w16_digest)
    assert len(cards) >= 2
    for card in cards:
        assert card_problem(card) is None
        assert card_bytes(card) <= WEBHOOK_CARD_BYTES
        for element in card["body"]["elements"]:
            if element["tag"] == "button":
                assert [b["type"] for b in element["behaviors"]] == ["open_url"]
    links = [e for e in cards[0]["body"]["elements"] if e["tag"] == "button"]
    assert [e["text"]["content"] for e in links] == [f"#{n}" for n in w16_digest.key_prs[:3]]
    text = json.dumps(cards, ensure_ascii=False)
    for number in w16_digest.key_prs:  # the whole key-PR table is there, nothing dropped
        assert f"#{number}" in text


async def test_signed_push_is_accepted_and_a_wrong_secret_is_refused(w16_digest: Digest) -> None:
    cards = webhook_cards(w16_digest)
    with FakeFeishuAPI() as fake:
        fake.webhook_secret = SECRET
        url = f"{fake.base_url}/open-apis/bot/v2/hook/test-hook"
        async with httpx.AsyncClient() as http:
            await push_cards(url, SECRET, cards, http=http, clock=lambda: TIMESTAMP)
            assert [p["card"] for p in fake.webhook_posts] == cards
            assert {(p["timestamp"], p["sign"]) for p in fake.webhook_posts} == {(str(TIMESTAMP), EXPECTED_SIGN)}
            with pytest.raises(FeishuAPIError) as refused:
                await push_cards(url, "not-the-secret", cards[:1], http=http)
    assert refused.value.code == 19021
