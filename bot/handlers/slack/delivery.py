"""Posting a list of Block Kit messages where a Slack request should be answered.

Two doors (the renderers return lists: the first message is the card, the
rest continue in its thread):

- :meth:`Delivery.post` — a mention or DM: every message goes into the thread of
  the asking message (``thread_ts``) with ``chat.postMessage``;
- :meth:`Delivery.respond` — a slash command or button, which has a
  ``response_url``: one message goes through it (this works where the bot is
  not a channel member); several are posted with ``chat.postMessage``, the first
  to the channel and the rest in its thread, since a ``response_url`` post has
  no ``ts`` to thread under. When the bot may not post in the channel
  (``not_in_channel``, ``channel_not_found``), the messages go through the
  ``response_url`` instead, as many as Slack accepts there (5), the last one
  saying how to get the rest.

Rate limits: the Web API client and the webhook clients carry slack_sdk's
:class:`~slack_sdk.http_retry.builtin_async_handlers.AsyncRateLimitErrorRetryHandler`,
which waits for ``Retry-After`` and tries again (:data:`RATE_LIMIT_RETRIES` times).

Errors: a Web API refusal raises :class:`slack_sdk.errors.SlackApiError`; a
``response_url`` refusal raises :class:`ResponseUrlError`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.cards.chat import chat_phrases, render_note_slack
from bot.errors import PrhubError
from bot.models import Language

RATE_LIMIT_RETRIES = 3
RESPONSE_URL_USES = 5
"""Slack accepts up to five posts to one ``response_url`` (within 30 minutes)."""
NOT_A_MEMBER = frozenset({"not_in_channel", "channel_not_found"})

Message = dict[str, Any]


class ResponseUrlError(PrhubError):
    """Slack refused a post to a ``response_url`` (``status`` and Slack's error text)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


def rate_limited_retries() -> list[AsyncRetryHandler]:
    """The retry handlers every client here uses: wait ``Retry-After`` on HTTP 429."""
    return [AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES)]


def _webhook(url: str) -> AsyncWebhookClient:
    return AsyncWebhookClient(url, retry_handlers=rate_limited_retries())


class Delivery:
    """Posts messages for the Slack handlers.

    Args:
        client: the bot's Web API client (``chat.postMessage``).
        webhook: makes the client of one ``response_url`` (tests may inject).
    """

    def __init__(self, client: AsyncWebClient, *, webhook: Callable[[str], AsyncWebhookClient] = _webhook) -> None:
        self._client = client
        self._webhook = webhook

    async def post(self, channel: str, messages: Sequence[Message], *, thread_ts: str | None = None) -> str:
        """Post ``messages`` to ``channel``: the first in ``thread_ts`` (or the channel), the rest in
        the thread of the first (or ``thread_ts``).

        Returns:
            The ``ts`` of the thread's root (``thread_ts``, or the first message's).

        Raises:
            SlackApiError: Slack refused a message (after the rate-limit waits).
            ValueError: ``messages`` is empty.
        """
        if not messages:
            raise ValueError("nothing to post")
        root = thread_ts
        for message in messages:
            answer = await self._client.chat_postMessage(
                channel=channel, thread_ts=root, text=message["text"], blocks=message.get("blocks"),
                unfurl_links=False, unfurl_media=False,
            )
            root = root or str(answer["ts"])
        assert root is not None
        return root

    async def respond(
        self, response_url: str, messages: Sequence[Message], *, channel: str, public: bool, language: Language,
    ) -> str | None:
        """Answer a slash command or button (see the module docstring).

        Args:
            public: visible to the channel (``in_channel``) or only to the asker (``ephemeral``);
                only a single message can be ephemeral.

        Returns:
            The ``ts`` of the thread root when the messages were posted with
            ``chat.postMessage``, else ``None``.

        Raises:
            SlackApiError: the Web API refused a message for another reason than membership.
            ResponseUrlError: the ``response_url`` refused a post.
        """
        if len(messages) == 1 or not public:
            await self._send_all(response_url, messages, public=public, language=language)
            return None
        try:
            return await self.post(channel, messages)
        except SlackApiError as exc:
            if exc.response.get("error") not in NOT_A_MEMBER:
                raise
        await self._send_all(response_url, messages, public=True, language=language)
        return None

    async def note(self, response_url: str, text: str) -> None:
        """One ephemeral line to the asker through ``response_url``.

        Raises:
            ResponseUrlError: Slack refused it.
        """
        await self._send(self._webhook(response_url), render_note_slack(text), "ephemeral")

    async def _send_all(
        self, response_url: str, messages: Sequence[Message], *, public: bool, language: Language,
    ) -> None:
        hook = self._webhook(response_url)
        kind: Literal["in_channel", "ephemeral"] = "in_channel" if public else "ephemeral"
        shown = list(messages)
        if len(shown) > RESPONSE_URL_USES:
            rest = len(shown) - (RESPONSE_URL_USES - 1)
            shown = [*shown[: RESPONSE_URL_USES - 1], render_note_slack(chat_phrases(language).invite_for_rest
                                                                        .format(n=rest))]
        for message in shown:
            await self._send(hook, message, kind)

    @staticmethod
    async def _send(hook: AsyncWebhookClient, message: Message, kind: Literal["in_channel", "ephemeral"]) -> None:
        answer = await hook.send(text=message["text"], blocks=message.get("blocks"), response_type=kind)
        if answer.status_code != 200:
            raise ResponseUrlError(
                f"Slack refused the response_url post: HTTP {answer.status_code} {answer.body.strip()[:200]}",
                status=answer.status_code,
            )
