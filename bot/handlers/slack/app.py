"""Wires the Slack app: an :class:`~slack_bolt.async_app.AsyncApp` on the process's Web API client (from
:mod:`bot.app`) with the signing secret, and the listeners of ``commands``, ``events`` and ``actions``.
Nothing else lives here."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.web.async_client import AsyncWebClient

from bot.handlers.slack import actions, commands, events
from bot.handlers.slack.deps import SlackDeps


def one_workspace(client: AsyncWebClient) -> Callable[[], Awaitable[AuthorizeResult]]:
    """bolt's ``authorize`` for the bot's one workspace: Slack's ``auth.test`` asked once, under a lock, and its
    answer kept — bolt's own single-team check asks it again for each request that arrives before the first answer,
    so a burst at start-up (or a slow Slack) would time out some of them into HTTP 500s. A failed call is not kept:
    the next request asks again."""
    lock = asyncio.Lock()
    kept: list[AuthorizeResult] = []

    async def authorize() -> AuthorizeResult:
        if not kept:
            async with lock:
                if not kept:
                    answer = await client.auth_test()
                    kept.append(AuthorizeResult.from_auth_test_response(bot_token=client.token,
                                                                        auth_test_response=answer))
        return kept[0]

    return authorize


def build_slack_app(deps: SlackDeps, *, signing_secret: str) -> AsyncApp:
    """The bolt app of the bot, ready for Socket Mode or the HTTP server.

    Args:
        deps: the core, the claims and the deliverer (whose Web API client the app uses).
        signing_secret: ``SLACK_SIGNING_SECRET`` (verifies HTTP requests); empty in Socket Mode, whose events
            come over the app token's own connection (bolt skips the check there, and refuses any HTTP request).
    """
    client = deps.deliverer.client
    app = AsyncApp(client=client, signing_secret=signing_secret, authorize=one_workspace(client))
    commands.register(app, deps)
    events.register(app, deps)
    actions.register(app, deps)
    return app
