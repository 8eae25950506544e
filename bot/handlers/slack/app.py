"""Wires the Slack app: an :class:`~slack_bolt.async_app.AsyncApp` on the process's Web API client (from
:mod:`bot.app`) with the signing secret, and the listeners of ``commands``, ``events`` and ``actions``.
Nothing else lives here."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp

from bot.handlers.slack import actions, commands, events
from bot.handlers.slack.deps import SlackDeps


def build_slack_app(deps: SlackDeps, *, signing_secret: str) -> AsyncApp:
    """The bolt app of the bot, ready for Socket Mode or the HTTP server.

    Args:
        deps: the core, the claims and the deliverer (whose Web API client the app uses).
        signing_secret: ``SLACK_SIGNING_SECRET`` (verifies HTTP requests); empty in Socket Mode, whose events
            come over the app token's own connection (bolt skips the check there, and refuses any HTTP request).
    """
    app = AsyncApp(client=deps.deliverer.client, signing_secret=signing_secret)
    commands.register(app, deps)
    events.register(app, deps)
    actions.register(app, deps)
    return app
