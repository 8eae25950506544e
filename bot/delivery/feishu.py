"""Feishu: the Open API as the bot uses it (who am I, reply in a thread, send to a chat), and the
:class:`~bot.delivery.Deliverer` of the Feishu app on it.

Built on lark-oapi's ``lark.Client`` (tenant access token fetched and cached by
the SDK from the app id and secret; ``domain`` = ``PRHUB_FEISHU_API_URL``, e.g.
``https://open.larksuite.com`` or a local fake) and its ``im.v1.message``
request builders. The SDK is imported with this module, on the importing
thread: its websocket part takes that thread's event loop at import time, so
importing it first from a worker thread would leave a stray loop behind. The
SDK's token step is blocking, so every call runs in a
worker thread and the bot's event loop never waits on the network.

Delivery rules:

- **rate limits** — HTTP 429, or codes ``99991400`` / ``230020``: wait the
  ``x-ogw-ratelimit-reset`` seconds (1 s when absent), up to :data:`MAX_RETRIES`
  times (tenacity); sends to one chat are also paced, 5 per second
  (:mod:`bot.delivery.pacing`, the process's one pacer);
- **cards rejected** — ``230025`` (message too large) or ``230099`` (card content
  could not be built: malformed JSON, too many elements): the card is split in
  two by its elements and each half sent, recursively; a single element still
  rejected goes out as a ``post`` (rich text) message. Nothing is dropped.

- **pictures** — :meth:`FeishuClient.upload_image` uploads a PNG as a message image
  (``POST /open-apis/im/v1/images``, ``image_type=message``; the app needs ``im:resource``) and
  returns its ``image_key`` for a card's ``img`` element; a card rejected while it holds pictures
  is sent again without them first (logged).

Errors: every failure is a :class:`FeishuAPIError` (``code``, ``msg``,
``status``) raised from here; SDK exceptions (token refused, connection errors)
are wrapped with ``from``.

:class:`FeishuDeliverer` posts at a :class:`~bot.delivery.Place`: under a message (every card a
reply in its thread), or into a chat (the first card, then the rest in the first one's thread).
The anchor is the first card's message id, the ``open_message_id`` a press on its buttons reports.
Cards carry an idempotency ``uuid`` made from the post's ``key`` and the card's position.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import lark_oapi as lark
from lark_oapi.api.im.v1 import (
    CreateImageRequest,
    CreateImageRequestBody,
    CreateMessageRequest,
    CreateMessageRequestBody,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)
from lark_oapi.core.enum import AccessTokenType, HttpMethod
from lark_oapi.core.model import BaseRequest
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from bot.cards.alert import AlertBatch, render_batch_feishu
from bot.cards.chat import render_reply_feishu
from bot.cards.extras import NO_EXTRAS, CardExtras, CardImage
from bot.cards.feishu import render_feishu
from bot.delivery import Message, Place, Posted
from bot.delivery.media import CardMedia
from bot.delivery.pacing import Pacer
from bot.errors import DeliveryError
from bot.models import Digest
from bot.replies import Reply

if TYPE_CHECKING:
    from bot.cards.charts import Chart
    from bot.delivery.health import PlatformState

log = logging.getLogger(__name__)

__all__ = ["FeishuAPIError", "FeishuClient", "FeishuDeliverer", "Target", "card_to_post"]

RATE_LIMIT_CODES = frozenset({99991400, 230020})
CARD_REJECTED_CODES = frozenset({230025, 230099})
MAX_RETRIES = 5
MAX_WAIT_S = 60.0


class FeishuAPIError(DeliveryError):
    """The Open API (or a webhook) refused a call, or could not be reached (``status`` 0).

    Attributes:
        code: Feishu's numeric code (-1 when none came).
        msg: Feishu's message.
    """

    def __init__(self, message: str, *, code: int = -1, msg: str = "", status: int = 0) -> None:
        super().__init__(message, code=code, status=status)
        self.code: int = code
        self.msg = msg


class _RateLimited(Exception):
    """A send answered with a rate limit; ``result`` says how long to wait."""

    def __init__(self, result: _Result) -> None:
        super().__init__(f"{result.code} {result.msg}")
        self.result = result


@dataclass(frozen=True)
class Target:
    """Where a message goes: under ``reply_to`` (a message id, in its thread) or into ``chat_id``."""

    reply_to: str | None = None
    chat_id: str | None = None
    in_thread: bool = True

    @property
    def key(self) -> str:
        """The chat-or-thread used for pacing."""
        return self.reply_to or self.chat_id or ""


@dataclass(frozen=True)
class _Result:
    code: int
    msg: str
    status: int
    retry_after_s: float | None
    message_id: str | None


Sleep = Callable[[float], Awaitable[None]]


class FeishuClient:
    """Async facade over lark-oapi's client.

    Args:
        app_id: ``FEISHU_APP_ID``.
        app_secret: ``FEISHU_APP_SECRET``.
        base_url: the Open API origin (``https://open.feishu.cn``, Lark
            ``https://open.larksuite.com``, tests ``http://127.0.0.1:PORT``).
        pacer: the process's pacer (sends to one chat or thread are paced as ``feishu``).
        sleep: how to wait out rate limits (tests pass a recorder).
        timeout_s: per-request timeout.
        state: told how each request ended (:class:`~bot.delivery.health.PlatformState`; ``/readyz``).
    """

    def __init__(self, *, app_id: str, app_secret: str, base_url: str, pacer: Pacer,
                 sleep: Sleep = asyncio.sleep, timeout_s: float = 15.0, state: PlatformState | None = None) -> None:
        self._lark: Any = (
            lark.Client.builder().app_id(app_id).app_secret(app_secret).domain(base_url.rstrip("/"))
            .timeout(timeout_s).log_level(lark.LogLevel.WARNING).build()
        )
        self._pacer = pacer
        self._sleep = sleep
        self._open_id: str | None = None
        self._state = state

    def _called(self, ok: bool, error: str | None = None) -> None:
        if self._state is not None:
            self._state.called(ok, error)

    async def check_credentials(self) -> None:
        """Ask Feishu whether it accepts the app's credentials (the bot info, with a tenant token).

        Raises:
            FeishuAPIError: refused (``code``: Feishu's), or Feishu could not be reached.
        """
        await asyncio.to_thread(self._bot_info)

    async def bot_open_id(self) -> str:
        """The bot's own ``open_id`` (``GET /open-apis/bot/v3/info``), fetched once.

        Raises:
            FeishuAPIError: the call failed or the answer has no ``bot.open_id``.
        """
        if self._open_id is None:
            body = await asyncio.to_thread(self._bot_info)
            open_id = body.get("bot", {}).get("open_id") if isinstance(body.get("bot"), dict) else None
            if not isinstance(open_id, str) or not open_id:
                raise FeishuAPIError(f"bot info has no open_id: {body}", code=int(body.get("code", -1)))
            self._open_id = open_id
        return self._open_id

    def _bot_info(self) -> dict[str, Any]:
        return self._call(HttpMethod.GET, "/open-apis/bot/v3/info", None, what="bot info")

    def _call(self, method: HttpMethod, uri: str, body: dict[str, Any] | None, *, what: str) -> dict[str, Any]:
        """One raw Open API request with the tenant token (the calls lark-oapi has no model for).

        Raises:
            FeishuAPIError: the request failed or the answer's ``code`` is not 0.
        """
        builder = BaseRequest.builder().http_method(method).uri(uri).token_types({AccessTokenType.TENANT})
        if body is not None:
            builder = builder.body(body)
        try:
            response = self._lark.request(builder.build())
        except Exception as exc:  # the SDK raises bare exceptions for token and transport failures
            self._called(False, type(exc).__name__)
            raise FeishuAPIError(f"{what} failed: {exc}") from exc
        raw = response.raw
        try:
            answer = json.loads(bytes(raw.content or b"{}"))
        except ValueError as exc:
            self._called(False, f"http_{raw.status_code}")
            raise FeishuAPIError(f"{what}: not JSON", status=int(raw.status_code or 0)) from exc
        if not isinstance(answer, dict) or answer.get("code") != 0:
            code = answer.get("code", -1) if isinstance(answer, dict) else -1
            self._called(False, str(code))
            raise FeishuAPIError(f"{what} refused: {answer}", code=int(code) if isinstance(code, int) else -1,
                                 status=int(raw.status_code or 0))
        self._called(True)
        return cast("dict[str, Any]", answer)

    async def send_ephemeral(self, chat_id: str, open_id: str, card: dict[str, Any]) -> str:
        """A card only ``open_id`` sees in group ``chat_id`` (``POST /open-apis/ephemeral/v1/send``; not in
        lark-oapi's models, so a raw request).

        Returns:
            The ephemeral message's id.

        Raises:
            FeishuAPIError: refused (not a group the bot is in, a p2p chat, a card Feishu rejects).
        """
        await self._pacer.wait("feishu", chat_id)
        body = {"chat_id": chat_id, "open_id": open_id, "msg_type": "interactive", "card": card}
        answer = await asyncio.to_thread(self._call, HttpMethod.POST, "/open-apis/ephemeral/v1/send", body,
                                         what="ephemeral card")
        data = answer.get("data") if isinstance(answer.get("data"), dict) else {}
        return str((data or {}).get("message_id", ""))

    def _retrying(self) -> AsyncRetrying:
        """Tries of one call: rate limits waited out (:func:`_rate_limit_wait`), at most :data:`MAX_RETRIES` waits."""
        return AsyncRetrying(stop=stop_after_attempt(MAX_RETRIES + 1), wait=_rate_limit_wait,
                             retry=retry_if_exception_type(_RateLimited), sleep=self._sleep, reraise=True)

    async def _tried(self, what: str, once: Callable[[], Awaitable[_Result]], *, needs_id: bool = True) -> str:
        """``once()`` until it succeeds (code 0, and a message id where ``needs_id``), rate limits waited out
        (:meth:`_retrying`); the message id it gave (``""`` when none came and none was needed).

        Raises:
            FeishuAPIError: ``"{what} failed: …"`` — refused for a reason other than rate limiting, or still
                rate-limited after :data:`MAX_RETRIES` waits.
        """
        try:
            async for attempt in self._retrying():
                with attempt:
                    result = await once()
                    self._called(result.code == 0, None if result.code == 0 else str(result.code))
                    if result.code == 0 and (result.message_id or not needs_id):
                        return result.message_id or ""
                    if result.status == 429 or result.code in RATE_LIMIT_CODES:
                        raise _RateLimited(result)
                    raise FeishuAPIError(f"{what} failed: {result.code} {result.msg}", code=result.code,
                                         msg=result.msg, status=result.status)
        except _RateLimited as exc:
            limited = exc.result
            raise FeishuAPIError(f"{what} failed: {limited.code} {limited.msg} (still rate-limited after "
                                 f"{MAX_RETRIES} waits)", code=limited.code, msg=limited.msg,
                                 status=limited.status) from exc
        raise AssertionError("unreachable: tenacity either returns or re-raises")  # pragma: no cover

    async def send(self, target: Target, msg_type: str, content: dict[str, Any], *, uuid: str | None = None) -> str:
        """Send one message, waiting out rate limits.

        Args:
            target: reply (in thread) or chat.
            msg_type: ``interactive``, ``post`` or ``text``.
            content: the message content; serialised to the JSON string the API expects.
            uuid: idempotency key (Feishu sends one message per uuid within an hour).

        Returns:
            The new message's id.

        Raises:
            FeishuAPIError: refused for a reason other than rate limiting, or still
                rate-limited after :data:`MAX_RETRIES` waits.
        """
        text = json.dumps(content, ensure_ascii=False)

        async def once() -> _Result:
            await self._pacer.wait("feishu", target.key)
            return await asyncio.to_thread(self._send_once, target, msg_type, text, uuid)

        return await self._tried(f"send {msg_type}", once)

    async def upload_image(self, png: bytes) -> str:
        """Upload ``png`` as a message image (``POST /open-apis/im/v1/images``), waiting out rate limits.

        Returns:
            Its ``image_key`` (for a card's ``img`` element).

        Raises:
            FeishuAPIError: refused (e.g. ``99991672``: the app lacks ``im:resource``), or still
                rate-limited after :data:`MAX_RETRIES` waits.
        """
        return await self._tried("image upload", lambda: asyncio.to_thread(self._upload_once, png))

    def _upload_once(self, png: bytes) -> _Result:
        """One upload; the ``image_key`` travels in ``_Result.message_id``."""
        image = ("chart.png", io.BytesIO(png), "image/png")  # a multipart file part with its name and type
        body = CreateImageRequestBody.builder().image_type("message").image(image).build()
        request = CreateImageRequest.builder().request_body(body).build()
        try:
            response = self._lark.im.v1.image.create(request)
        except Exception as exc:  # token refused, connection failed: the SDK raises plain exceptions
            raise FeishuAPIError(f"image upload failed: {exc}") from exc
        raw = response.raw
        headers = {str(k).lower(): str(v) for k, v in (raw.headers or {}).items()}
        data = response.data
        return _Result(
            code=int(response.code if response.code is not None else -1),
            msg=str(response.msg or ""),
            status=int(raw.status_code or 0),
            retry_after_s=_seconds(headers.get("x-ogw-ratelimit-reset")),
            message_id=str(data.image_key) if data is not None and data.image_key else None,
        )

    async def send_cards(self, target: Target, cards: list[dict[str, Any]], *, key: str = "") -> list[str]:
        """Send ``cards`` in order; a card Feishu rejects is split, at last sent as a post.

        Args:
            target: where every card goes (all replies stay in the same thread).
            cards: card JSON 2.0 dicts (``bot.cards.feishu`` shapes).
            key: a stable id of this answer (e.g. the message id); with the card's
                position it makes each send's ``uuid``, so a retried answer is not doubled.

        Returns:
            The ids of the messages sent (more than ``len(cards)`` after splits).
        """
        sent: list[str] = []
        for index, card in enumerate(cards):
            sent += await self._send_card(target, card, f"{key}:{index}" if key else "")
        return sent

    async def _send_card(self, target: Target, card: dict[str, Any], key: str) -> list[str]:
        uuid = _uuid(key) if key else None
        try:
            return [await self.send(target, "interactive", card, uuid=uuid)]
        except FeishuAPIError as exc:
            if exc.code not in CARD_REJECTED_CODES:
                raise
            plain = _without_images(card)
            if plain is not None:
                log.warning("Feishu rejected a card with its charts (%s); sending it without them", exc)
                return await self._send_card(target, plain, f"{key}i" if key else "")
        elements = card.get("body", {}).get("elements", [])
        if len(elements) > 1:
            half = len(elements) // 2
            first, second = _with_elements(card, elements[:half]), _with_elements(card, elements[half:])
            return [*await self._send_card(target, first, f"{key}a" if key else ""),
                    *await self._send_card(target, second, f"{key}b" if key else "")]
        return [await self.send(target, "post", card_to_post(card), uuid=_uuid(f"{key}p") if key else None)]

    async def patch_card(self, message_id: str, card: dict[str, Any]) -> None:
        """Replace the card of message ``message_id`` (``PATCH /open-apis/im/v1/messages/{id}``; the card must
        have been sent with ``config.update_multi`` and be at most 14 days old), waiting out rate limits.

        Raises:
            FeishuAPIError: refused (not a card of this bot, too old, an invalid card), or still rate-limited
                after :data:`MAX_RETRIES` waits.
        """
        text = json.dumps(card, ensure_ascii=False)

        async def once() -> _Result:
            await self._pacer.wait("feishu", f"patch:{message_id}")
            return await asyncio.to_thread(self._patch_once, message_id, text)

        await self._tried("update card", once, needs_id=False)

    def _patch_once(self, message_id: str, content: str) -> _Result:
        try:
            body = PatchMessageRequestBody.builder().content(content).build()
            response = self._lark.im.v1.message.patch(
                PatchMessageRequest.builder().message_id(message_id).request_body(body).build())
        except Exception as exc:  # token refused, connection failed: the SDK raises plain exceptions
            raise FeishuAPIError(f"update card failed: {exc}") from exc
        raw = response.raw
        headers = {str(k).lower(): str(v) for k, v in (raw.headers or {}).items()}
        return _Result(code=int(response.code if response.code is not None else -1), msg=str(response.msg or ""),
                       status=int(raw.status_code or 0), retry_after_s=_seconds(headers.get("x-ogw-ratelimit-reset")),
                       message_id=message_id)

    def _send_once(self, target: Target, msg_type: str, content: str, uuid: str | None) -> _Result:
        try:
            if target.reply_to:
                body = ReplyMessageRequestBody.builder().content(content).msg_type(msg_type)
                body = body.reply_in_thread(target.in_thread)
                if uuid:
                    body = body.uuid(uuid)
                request = ReplyMessageRequest.builder().message_id(target.reply_to).request_body(body.build()).build()
                response = self._lark.im.v1.message.reply(request)
            else:
                body = CreateMessageRequestBody.builder().receive_id(target.chat_id or "").content(content)
                body = body.msg_type(msg_type)
                if uuid:
                    body = body.uuid(uuid)
                request = (CreateMessageRequest.builder().receive_id_type("chat_id")
                           .request_body(body.build()).build())
                response = self._lark.im.v1.message.create(request)
        except Exception as exc:  # token refused, connection failed: the SDK raises plain exceptions
            raise FeishuAPIError(f"send {msg_type} failed: {exc}") from exc
        raw = response.raw
        headers = {str(k).lower(): str(v) for k, v in (raw.headers or {}).items()}
        reset = headers.get("x-ogw-ratelimit-reset")
        data = response.data
        return _Result(
            code=int(response.code if response.code is not None else -1),
            msg=str(response.msg or ""),
            status=int(raw.status_code or 0),
            retry_after_s=_seconds(reset),
            message_id=str(data.message_id) if data is not None and data.message_id else None,
        )


def _rate_limit_wait(state: RetryCallState) -> float:
    """Seconds before the next try: the answer's ``x-ogw-ratelimit-reset`` (1 s when absent), at most
    :data:`MAX_WAIT_S`."""
    exc = state.outcome.exception() if state.outcome is not None else None
    reset = exc.result.retry_after_s if isinstance(exc, _RateLimited) else None
    return min(reset or 1.0, MAX_WAIT_S)


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


def _uuid(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _with_elements(card: dict[str, Any], elements: list[Any]) -> dict[str, Any]:
    return {**card, "body": {**card.get("body", {}), "elements": elements}}


def _without_images(card: dict[str, Any]) -> dict[str, Any] | None:
    """``card`` without its ``img`` elements, or ``None`` when it has none."""
    elements = card.get("body", {}).get("elements", [])
    kept = [e for e in elements if e.get("tag") != "img"]
    return _with_elements(card, kept) if len(kept) < len(elements) else None


def card_to_post(card: dict[str, Any]) -> dict[str, Any]:
    """A card as a ``post`` message: its title, and each markdown element as an ``md`` paragraph.

    Buttons become their label (their callbacks cannot travel in a post).
    """
    title = str(card.get("header", {}).get("title", {}).get("content", ""))
    paragraphs: list[list[dict[str, str]]] = []
    for element in card.get("body", {}).get("elements", []):
        if element.get("tag") == "markdown":
            paragraphs.append([{"tag": "md", "text": str(element.get("content", ""))}])
        elif element.get("tag") == "button":
            paragraphs.append([{"tag": "text", "text": str(element.get("text", {}).get("content", ""))}])
    return {"zh_cn": {"title": title, "content": paragraphs}}


class FeishuDeliverer:
    """:class:`~bot.delivery.Deliverer` of the Feishu app (see the module docstring).

    Args:
        client: the process's one Open API client.
        media: makes the digest cards' page links and charts (``None``: cards without them).
    """

    platform = "feishu"

    def __init__(self, client: FeishuClient, *, media: CardMedia | None = None) -> None:
        self.client = client
        self._media = media

    def digest_messages(self, digest: Digest, extras: CardExtras | None = None) -> list[Message]:
        """See :meth:`Deliverer.digest_messages` (:func:`bot.cards.feishu.render_feishu`)."""
        return render_feishu(digest, extras)

    def alert_messages(self, batch: AlertBatch) -> list[Message]:
        """See :meth:`Deliverer.alert_messages`."""
        return render_batch_feishu(batch)

    async def person_timezone(self, user: str) -> str | None:
        """See :meth:`Deliverer.person_timezone`: Feishu gives the bot none (the channel's zone applies)."""
        return None

    def reply_messages(self, reply: Reply, extras: CardExtras | None = None) -> list[Message]:
        """See :meth:`Deliverer.reply_messages`."""
        return render_reply_feishu(reply, extras)

    async def card_extras(self, place: Place, digest: Digest) -> CardExtras:
        """See :meth:`Deliverer.card_extras` (charts by :meth:`upload_charts`; the place does not matter:
        Feishu images belong to the app)."""
        if self._media is None:
            return NO_EXTRAS
        return await self._media.extras(digest, self.upload_charts)

    async def upload_charts(self, charts: Sequence[Chart]) -> tuple[CardImage, ...]:
        """Upload each chart as a message image (:meth:`FeishuClient.upload_image`); the ones that were
        uploaded before one failed are kept.

        Raises:
            FeishuAPIError: the first upload already failed.
        """
        images: list[CardImage] = []
        for chart in charts:
            try:
                key = await self.client.upload_image(chart.png)
            except FeishuAPIError:
                if not images:
                    raise
                log.warning("chart %s not uploaded; the card shows the others", chart.name, exc_info=True)
                continue
            images.append(CardImage(ref=key, name=chart.name, title=chart.title, alt=chart.alt))
        return tuple(images)

    async def edit(self, place: Place, posted: Posted, messages: Sequence[Message], *,
                   unchanged: Collection[int] = ()) -> Posted:
        """See :meth:`Deliverer.edit` (the message patch; new cards as replies in the thread of the anchor)."""
        ids = list(posted.ids)
        extra: list[Message] = []
        for index, card in enumerate(messages):
            if index < len(ids) and index in unchanged:
                continue
            if index < len(ids):
                await self.client.patch_card(ids[index], dict(card))
            else:
                extra.append(card)
        if extra:
            anchor = posted.anchor or (ids[0] if ids else None)
            if anchor is None:
                raise DeliveryError("nothing to add the new cards under", code="not_editable")
            ids += await self.client.send_cards(Target(reply_to=anchor, in_thread=True), extra)
        return Posted(tuple(ids), posted.anchor)

    async def post(self, place: Place, messages: Sequence[Message], *, key: str = "") -> Posted:
        """See :meth:`Deliverer.post`.

        Raises:
            FeishuAPIError: Feishu refused a card for good (rejected cards are split first).
            DeliveryError: the conversation is not a chat (``oc_…``): an ``open_id`` cannot be
                reached this way.
        """
        if not messages:
            raise ValueError("nothing to post")
        cards = list(messages)
        if place.thread:
            ids = await self.client.send_cards(Target(reply_to=place.thread, in_thread=True), cards, key=key)
            return Posted(tuple(ids), ids[0] if ids else None)
        if not place.conversation.startswith("oc_"):
            raise DeliveryError(f"Feishu messages go to a chat (oc_…), not to {place.conversation!r}")
        first = await self.client.send_cards(Target(chat_id=place.conversation), cards[:1], key=key)
        rest: list[str] = []
        if len(cards) > 1 and first:
            rest = await self.client.send_cards(Target(reply_to=first[0], in_thread=True), cards[1:],
                                                key=f"{key}:rest" if key else "")
        return Posted((*first, *rest), first[0] if first else None)
