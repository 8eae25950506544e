"""Where scheduled messages go: one small :class:`Deliverer` protocol, three implementations.

A channel key names the platform and the conversation: ``slack:C123``,
``feishu:oc_xxx`` or ``feishu-webhook:NAME`` (a ``[feishu_webhooks.NAME]`` section of the
TOML file). :class:`Deliverers` turns one into ``(deliverer, target)``:

==========================  =====================================================================
:class:`SlackDeliverer`     slack_sdk's ``AsyncWebClient`` on ``PRHUB_SLACK_API_URL`` (waits out
                            HTTP 429 ``Retry-After``); a digest is its Block Kit messages, the
                            first in the channel and the rest in its thread; a DM is a
                            ``chat.postMessage`` to the user id (Slack opens the app's DM)
:class:`FeishuDeliverer`    the Feishu app's client (:class:`~bot.handlers.feishu.client.FeishuClient`,
                            ``PRHUB_FEISHU_API_URL``); a digest is its first card, as the bot's
                            answer to "上周周报" (its 完整报告 button brings the rest); cards
                            carry an idempotency ``uuid`` made from ``key``
:class:`WebhookDeliverer`   a Feishu custom group-bot webhook, signed per
                            :mod:`bot.handlers.feishu.webhook`; link buttons only, no threads, no DMs
==========================  =====================================================================

Errors: every failure to deliver is a :class:`DeliveryError` (a Slack refusal, chained
``from`` slack_sdk's error) or a :class:`~bot.handlers.feishu.client.FeishuAPIError`;
both are :class:`~bot.errors.PrhubError`. A platform the configuration lacks raises
:class:`~bot.errors.ConfigError` when a channel of it is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.cards.alert import Alert, render_alert_feishu, render_alert_slack
from bot.cards.feishu import render_feishu
from bot.cards.slack import render_slack
from bot.config import Settings
from bot.errors import ConfigError, PrhubError
from bot.models import Digest

__all__ = [
    "PACE_S",
    "Deliverer",
    "Deliverers",
    "DeliveryError",
    "FeishuDeliverer",
    "SlackDeliverer",
    "WebhookDeliverer",
    "split_channel",
]

PACE_S = {"slack": 1.0, "feishu": 0.2, "feishu-webhook": 1.0}
"""Least seconds between two messages to one chat: Slack's ~1 message/s per channel, Feishu's
5/s per chat; webhooks are counted like Slack (Feishu limits them to 100/minute)."""


class DeliveryError(PrhubError):
    """A platform refused a message, or the conversation cannot receive this kind of message."""


class Deliverer(Protocol):
    """Posts scheduled messages on one platform. ``key`` is a stable id of the message
    (push or alert marker) that platforms with idempotent sends use; others ignore it."""

    platform: str

    async def post_digest(self, target: str, digest: Digest, *, key: str) -> None:
        """Post ``digest`` to the conversation ``target``: its first message, the rest threaded."""
        ...

    async def post_alert(self, target: str, alert: Alert, *, key: str) -> None:
        """Post one alert card in the conversation ``target`` (a channel, or a DM conversation)."""
        ...

    async def dm(self, user: str, alert: Alert, *, key: str) -> None:
        """Send one alert card to the person ``user`` directly."""
        ...


def split_channel(key: str) -> tuple[str, str]:
    """``"slack:C123"`` -> ``("slack", "C123")``.

    Raises:
        ConfigError: no ``platform:`` prefix, or an unknown platform.
    """
    platform, sep, ident = key.partition(":")
    if not sep or not ident or platform not in PACE_S:
        raise ConfigError(f"channel {key!r}: expected slack:C…, feishu:oc_… or feishu-webhook:NAME")
    return platform, ident


def slack_client(settings: Settings) -> AsyncWebClient:
    """The bot's Web API client on ``settings.slack_api_url``, waiting out rate limits.

    Raises:
        ConfigError: ``SLACK_BOT_TOKEN`` is not set.
    """
    from bot.handlers.slack.delivery import rate_limited_retries

    if settings.slack_bot_token is None:
        raise ConfigError("Slack channels need SLACK_BOT_TOKEN")
    client = AsyncWebClient(token=settings.slack_bot_token.get_secret_value(),
                            base_url=settings.slack_api_url.rstrip("/") + "/")
    client.retry_handlers.extend(rate_limited_retries())
    return client


FULL_REPORT_TTL_S = 30 * 24 * 3600
"""How long a pushed digest's thread is remembered as complete (seconds)."""


