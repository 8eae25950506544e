"""Slack: the :class:`~bot.delivery.Deliverer` on the Web API, and the answers that only a Slack request has.

:meth:`SlackDeliverer.post` sends every message with ``chat.postMessage``: the first in the place's
thread (or the channel), the rest in the thread of the first (or the place's thread). A DM to a
person is a post to their user id (Slack opens the app's DM). The anchor is the thread's root ts,
which a button press on any of these messages reports as ``message.thread_ts`` (or its ``ts``).

A slash command or a button comes with a ``response_url`` (:meth:`SlackDeliverer.respond`,
:meth:`~SlackDeliverer.note`): one message goes through it (this works where the bot is not a
channel member); several are posted with ``chat.postMessage``, the first to the channel and the
rest in its thread, since a ``response_url`` post has no ``ts`` to thread under. When the bot may
not post in the channel (``not_in_channel``, ``channel_not_found``), the messages go through the
``response_url`` instead, as many as Slack accepts there (:data:`RESPONSE_URL_USES`), the last one
saying how to get the rest.

Charts (:meth:`SlackDeliverer.upload_charts`, through :class:`~bot.delivery.media.CardMedia`): one
``files_upload_v2`` call (slack_sdk: ``files.getUploadURLExternal``, the upload,
``files.completeUploadExternal``) shares the PNGs to the place's conversation (its thread when it
has one); Slack finishes an upload asynchronously, so ``files.info`` is asked until every file is
shared there (:data:`FILE_READY_S` at most); then the card shows them in ``image`` blocks by
``slack_file`` id. Needs the ``files:write`` and ``files:read`` scopes. A message Slack refuses with
``invalid_blocks`` while it holds pictures is posted again without them (logged).

Rate limits: the Web API client and the webhook clients carry slack_sdk's
:class:`~slack_sdk.http_retry.builtin_async_handlers.AsyncRateLimitErrorRetryHandler`
(:func:`rate_limited_retries`), which waits for ``Retry-After`` and tries again; sends are paced per
channel (:mod:`bot.delivery.pacing`).

Errors: a Web API refusal raises :class:`~bot.errors.DeliveryError` (``code`` = Slack's error,
chained ``from`` slack_sdk's), a ``response_url`` refusal :class:`ResponseUrlError`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, Literal

import aiohttp
from cachetools import LRUCache
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential

from bot.cards.alert import AlertBatch, render_batch_slack
from bot.cards.chat import render_note_slack, render_reply_slack
from bot.cards.extras import NO_EXTRAS, CardExtras, CardImage
from bot.cards.i18n import chat_phrases
from bot.cards.slack import render_slack
from bot.delivery import Message, Place, Posted
from bot.delivery.media import CardMedia
from bot.delivery.pacing import Pacer
from bot.errors import DeliveryError
from bot.models import Digest, Language
from bot.replies import Reply

if TYPE_CHECKING:
    from bot.cards.charts import Chart

__all__ = [
    "FILE_READY_S",
    "NOT_A_MEMBER",
    "RATE_LIMIT_RETRIES",
    "RESPONSE_URL_USES",
    "SERVER_ERROR_RETRIES",
    "ResponseUrlError",
    "SlackDeliverer",
    "rate_limited_retries",
    "server_error_retries",
]

log = logging.getLogger(__name__)

RATE_LIMIT_RETRIES = 3
SERVER_ERROR_RETRIES = 2
TIMEZONE_TTL_S = 6 * 3600
"""How long a person's time zone from ``users.info`` is kept in the process."""
ZONES_KEPT = 10_000
"""People whose time zones one deliverer keeps (the least recently asked for go first)."""

RESPONSE_URL_USES = 5
"""Slack accepts up to five posts to one ``response_url`` (within 30 minutes)."""
NOT_A_MEMBER = frozenset({"not_in_channel", "channel_not_found"})
FILE_READY_S = 20.0
"""How long an upload may take to be shared in its conversation before the card goes without it."""
FILE_ALT = 1000
"""Characters of a file's ``alt_txt``."""

WebhookFactory = Callable[[str], AsyncWebhookClient]
"""Makes the client of one ``response_url``."""


class ResponseUrlError(DeliveryError):
    """Slack refused a post to a ``response_url`` (``status`` and Slack's error text)."""


class _NotShared(Exception):
    """An uploaded file is not shared in its conversation yet."""


def rate_limited_retries() -> list[AsyncRetryHandler]:
    """The retry handlers every Slack client uses: wait ``Retry-After`` on HTTP 429."""
    return [AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES)]


