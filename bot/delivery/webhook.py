"""Push cards to a Feishu custom group-bot webhook (push-only installs: no app, no callbacks).

A webhook is a URL ``https://open.feishu.cn/open-apis/bot/v2/hook/<id>`` and,
when signature checking is on, a secret. The signature, per Feishu's custom-bot
documentation: the string ``f"{timestamp}\\n{secret}"`` is the HMAC-SHA256
**key**, the message is empty, and the digest is base64-encoded; ``timestamp``
is in seconds and must be within an hour of Feishu's clock. The body::

    {"timestamp": "1599360473", "sign": "…", "msg_type": "interactive", "card": {…}}

Feishu answers ``{"code": 0, "msg": "success", "data": {}}``; anything else
(``19021`` bad signature, ``11232`` too frequent, …) raises
:class:`~bot.delivery.feishu.FeishuAPIError` — except ``11232`` and HTTP 429,
which are waited out (tenacity, :data:`MAX_RETRIES` times, ``x-ogw-ratelimit-reset``
seconds or 1 s).

Webhook bodies are limited to about 20 KB and their cards cannot call back: the digest
goes out as :func:`bot.cards.feishu.render_feishu_webhook` draws it. A webhook cannot upload a
picture either, so its card carries no chart — with ``PRHUB_PUBLIC_URL`` set it links to the
digest's page instead (完整报告, where the charts are).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from bot.cards.alert import AlertBatch, render_batch_feishu
from bot.cards.extras import NO_EXTRAS, CardExtras
from bot.cards.feishu import WEBHOOK_CARD_BYTES, render_feishu_webhook
from bot.delivery import Message, Place, Posted
from bot.delivery.feishu import FeishuAPIError
from bot.delivery.media import CardMedia
from bot.delivery.pacing import Pacer
from bot.errors import DeliveryError
from bot.models import Digest
from bot.replies import Reply

__all__ = ["MAX_RETRIES", "WebhookDeliverer", "push_cards", "sign"]

RATE_LIMITED = 11232
MAX_RETRIES = 3


class _RateLimited(Exception):
    def __init__(self, wait_s: float) -> None:
        super().__init__(f"rate limited, retry in {wait_s:g} s")
        self.wait_s = wait_s


def sign(timestamp: int, secret: str) -> str:
    """The ``sign`` field for ``timestamp`` (seconds) and the webhook's ``secret``."""
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode("ascii")


async def push_cards(url: str, secret: str | None, cards: Sequence[dict[str, Any]], *, http: httpx.AsyncClient,
                     clock: Callable[[], float] = time.time,
                     sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                     pace: Callable[[], Awaitable[None]] | None = None) -> None:
    """Post each card to the webhook ``url``, signed when ``secret`` is set.

    Args:
        http: the process's HTTP client.
        clock: seconds since the epoch (the signature's timestamp).
        sleep: how to wait out a rate limit (tests pass a recorder).
        pace: awaited before each post (the pacer of the webhook's chat).

    Raises:
        FeishuAPIError: Feishu refused a card (the code and message are kept), or
            the webhook could not be reached.
    """
    for card in cards:
        retrying = AsyncRetrying(stop=stop_after_attempt(MAX_RETRIES + 1), wait=_wait, sleep=sleep,
                                 retry=retry_if_exception_type(_RateLimited), reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    if pace is not None:
                        await pace()
                    await _post(url, secret, card, http=http, clock=clock)
        except _RateLimited as exc:
            raise FeishuAPIError(f"webhook refused the card: {RATE_LIMITED} too frequent, still after "
                                 f"{MAX_RETRIES} waits", code=RATE_LIMITED, status=429) from exc


async def _post(url: str, secret: str | None, card: dict[str, Any], *, http: httpx.AsyncClient,
                clock: Callable[[], float]) -> None:
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
        return
    if response.status_code == 429 or code == RATE_LIMITED:
        raise _RateLimited(float(response.headers.get("x-ogw-ratelimit-reset", "1") or 1))
    msg = str(answer.get("msg", ""))
    raise FeishuAPIError(f"webhook refused the card: {code} {msg}", code=code, msg=msg, status=response.status_code)


def _wait(state: RetryCallState) -> float:
    exc = state.outcome.exception() if state.outcome is not None else None
    return exc.wait_s if isinstance(exc, _RateLimited) else 1.0


@dataclass
class WebhookDeliverer:
    """:class:`~bot.delivery.Deliverer` on one Feishu custom group-bot webhook (push-only).

    Args:
        name: the ``[feishu_webhooks.NAME]`` of the config (the place's conversation).
        url, secret: the webhook and its signing secret.
        http: the process's HTTP client.
        pacer: the process's pacer (webhooks are paced as ``feishu-webhook``).
        media: makes the digest cards' page links (``None``: no link; a webhook takes no picture).
    """

    name: str
    url: str
    secret: str | None
    http: httpx.AsyncClient
    pacer: Pacer
    media: CardMedia | None = None
    platform: str = field(default="feishu-webhook", init=False)

    def digest_messages(self, digest: Digest, extras: CardExtras | None = None) -> list[Message]:
        """See :meth:`Deliverer.digest_messages`: link buttons only (the page's among them when ``extras``
        has it), every card within the webhook's limit."""
        return render_feishu_webhook(digest, extras)

    def alert_messages(self, batch: AlertBatch) -> list[Message]:
        """See :meth:`Deliverer.alert_messages` (a one-PR card's one button is a link; cards within the
        webhook's body limit)."""
        return render_batch_feishu(batch, card_bytes=WEBHOOK_CARD_BYTES - 2_000)

    async def person_timezone(self, user: str) -> str | None:
        """See :meth:`Deliverer.person_timezone`: a webhook has no people."""
        return None

    def reply_messages(self, reply: Reply, extras: CardExtras | None = None) -> list[Message]:
        """A webhook never answers a conversation.

        Raises:
            DeliveryError: always.
        """
        raise DeliveryError("a Feishu webhook only pushes; it cannot answer a conversation")

    async def card_extras(self, place: Place, digest: Digest) -> CardExtras:
        """See :meth:`Deliverer.card_extras`: the page link only (a webhook cannot upload a picture)."""
        return await self.media.extras(digest, None) if self.media is not None else NO_EXTRAS

    async def edit(self, place: Place, posted: Posted, messages: Sequence[Message], *,
                   unchanged: Collection[int] = ()) -> Posted:
        """A webhook's messages cannot be edited: always :class:`~bot.errors.DeliveryError` (``not_editable``)."""
        raise DeliveryError(f"the Feishu webhook {self.name!r} cannot edit what it posted", code="not_editable")

    async def post(self, place: Place, messages: Sequence[Message], *, key: str = "") -> Posted:
        """See :meth:`Deliverer.post`: every card in order, into the webhook's group (no threads, no ids).

        Raises:
            FeishuAPIError: Feishu refused a card, or the webhook could not be reached.
            DeliveryError: ``place`` names a person or a thread (a webhook reaches its one group).
        """
        if not messages:
            raise ValueError("nothing to post")
        if place.thread or place.conversation != self.name:
            raise DeliveryError(f"the Feishu webhook {self.name!r} reaches its own group only")

        async def pace() -> None:
            await self.pacer.wait(self.platform, self.name)

        await push_cards(self.url, self.secret, messages, http=self.http, pace=pace)
        return Posted()