class SlackDeliverer:
    """:class:`Deliverer` on Slack's Web API (``chat.postMessage``)."""

    platform = "slack"

    def __init__(self, client: AsyncWebClient, *, claims: Any = None) -> None:
        self._client = client
        self._claims = claims

    async def _post(self, channel: str, messages: list[dict[str, Any]]) -> str | None:
        root: str | None = None
        for message in messages:
            try:
                answer = await self._client.chat_postMessage(
                    channel=channel, thread_ts=root, text=message["text"], blocks=message.get("blocks"),
                    unfurl_links=False, unfurl_media=False,
                )
            except SlackApiError as exc:
                raise DeliveryError(f"Slack refused a message to {channel}: {exc.response.get('error')}") from exc
            root = root or str(answer["ts"])
        return root

    async def post_digest(self, target: str, digest: Digest, *, key: str) -> None:
        """See :meth:`Deliverer.post_digest` (every message of :func:`~bot.cards.slack.render_slack`;
        with ``claims``, the thread is marked complete so 完整报告 posts nothing more)."""
        messages = render_slack(digest)
        root = await self._post(target, messages)
        if self._claims is not None and root is not None and len(messages) > 1:
            from bot.handlers.slack.dedup import once_key
            from bot.handlers.slack.deps import full_report_key

            await self._claims.claim(once_key(full_report_key(target, root, digest.window.name)), FULL_REPORT_TTL_S)

    async def post_alert(self, target: str, alert: Alert, *, key: str) -> None:
        """See :meth:`Deliverer.post_alert`."""
        await self._post(target, [render_alert_slack(alert)])

    async def dm(self, user: str, alert: Alert, *, key: str) -> None:
        """See :meth:`Deliverer.dm`: ``chat.postMessage`` with the user id as the channel."""
        await self._post(user, [render_alert_slack(alert)])


class FeishuDeliverer:
    """:class:`Deliverer` on the Feishu app (``im/v1/messages``, ``receive_id_type=chat_id``).

    Args:
        client: the app's client; it paces sends per chat and waits out rate limits.
    """

    platform = "feishu"

    def __init__(self, client: Any, *, claims: Any = None) -> None:
        self._client = client
        self._claims = claims

    async def post_digest(self, target: str, digest: Digest, *, key: str) -> None:
        """See :meth:`Deliverer.post_digest`: the first card into the chat, the further cards in its
        thread (and, with ``claims``, that thread is marked complete so 完整报告 posts nothing more)."""
        from bot.handlers.feishu.client import Target

        cards = render_feishu(digest)
        first = await self._client.send_cards(Target(chat_id=target), cards[:1], key=key)
        if len(cards) > 1 and first:
            await self._client.send_cards(Target(reply_to=first[0], in_thread=True), cards[1:], key=key + ":rest")
            if self._claims is not None:
                from bot.handlers.feishu.dedup import Deduper

                await Deduper(self._claims).first_full_report(first[0])

    async def post_alert(self, target: str, alert: Alert, *, key: str) -> None:
        """See :meth:`Deliverer.post_alert`."""
        from bot.handlers.feishu.client import Target

        await self._client.send_cards(Target(chat_id=target), [render_alert_feishu(alert)], key=key)

    async def dm(self, user: str, alert: Alert, *, key: str) -> None:
        """See :meth:`Deliverer.dm`. Feishu subscribers are chats (a person's is their p2p chat
        ``oc_…``, where they subscribed); an ``open_id`` cannot be reached through this client.

        Raises:
            DeliveryError: ``user`` is not a chat id.
        """
        if not user.startswith("oc_"):
            raise DeliveryError(f"Feishu alerts go to a chat (oc_…), not to {user!r}")
        await self.post_alert(user, alert, key=key)


