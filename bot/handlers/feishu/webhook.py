"""Push cards to a Feishu custom group-bot webhook (push-only installs: no app, no callbacks).

A webhook is a URL ``https://open.feishu.cn/open-apis/bot/v2/hook/<id>`` and,
when signature checking is on, a secret. The signature, per Feishu's custom-bot
documentation: the string ``f"{timestamp}\\n{secret}"`` is the HMAC-SHA256
**key**, the message is empty, and the digest is base64-encoded; ``timestamp``
is in seconds and must be within an hour of Feishu's clock. The body::

    {"timestamp": "1599360473", "sign": "…", "msg_type": "interactive", "card": {…}}

Feishu answers ``{"code": 0, "msg": "success", "data": {}}``; anything else
(``19021`` bad signature, ``11232`` too frequent, …) raises
:class:`~bot.handlers.feishu.client.FeishuAPIError` — except ``11232`` and HTTP
429, which are waited out.

Webhook bodies are limited to about 20 KB and their cards cannot call back:
:func:`webhook_cards` turns the digest's cards into cards of at most
:data:`WEBHOOK_CARD_BYTES` with link buttons (``open_url``) only.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from bot.cards.feishu import card_bytes, render_feishu
from bot.handlers.feishu.client import FeishuAPIError
from bot.models import Digest

__all__ = ["WEBHOOK_CARD_BYTES", "push_cards", "sign", "webhook_cards"]

WEBHOOK_CARD_BYTES = 18_000
"""Upper bound of one webhook card's UTF-8 JSON (the body limit is about 20 KB)."""
LINK_BUTTONS = 3
"""Link buttons (the top key PRs) on the first webhook card."""
_RATE_LIMITED = 11232
_MAX_RETRIES = 3


def sign(timestamp: int, secret: str) -> str:
    """The ``sign`` field for ``timestamp`` (seconds) and the webhook's ``secret``."""
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode("ascii")


def webhook_cards(digest: Digest) -> list[dict[str, Any]]:
    """The digest as webhook cards: callback buttons removed, link buttons to the top key PRs
    added to the first card, every card within :data:`WEBHOOK_CARD_BYTES` (more cards when needed;
    nothing is dropped)."""
    by_number = {pr.number: pr for pr in digest.prs}
    links = [
        {"tag": "button", "type": "default", "text": {"tag": "plain_text", "content": f"#{number}"},
         "behaviors": [{"type": "open_url", "default_url": by_number[number].url}]}
        for number in digest.key_prs[:LINK_BUTTONS] if number in by_number
    ]
    out: list[dict[str, Any]] = []
    for index, card in enumerate(render_feishu(digest)):
        elements = [e for e in card["body"]["elements"] if e.get("tag") != "button"]
        if index == 0:
            elements += links
        out += _fit({**card, "body": {**card["body"], "elements": elements}})
    return out


def _fit(card: dict[str, Any]) -> list[dict[str, Any]]:
    """``card`` split by elements until every part is within :data:`WEBHOOK_CARD_BYTES`."""
    elements = card["body"]["elements"]
    if card_bytes(card) <= WEBHOOK_CARD_BYTES or len(elements) < 2:
        return [card]
    half = len(elements) // 2
    return [*_fit({**card, "body": {**card["body"], "elements": elements[:half]}}),
            *_fit({**card, "body": {**card["body"], "elements": elements[half:]}})]


async def push_cards(url: str, secret: str | None, cards: list[dict[str, Any]], *, http: httpx.AsyncClient,
                     clock: Callable[[], float] = time.time,
                     sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
    """Post each card to the webhook ``url``, signed when ``secret`` is set.

    Raises:
        FeishuAPIError: Feishu refused a card (the code and message are kept), or
            the webhook could not be reached.
    """
    for card in cards:
        for attempt in range(_MAX_RETRIES + 1):
            body: dict[str, Any] = {"msg_type": "interactive", "card": card}
            if secret:
                timestamp = int(clock())
                body = {"timestamp": str(timestamp), "sign": sign(timestamp, secret), **body}
            try:
                response = await http.post(url, content=json.dumps(body, ensure_ascii=False).encode(),
                                           headers={"Content-Type": "application/json; charset=utf-8"})
            except httpx.HTTPError as exc:
                raise FeishuAPIError(f"webhook unreachable: {exc}") from exc
            try:
                answer = response.json()
            except ValueError:
                answer = {}
            if not isinstance(answer, dict):
                answer = {}
            raw_code = answer.get("code", answer.get("StatusCode", -1))
            code = raw_code if isinstance(raw_code, int) else -1
            if response.status_code == 200 and code == 0:
                break
            if (response.status_code == 429 or code == _RATE_LIMITED) and attempt < _MAX_RETRIES:
                await sleep(float(response.headers.get("x-ogw-ratelimit-reset", "1") or 1))
                continue
            msg = str(answer.get("msg", ""))
            raise FeishuAPIError(f"webhook refused the card: {code} {msg}", code=code, msg=msg,
                                 status=response.status_code)