def server_error_retries() -> list[AsyncRetryHandler]:
    """slack_sdk's handlers for a Slack 5xx and a dropped connection: :data:`SERVER_ERROR_RETRIES` tries
    more, with its exponential back-off (what still fails is a :class:`~bot.errors.DeliveryError`)."""
    return [AsyncServerErrorRetryHandler(max_retry_count=SERVER_ERROR_RETRIES),
            AsyncConnectionErrorRetryHandler(max_retry_count=SERVER_ERROR_RETRIES)]


class SlackDeliverer:
    """:class:`~bot.delivery.Deliverer` on Slack.

    Args:
        client: the process's Web API client (built by :mod:`bot.app`).
        webhook: makes the client of one ``response_url`` (slack_sdk has one per URL).
        pacer: the process's pacer.
        media: makes the digest cards' page links and charts (``None``: cards without them).
        sleep: how to wait between ``files.info`` checks (tests pass a faster one).
    """

    platform = "slack"

    def __init__(self, client: AsyncWebClient, *, webhook: WebhookFactory, pacer: Pacer,
                 media: CardMedia | None = None, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.client = client
        self._webhook = webhook
        self._pacer = pacer
        self._zones: LRUCache[str, tuple[str | None, float]] = LRUCache(maxsize=ZONES_KEPT)
        self._media = media
        self._sleep = sleep

    def digest_messages(self, digest: Digest, extras: CardExtras | None = None) -> list[Message]:
        """See :meth:`Deliverer.digest_messages` (:func:`bot.cards.slack.render_slack`)."""
        return render_slack(digest, extras)

    def alert_messages(self, batch: AlertBatch) -> list[Message]:
        """See :meth:`Deliverer.alert_messages`."""
        return render_batch_slack(batch)

    async def check_credentials(self) -> None:
        """Ask Slack whether it accepts the bot token (``auth.test``).

        Raises:
            DeliveryError: Slack refused it (``code``: Slack's error, ``invalid_auth``, ``token_revoked`` …) or
                could not be reached.
        """
        try:
            await self.client.auth_test()
        except SlackApiError as exc:
            error = str(exc.response.get("error") or "slack_api_error")
            raise DeliveryError(f"Slack refused the bot token: {error}", code=error,
                                status=int(exc.response.status_code or 0)) from exc
        except (SlackClientError, aiohttp.ClientError) as exc:
            raise DeliveryError(f"Slack could not be reached: {type(exc).__name__}",
                                code=type(exc).__name__) from exc

    async def person_timezone(self, user: str) -> str | None:
        """See :meth:`Deliverer.person_timezone`: ``users.info``'s ``tz`` (needs the ``users:read`` scope),
        kept for :data:`TIMEZONE_TTL_S` seconds; a refusal (``missing_scope``, ``user_not_found``) is
        logged and gives ``None``."""
        cached = self._zones.get(user)
        now = time.monotonic()
        if cached is not None and cached[1] > now:
            return cached[0]
        try:
            answer = await self.client.users_info(user=user)
        except SlackApiError as exc:
            log.warning("no time zone for %s (users.info: %s); the channel's zone applies", user,
                        _error_code(exc))
            return None
        info = answer.get("user")
        tz = info.get("tz") if isinstance(info, dict) else None
        zone_name = str(tz) if isinstance(tz, str) and tz else None
        self._zones[user] = (zone_name, now + TIMEZONE_TTL_S)
        return zone_name

    def reply_messages(self, reply: Reply, extras: CardExtras | None = None) -> list[Message]:
        """See :meth:`Deliverer.reply_messages`."""
        return render_reply_slack(reply, extras)

    async def card_extras(self, place: Place, digest: Digest) -> CardExtras:
        """See :meth:`Deliverer.card_extras` (charts by :meth:`upload_charts`)."""
        if self._media is None:
            return NO_EXTRAS

        async def upload(charts: Sequence[Chart]) -> tuple[CardImage, ...]:
            return await self.upload_charts(place, charts)

        return await self._media.extras(digest, upload)

    async def upload_charts(self, place: Place, charts: Sequence[Chart]) -> tuple[CardImage, ...]:
        """Upload ``charts`` as PNG files shared in ``place`` (its thread, if any) and wait until Slack
        shows them there (see the module docstring).

        Raises:
            DeliveryError: Slack refused the upload (``code`` = its error, e.g. ``missing_scope``,
                ``not_in_channel``), or the files were not shared within :data:`FILE_READY_S`.
        """
        uploads = [{"file": c.png, "filename": f"{c.name}.png", "title": c.title, "alt_txt": c.alt[:FILE_ALT]}
                   for c in charts]
        try:
            answer = await self.client.files_upload_v2(file_uploads=uploads, channel=place.conversation,
                                                       thread_ts=place.thread)
            files = answer.get("files") or []
            ids = [str(f["id"]) for f in files if isinstance(f, dict) and f.get("id")]
            if len(ids) != len(charts):
                raise DeliveryError(f"Slack answered {len(ids)} files for {len(charts)} uploads", code="upload")
            await self._until_shared(ids, place.conversation)
        except SlackApiError as exc:
            error = _error_code(exc)
            raise DeliveryError(f"Slack refused the chart upload to {place.conversation}: {error}", code=error,
                                status=int(exc.response.status_code or 0)) from exc
        except SlackClientError as exc:  # the upload step itself (not an API answer) failed
            raise DeliveryError(f"the chart upload to {place.conversation} failed: {exc}", code="upload") from exc
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # an answer without the fields the SDK reads
            raise DeliveryError(f"the chart upload to {place.conversation} got a malformed answer "
                                f"({type(exc).__name__}: {exc})", code="upload") from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _unreachable(exc) from exc
        return tuple(CardImage(ref=ref, name=c.name, title=c.title, alt=c.alt) for ref, c in zip(ids, charts,
                                                                                               strict=True))

    async def _until_shared(self, ids: list[str], conversation: str) -> None:
        """Ask ``files.info`` until every file is shared in ``conversation``."""
        retrying = AsyncRetrying(stop=stop_after_delay(FILE_READY_S), wait=wait_exponential(multiplier=0.2, max=2.0),
                                 retry=retry_if_exception_type(_NotShared), sleep=self._sleep, reraise=True)
        waiting = list(ids)
        try:
            async for attempt in retrying:
                with attempt:
                    for ref in list(waiting):
                        info = await self.client.files_info(file=ref)
                        if not _shared_in(info.get("file") or {}, conversation):
                            raise _NotShared(ref)
                        waiting.remove(ref)
        except _NotShared as exc:
            raise DeliveryError(f"Slack did not share the uploaded chart {exc} in {conversation} within "
                                f"{FILE_READY_S:g} s", code="file_not_ready") from exc

    async def post(self, place: Place, messages: Sequence[Message], *, key: str = "") -> Posted:
        """See :meth:`Deliverer.post` (``key`` is not used: Slack has no idempotent send). A message
        refused with ``invalid_blocks`` while it holds pictures goes again without them."""
        if not messages:
            raise ValueError("nothing to post")
        root = place.thread
        ids: list[str] = []
        for message in messages:
            await self._pacer.wait(self.platform, place.conversation)
            try:
                answer = await self._post_one(place.conversation, root, message)
            except DeliveryError as exc:
                plain = _without_images(message)
                if exc.code != "invalid_blocks" or plain is None:
                    raise
                log.warning("Slack refused the card with its charts in %s (%s); posting it without them",
                            place.conversation, exc)
                answer = await self._post_one(place.conversation, root, plain)
            ids.append(answer)
            root = root or ids[0]
        return Posted(tuple(ids), root)

    async def edit(self, place: Place, posted: Posted, messages: Sequence[Message], *,
                   unchanged: Collection[int] = ()) -> Posted:
        """See :meth:`Deliverer.edit` (``chat.update``; new messages ``chat.postMessage`` in the thread)."""
        ids = list(posted.ids)
        for index, message in enumerate(messages):
            if index < len(ids) and index in unchanged:
                continue
            await self._pacer.wait(self.platform, place.conversation)
            if index < len(ids):
                try:
                    await self.client.chat_update(channel=place.conversation, ts=ids[index], text=message["text"],
                                                  blocks=message.get("blocks"))
                except SlackApiError as exc:
                    error = _error_code(exc)
                    raise DeliveryError(f"Slack refused to update a message in {place.conversation}: {error}",
                                        code=error, status=int(exc.response.status_code or 0)) from exc
            else:
                ids.append(await self._post_one(place.conversation, posted.anchor or ids[0], message))
        return Posted(tuple(ids), posted.anchor)

    async def _post_one(self, channel: str, thread: str | None, message: Message) -> str:
        try:
            answer = await self.client.chat_postMessage(
                channel=channel, thread_ts=thread, text=message["text"], blocks=message.get("blocks"),
                unfurl_links=False, unfurl_media=False,
            )
        except SlackApiError as exc:
            error = _error_code(exc)
            raise DeliveryError(f"Slack refused a message to {channel}: {error}", code=error,
                                status=int(exc.response.status_code or 0)) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _unreachable(exc) from exc
        return str(answer["ts"])

    async def respond(
        self, response_url: str, messages: Sequence[Message], *, channel: str, public: bool, language: Language,
    ) -> str | None:
        """Answer a slash command or button (see the module docstring).

        Args:
            public: visible to the channel (``in_channel``) or only to the asker (``ephemeral``);
                only a single message can be ephemeral.

        Returns:
            The ``ts`` of the thread root when the messages were posted with ``chat.postMessage``,
            else ``None``.

        Raises:
            DeliveryError: the Web API refused a message for another reason than membership.
            ResponseUrlError: the ``response_url`` refused a post.
        """
        if len(messages) == 1 or not public:
            await self._send_all(response_url, messages, public=public, language=language)
            return None
        try:
            return (await self.post(Place(channel), messages)).anchor
        except DeliveryError as exc:
            if exc.code not in NOT_A_MEMBER:
                raise
        await self._send_all(response_url, messages, public=True, language=language)
        return None

    async def note(self, response_url: str, text: str) -> None:
        """One ephemeral line to the asker through ``response_url``.

        Raises:
            ResponseUrlError: Slack refused it.
        """
        await self._send(self._webhook(response_url), render_note_slack(text), "ephemeral")

    async def ephemeral(self, channel: str, user: str, text: str, *, thread: str | None = None) -> None:
        """A line only ``user`` sees in ``channel`` (``chat.postEphemeral``), e.g. "生成中…"; a refusal is
        logged, not raised (the answer follows anyway)."""
        try:
            await self.client.chat_postEphemeral(channel=channel, user=user, text=text, thread_ts=thread)
        except SlackApiError as exc:
            log.info("no ephemeral note in %s: %s", channel, _error_code(exc))
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.info("no ephemeral note in %s: %s", channel, _unreachable(exc))

    async def post_ephemeral(self, channel: str, user: str, messages: Sequence[Message], *,
                             thread: str | None = None) -> bool:
        """``messages`` shown only to ``user`` in ``channel`` (``chat.postEphemeral``, in ``thread`` when
        given): subscription changes, the help, questions back. ``False`` when Slack refused (the bot
        is not in the channel, …): the caller posts them normally instead."""
        for message in messages:
            await self._pacer.wait(self.platform, channel)
            try:
                await self.client.chat_postEphemeral(channel=channel, user=user, text=message["text"],
                                                     blocks=message.get("blocks"), thread_ts=thread)
            except SlackApiError as exc:
                log.info("no ephemeral reply in %s: %s", channel, _error_code(exc))
                return False
            except (aiohttp.ClientError, TimeoutError) as exc:
                log.info("no ephemeral reply in %s: %s", channel, _unreachable(exc))
                return False
        return True

    async def _send_all(
        self, response_url: str, messages: Sequence[Message], *, public: bool, language: Language,
    ) -> None:
        hook = self._webhook(response_url)
        kind: Literal["in_channel", "ephemeral"] = "in_channel" if public else "ephemeral"
        shown = list(messages)
        if len(shown) > RESPONSE_URL_USES:
            rest = len(shown) - (RESPONSE_URL_USES - 1)
            shown = [*shown[: RESPONSE_URL_USES - 1],
                     render_note_slack(chat_phrases(language).invite_for_rest.format(n=rest))]
        for message in shown:
            await self._send(hook, message, kind)

    @staticmethod
    async def _send(hook: AsyncWebhookClient, message: Message, kind: Literal["in_channel", "ephemeral"]) -> None:
        try:
            answer = await hook.send(text=message["text"], blocks=message.get("blocks"), response_type=kind)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _unreachable(exc) from exc
        if answer.status_code != 200:
            raise ResponseUrlError(
                f"Slack refused the response_url post: HTTP {answer.status_code} {answer.body.strip()[:200]}",
                code=answer.body.strip()[:100], status=answer.status_code,
            )


def _error_code(exc: SlackApiError) -> str:
    """Slack's ``error`` code of a refusal; for an answer that is no JSON (an HTTP 5xx page), ``http_{status}``."""
    data = getattr(exc.response, "data", None)
    if isinstance(data, dict):
        return str(data.get("error", ""))
    return f"http_{exc.response.status_code}"


def _unreachable(exc: BaseException) -> DeliveryError:
    """A network failure as one line (the host, not the traceback)."""
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return DeliveryError(f"Slack could not be reached ({type(exc).__name__}: {reason})")


def _shared_in(file: dict[str, Any], conversation: str) -> bool:
    """Whether a ``files.info`` file is shared in ``conversation`` (public or private shares)."""
    shares = file.get("shares") or {}
    return any(conversation in (shares.get(kind) or {}) for kind in ("public", "private"))


def _without_images(message: Message) -> Message | None:
    """``message`` without its image blocks, or ``None`` when it has none."""
    blocks = message.get("blocks") or []
    kept = [b for b in blocks if b.get("type") != "image"]
    return {**message, "blocks": kept} if len(kept) < len(blocks) else None
