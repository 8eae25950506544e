"""Platform-limit checks shared by the renderer tests and the real-data tests."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from slack_sdk.models.blocks import Block

from bot.cards import feishu, slack
from bot.cards.escape import utf16_len


def strings(node: object, key: str | None = None) -> Iterator[tuple[str | None, str]]:
    """Every (key, string) pair inside a JSON-like tree."""
    if isinstance(node, dict):
        for k, value in node.items():
            yield from strings(value, k)
    elif isinstance(node, list):
        for item in node:
            yield from strings(item, key)
    elif isinstance(node, str):
        yield key, node


def slack_texts(messages: list[dict[str, Any]]) -> list[str]:
    """All visible texts of the messages, in order (fallbacks excluded)."""
    return [text for m in messages for key, text in strings(m["blocks"]) if key == "text"]


def feishu_texts(cards: list[dict[str, Any]]) -> list[str]:
    """All markdown contents of the cards, in order."""
    return [e["content"] for card in cards for e in card["body"]["elements"] if e["tag"] == "markdown"]


def check_slack(messages: list[dict[str, Any]], caplog: Any = None) -> None:
    """Assert every Slack limit prhub promises (see ``bot.cards.slack``) and slack_sdk validation."""
    assert messages
    for message in messages:
        assert set(message) == {"text", "blocks"}
        assert message["text"].strip(), "fallback text must not be empty"
        blocks = message["blocks"]
        assert 0 < len(blocks) <= slack.MAX_BLOCKS
        total = 0
        for block in blocks:
            if caplog is not None:
                caplog.clear()
            parsed = Block.parse(block)
            assert parsed is not None, f"unknown block {block}"
            parsed.validate_json()
            if caplog is not None:
                assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
            for key, text in strings(block):
                if key == "text":
                    assert text.strip(), f"empty text object in {block}"
                    total += utf16_len(text)
            kind = block["type"]
            if kind == "header":
                assert utf16_len(block["text"]["text"]) <= slack.HEADER_TEXT
            if kind == "section":
                assert utf16_len(block["text"]["text"]) <= slack.SECTION_TEXT
            if kind == "context":
                assert 0 < len(block["elements"]) <= slack.CONTEXT_ELEMENTS
            if kind == "image":
                assert block["slack_file"]["id"].startswith("F"), block
                assert 0 < utf16_len(block["alt_text"]) <= slack.IMAGE_ALT
                assert 0 < utf16_len(block["title"]["text"]) <= slack.IMAGE_TITLE
            for element in [*block.get("elements", []), block.get("accessory", {})]:
                if element.get("type") == "button":
                    assert utf16_len(element["text"]["text"]) <= slack.BUTTON_TEXT
                    assert len(element["value"]) <= slack.ACTION_VALUE
                    if "url" in element:
                        assert element["url"].startswith(("https://", "http://"))
                        assert len(element["url"]) <= slack.BUTTON_URL
        assert total <= slack.MESSAGE_TEXT_BUDGET


def check_feishu(cards: list[dict[str, Any]]) -> None:
    """Assert the JSON 2.0 shape and the size bound of every card."""
    assert cards
    for card in cards:
        assert card["schema"] == "2.0"
        assert card["config"]["update_multi"] is True
        assert card["header"]["title"]["tag"] == "plain_text"
        assert card["header"]["title"]["content"].strip()
        elements = card["body"]["elements"]
        assert 0 < len(elements) <= feishu.MAX_ELEMENTS
        for element in elements:
            assert element["tag"] in {"markdown", "hr", "button", "img"}
            if element["tag"] == "markdown":
                assert element["content"].strip()
                assert len(element["content"]) <= feishu.ELEMENT_TEXT
            if element["tag"] == "button":
                behavior = element["behaviors"][0]
                assert behavior["type"] in {"callback", "open_url"}
                if behavior["type"] == "open_url":
                    assert behavior["default_url"].startswith(("https://", "http://"))
                else:
                    assert isinstance(behavior["value"], dict)
            if element["tag"] == "img":
                assert element["img_key"]
                assert element["alt"]["tag"] == "plain_text"
                assert 0 < len(element["alt"]["content"]) <= feishu.IMAGE_TEXT
                assert 0 < len(element["title"]["content"]) <= feishu.IMAGE_TEXT
        size = len(json.dumps(card, ensure_ascii=False).encode())
        assert size < feishu.CARD_BYTES
        assert size == feishu.card_bytes(card)