@dataclass
class WebhookDeliverer:
    """:class:`Deliverer` on a Feishu custom group-bot webhook (push-only)."""

    url: str
    secret: str | None
    http: httpx.AsyncClient
    platform: str = field(default="feishu-webhook", init=False)

    async def post_digest(self, target: str, digest: Digest, *, key: str) -> None:
        """See :meth:`Deliverer.post_digest`: every webhook card in order (a webhook has no threads)."""
        from bot.handlers.feishu.webhook import push_cards, webhook_cards

        await push_cards(self.url, self.secret, webhook_cards(digest), http=self.http)

    async def post_alert(self, target: str, alert: Alert, *, key: str) -> None:
        """See :meth:`Deliverer.post_alert`."""
        from bot.handlers.feishu.webhook import push_cards

        await push_cards(self.url, self.secret, [render_alert_feishu(alert)], http=self.http)

    async def dm(self, user: str, alert: Alert, *, key: str) -> None:
        """A webhook reaches one group only.

        Raises:
            DeliveryError: always.
        """
        raise DeliveryError("a Feishu webhook cannot send direct messages")


class Deliverers:
    """The deliverers of every configured platform, made on first use and closed together.

    Args:
        settings: tokens, API URLs and ``feishu_webhooks``.
        slack: a Slack deliverer to use instead of one built from the settings (tests).
        feishu: a Feishu deliverer (default: one on a new app client when ``FEISHU_APP_ID`` is set).
        http: the HTTP client of webhook posts (default: a new one, closed by :meth:`aclose`).
        store: the bot's store; Feishu digest threads are marked complete in it (see
            :meth:`bot.handlers.feishu.dedup.Deduper.first_full_report`).
    """

    def __init__(self, settings: Settings, *, slack: Deliverer | None = None, feishu: Deliverer | None = None,
                 http: httpx.AsyncClient | None = None, store: Any = None) -> None:
        self._settings = settings
        self._store = store
        self._made: dict[str, Deliverer] = {}
        if slack is not None:
            self._made["slack"] = slack
        if feishu is not None:
            self._made["feishu"] = feishu
        self._http = http
        self._own_http = http is None

    def for_channel(self, key: str) -> tuple[Deliverer, str]:
        """``(deliverer, target)`` of the channel key ``slack:C123`` / ``feishu:oc_x`` / ``feishu-webhook:NAME``.

        Raises:
            ConfigError: malformed key, or the platform (or webhook NAME) is not configured.
        """
        platform, ident = split_channel(key)
        if platform == "feishu-webhook":
            made = self._made.get(key)
            if made is None:
                hook = self._settings.feishu_webhooks.get(ident)
                if hook is None:
                    known = ", ".join(sorted(self._settings.feishu_webhooks)) or "none"
                    raise ConfigError(f"no [feishu_webhooks.{ident}] in the config (known: {known})")
                if self._http is None:
                    self._http = httpx.AsyncClient(timeout=15.0)
                secret = hook.secret.get_secret_value() if hook.secret is not None else None
                made = self._made[key] = WebhookDeliverer(hook.url, secret, self._http)
            return made, ident
        made = self._made.get(platform)
        if made is None:
            made = self._made[platform] = self._build(platform)
        return made, ident

    def _build(self, platform: str) -> Deliverer:
        settings = self._settings
        if platform == "slack":
            return SlackDeliverer(slack_client(settings), claims=self._store)
        if settings.feishu_app_id is None or settings.feishu_app_secret is None:
            raise ConfigError("Feishu channels need FEISHU_APP_ID and FEISHU_APP_SECRET")
        from bot.handlers.feishu.client import FeishuClient

        return FeishuDeliverer(FeishuClient(app_id=settings.feishu_app_id,
                                            app_secret=settings.feishu_app_secret.get_secret_value(),
                                            base_url=settings.feishu_api_url), claims=self._store)

    async def aclose(self) -> None:
        """Close the HTTP client this object opened."""
        if self._http is not None and self._own_http:
            await self._http.aclose()
