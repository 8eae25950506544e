"""Wires the Slack app: an :class:`~slack_bolt.async_app.AsyncApp` with the bot token, the signing
secret and a Web API client on ``PRHUB_SLACK_API_URL``, and the listeners of ``commands``,
``events`` and ``actions``. Nothing else lives here."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Settings
from bot.errors import ConfigError
from bot.handlers.core import Core
from bot.handlers.slack import actions, commands, events
from bot.handlers.slack.dedup import Dedup
from bot.handlers.slack.delivery import Delivery, rate_limited_retries
from bot.handlers.slack.deps import SlackDeps
from bot.store import Store


def build_slack_app(*, settings: Settings, core: Core, store: Store) -> AsyncApp:
    """The bolt app of the bot, ready for Socket Mode or the HTTP server.

    Args:
        settings: ``slack_bot_token``, ``slack_signing_secret``, ``slack_api_url``, ``dedup_ttl_s``.
        core: answers the intents.
        store: holds the exactly-once claims (Redis).

    Raises:
        ConfigError: ``SLACK_BOT_TOKEN`` or ``SLACK_SIGNING_SECRET`` is not set.
    """
    if settings.slack_bot_token is None or settings.slack_signing_secret is None:
        raise ConfigError("the Slack bot needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET (see README, Slack)")
    client = AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=_with_slash(settings.slack_api_url),
    )
    client.retry_handlers.extend(rate_limited_retries())
    app = AsyncApp(client=client, signing_secret=settings.slack_signing_secret.get_secret_value())
    deps = SlackDeps(core=core, dedup=Dedup(store, ttl_s=settings.dedup_ttl_s), delivery=Delivery(client))
    commands.register(app, deps)
    events.register(app, deps)
    actions.register(app, deps)
    return app


def _with_slash(url: str) -> str:
    """slack_sdk joins ``base_url + method``: keep exactly one trailing slash."""
    return url.rstrip("/") + "/"
