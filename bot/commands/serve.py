"""``prhub serve``: run the chat bot.

Slack in Socket Mode (default; needs ``SLACK_APP_TOKEN``) or in HTTP mode
(``--slack http``: a Starlette server on ``--host``/``--port`` with
``POST /slack/events`` and ``GET /healthz``, for deployments behind a load
balancer). Both need ``SLACK_BOT_TOKEN`` and ``SLACK_SIGNING_SECRET`` and a
Redis that answers (``PRHUB_REDIS_URL``): without it every redelivered event
would be answered again, so the bot refuses to start.

``--source`` and ``--repo`` are the defaults of channels that have no
``[channels."slack:C…"]`` section in the config file.
"""

from __future__ import annotations

import asyncio
from enum import StrEnum
from typing import Annotated

import typer
from redis.exceptions import RedisError
from rich.console import Console
from rich.text import Text

from bot.config import Settings, load_settings, settings_source
from bot.errors import ConfigError, PrhubError
from bot.models import Language

_stderr = Console(stderr=True)


class SlackMode(StrEnum):
    """How Slack reaches the bot."""

    socket = "socket"
    http = "http"


def register(app: typer.Typer) -> None:
    """Add the ``serve`` command to ``app``."""
    app.command("serve")(serve)


def serve(
    slack: Annotated[SlackMode, typer.Option(help="socket: Socket Mode (SLACK_APP_TOKEN); http: serve "
                                                  "POST /slack/events.")] = SlackMode.socket,
    host: Annotated[str, typer.Option(help="HTTP mode: address to listen on.")] = "0.0.0.0",
    port: Annotated[int, typer.Option(help="HTTP mode: port to listen on.")] = 3000,
    source: Annotated[
        str | None, typer.Option(help="Default source of channels without a binding (github, git:PATH, jsonl:PATH).")
    ] = None,
    repo: Annotated[str | None, typer.Option(help="Default repository owner/name of channels.")] = None,
    lang: Annotated[Language | None, typer.Option(help="Default language: zh or en.")] = None,
) -> None:
    """Run the Slack bot (Ctrl-C stops it).

    Example: prhub serve --slack http --port 3000 --source jsonl:examples/verl-2026-W16.jsonl
    """
    try:
        settings = load_settings(default_source=source, default_repo=repo, language=lang)
        if slack is SlackMode.socket and settings.slack_app_token is None:
            raise ConfigError("Socket Mode needs SLACK_APP_TOKEN (xapp-…); or use --slack http")
        _stderr.print(Text(f"prhub serve: Slack {slack.value} · config {settings_source()}"), highlight=False)
        asyncio.run(_run(settings, slack, host, port))
    except PrhubError as exc:
        _stderr.print(Text.assemble(("error:", "bold red"), " ", str(exc)), highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc


async def _run(settings: Settings, mode: SlackMode, host: str, port: int) -> None:
    from bot.handlers.core import Core
    from bot.handlers.slack.app import build_slack_app
    from bot.store import RedisStore

    store = RedisStore.from_url(settings.redis_url)
    try:
        await store.ping()
    except RedisError as exc:
        await store.close()
        raise ConfigError(f"the bot needs Redis at PRHUB_REDIS_URL ({exc})") from exc
    from bot.scheduler.jobs import scheduled

    try:
        async with scheduled(settings, store):  # weekly pushes and label alerts
            slack_app = build_slack_app(settings=settings, core=Core(settings=settings, store=store), store=store)
            if mode is SlackMode.http:
                import uvicorn

                from bot.handlers.server import build_server

                config = uvicorn.Config(build_server(slack_app=slack_app), host=host, port=port, lifespan="off")
                await uvicorn.Server(config).serve()
            else:
                from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

                assert settings.slack_app_token is not None
                await AsyncSocketModeHandler(slack_app, settings.slack_app_token.get_secret_value()).start_async()  # type: ignore[no-untyped-call]
    finally:
        await store.close()
