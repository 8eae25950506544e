"""``prhub serve``: run the chat bot — Slack and/or Feishu, the weekly pushes and the alerts.

Slack in Socket Mode (``--slack socket``, the default when ``SLACK_BOT_TOKEN`` is
set; needs ``SLACK_APP_TOKEN``) or in HTTP mode (``--slack http``: ``POST
/slack/events``, for deployments behind a load balancer); both need
``SLACK_BOT_TOKEN`` and ``SLACK_SIGNING_SECRET``. Feishu over the long
connection (``--feishu ws``, the default when ``FEISHU_APP_ID`` is set; no public
URL needed) or HTTP (``--feishu http``: ``POST /feishu/events``). HTTP modes share
one Starlette server on ``--host``/``--port`` with ``GET /healthz``. A Redis that
answers (``PRHUB_REDIS_URL``) is required: without it every redelivered event
would be answered again, so the bot refuses to start.

``--source`` and ``--repo`` are the defaults of channels that have no
``[channels."slack:C…"]`` section in the config file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from contextlib import AsyncExitStack
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer
from redis.exceptions import RedisError
from rich.console import Console
from rich.text import Text

from bot.config import Settings, load_settings, settings_source
from bot.errors import ConfigError, PrhubError
from bot.models import Language

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp
    from starlette.routing import BaseRoute

_stderr = Console(stderr=True)


class SlackMode(StrEnum):
    """How Slack reaches the bot."""

    socket = "socket"
    http = "http"
    off = "off"


class FeishuMode(StrEnum):
    """How Feishu reaches the bot."""

    ws = "ws"
    http = "http"
    off = "off"


def register(app: typer.Typer) -> None:
    """Add the ``serve`` command to ``app``."""
    app.command("serve")(serve)


def serve(
    slack: Annotated[
        SlackMode | None,
        typer.Option(help="socket: Socket Mode (SLACK_APP_TOKEN); http: serve POST /slack/events; off. "
                          "Default: socket when SLACK_BOT_TOKEN is set, else off."),
    ] = None,
    feishu: Annotated[
        FeishuMode | None,
        typer.Option(help="ws: long connection; http: serve POST /feishu/events; off. "
                          "Default: ws when FEISHU_APP_ID is set, else off."),
    ] = None,
    host: Annotated[str, typer.Option(help="HTTP mode: address to listen on.")] = "0.0.0.0",
    port: Annotated[int, typer.Option(help="HTTP mode: port to listen on.")] = 3000,
    source: Annotated[
        str | None, typer.Option(help="Default source of channels without a binding (github, git:PATH, jsonl:PATH).")
    ] = None,
    repo: Annotated[str | None, typer.Option(help="Default repository owner/name of channels.")] = None,
    lang: Annotated[Language | None, typer.Option(help="Default language: zh or en.")] = None,
) -> None:
    """Run the chat bot: Slack and/or Feishu, the weekly pushes and the label alerts (Ctrl-C stops it).

    Example: prhub serve --slack http --feishu http --port 3000 --source jsonl:examples/verl-2026-W16.jsonl
    """
    try:
        settings = load_settings(default_source=source, default_repo=repo, language=lang)
        slack_mode = slack or (SlackMode.socket if settings.slack_bot_token else SlackMode.off)
        feishu_mode = feishu or (FeishuMode.ws if settings.feishu_app_id else FeishuMode.off)
        if slack_mode is SlackMode.off and feishu_mode is FeishuMode.off:
            raise ConfigError("no platform to serve: set SLACK_BOT_TOKEN and/or FEISHU_APP_ID "
                              "(or choose --slack / --feishu)")
        if slack_mode is SlackMode.socket and settings.slack_app_token is None:
            raise ConfigError("Socket Mode needs SLACK_APP_TOKEN (xapp-…); or use --slack http")
        _stderr.print(Text(f"prhub serve: Slack {slack_mode.value} · Feishu {feishu_mode.value} · "
                           f"config {settings_source()}"), highlight=False)
        asyncio.run(_run(settings, slack_mode, feishu_mode, host, port))
    except PrhubError as exc:
        _stderr.print(Text.assemble(("error:", "bold red"), " ", str(exc)), highlight=False, soft_wrap=True)
        raise typer.Exit(code=1) from exc


async def _run(settings: Settings, slack: SlackMode, feishu: FeishuMode, host: str, port: int) -> None:
    from bot.handlers.core import Core
    from bot.scheduler.jobs import scheduled
    from bot.store import RedisStore

    store = RedisStore.from_url(settings.redis_url, degrade=False)
    try:
        await store.ping()
    except RedisError as exc:
        await store.close()
        raise ConfigError(f"the bot needs Redis at PRHUB_REDIS_URL ({exc})") from exc
    core = Core(settings=settings, store=store)
    try:
        async with scheduled(settings, store), AsyncExitStack() as stack:  # weekly pushes and label alerts
            routes: list[BaseRoute] = []
            if feishu is not FeishuMode.off:
                from bot.handlers.feishu.app import running
                from bot.handlers.feishu.dedup import Deduper

                routes += await stack.enter_async_context(
                    running(settings, core, Deduper(store), mode=feishu.value)  # type: ignore[arg-type]
                )
            slack_app = None
            if slack is not SlackMode.off:
                from bot.handlers.slack.app import build_slack_app

                slack_app = build_slack_app(settings=settings, core=core, store=store)
            tasks: list[Coroutine[Any, Any, Any]] = []
            if slack is SlackMode.http or feishu is FeishuMode.http:
                tasks.append(_serve_http(slack_app if slack is SlackMode.http else None, routes, host, port))
            if slack is SlackMode.socket:
                from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

                assert settings.slack_app_token is not None
                assert slack_app is not None
                handler = AsyncSocketModeHandler(slack_app, settings.slack_app_token.get_secret_value())
                tasks.append(handler.start_async())  # type: ignore[no-untyped-call]
            if tasks:
                await asyncio.gather(*tasks)
            else:  # Feishu long connection alone: it runs in its own thread until Ctrl-C
                await asyncio.Event().wait()
    finally:
        await store.close()


async def _serve_http(slack_app: AsyncApp | None, routes: list[BaseRoute], host: str, port: int) -> None:
    """One Starlette server for every HTTP platform: /slack/events, /feishu/events, /healthz."""
    import uvicorn

    from bot.handlers.server import build_server

    config = uvicorn.Config(build_server(slack_app=slack_app, routes=routes), host=host, port=port, lifespan="off")
    await uvicorn.Server(config).serve()
