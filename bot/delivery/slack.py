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

Rate limits: the Web API client and the webhook clients carry slack_sdk's
:class:`~slack_sdk.http_retry.builtin_async_handlers.AsyncRateLimitErrorRetryHandler`
(:func:`rate_limited_retries`), which waits for ``Retry-After`` and tries again; sends are paced per
channel (:mod:`bot.delivery.pacing`).

Errors: a Web API refusal raises :class:`~bot.errors.DeliveryError` (``code`` = Slack's error,
chained ``from`` slack_sdk's), a ``response_url`` refusal :class:`ResponseUrlError`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Literal

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.cards.alert import AlertBatch, render_batch_slack
from bot.cards.chat import render_note_slack, render_reply_slack
from bot.cards.i18n import chat_phrases
from bot.cards.slack import render_slack
from bot.delivery import Message, Place, Posted
from bot.delivery.pacing import Pacer
from bot.errors import DeliveryError
from bot.models import Digest, Language
from bot.replies import Reply

__all__ = ["NOT_A_MEMBER", "RATE_LIMIT_RETRIES", "RESPONSE_URL_USES", "ResponseUrlError", "SlackDeliverer",
           "rate_limited_retries"]

log = logging.getLogger(__name__)

RATE_LIMIT_RETRIES = 3
TIMEZONE_TTL_S = 6 * 3600
"""How long a person's time zone from ``users.info`` is kept in the process."""
RESPONSE_URL_USES = 5
"""Slack accepts up to five posts to one ``response_url`` (within 30 minutes)."""
NOT_A_MEMBER = frozenset({"not_in_channel", "channel_not_found"})

WebhookFactory = Callable[[str], AsyncWebhookClient]
"""Makes the client of one ``response_url``."""


class ResponseUrlError(DeliveryError):
    """Slack refused a post to a ``response_url`` (``status`` and Slack's error text)."""


def rate_limited_retries() -> list[AsyncRetryHandler]:
    """The retry handlers every Slack client uses: wait ``Retry-After`` on HTTP 429."""
    return [AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES)]


class SlackDeliverer:
    """:class:`~bot.delivery.Deliverer` on Slack.

    Args:
        client: the process's Web API client (built by :mod:`bot.app`).
        webhook: makes the client of one ``response_url`` (slack_sdk has one per URL).
        pacer: the process's pacer.
    """

    platform = "slack"

    def __init__(self, client: AsyncWebClient, *, webhook: WebhookFactory, pacer: Pacer) -> None:
        self.client = client
        self._webhook = webhook
        self._pacer = pacer
        self._zones: dict[str, tuple[str | None, float]] = {}

    def digest_messages(self, digest: Digest) -> list[Message]:
        """See :meth:`Deliverer.digest_messages` (:func:`bot.cards.slack.render_slack`)."""
        return render_slack(digest)

    def alert_messages(self, batch: AlertBatch) -> list[Message]:
        """See :meth:`Deliverer.alert_messages`."""
        return render_batch_slack(batch)

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
                        exc.response.get("error"))
            return None
        info = answer.get("user")
        tz = info.get("tz") if isinstance(info, dict) else None
        zone_name = str(tz) if isinstance(tz, str) and tz else None
        self._zones[user] = (zone_name, now + TIMEZONE_TTL_S)
        return zone_name

    def reply_messages(self, reply: Reply) -> list[Message]:
        """See :meth:`Deliverer.reply_messages`."""
        return render_reply_slack(reply)

    async def post(self, place: Place, messages: Sequence[Message], *, key: str = "") -> Posted:
        """See :meth:`Deliverer.post` (``key`` is not used: Slack has no idempotent send)."""
        if not messages:
            raise ValueError("nothing to post")
        root = place.thread
        ids: list[str] = []
        for message in messages:
            await self._pacer.wait(self.platform, place.conversation)
            try:
                answer = await self.client.chat_postMessage(
                    channel=place.conversation, thread_ts=root, text=message["text"], blocks=message.get("blocks"),
                    unfurl_links=False, unfurl_media=False,
                )
            except SlackApiError as exc:
                error = str(exc.response.get("error", ""))
                raise DeliveryError(f"Slack refused a message to {place.conversation}: {error}", code=error,
                                    status=int(exc.response.status_code or 0)) from exc
            ids.append(str(answer["ts"]))
            root = root or ids[0]
        return Posted(tuple(ids), root)

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
            log.info("no ephemeral note in %s: %s", channel, exc.response.get("error"))

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
        answer = await hook.send(text=message["text"], blocks=message.get("blocks"), response_type=kind)
        if answer.status_code != 200:
            raise ResponseUrlError(
                f"Slack refused the response_url post: HTTP {answer.status_code} {answer.body.strip()[:200]}",
                code=answer.body.strip()[:100], status=answer.status_code,
            )
