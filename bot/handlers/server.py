"""The bot's HTTP server (Starlette, run by uvicorn in ``prhub serve --slack http``).

Routes: ``POST /slack/events`` (Slack events, slash commands and interactivity alike;
bolt verifies the signature), ``GET /healthz`` (``ok``), plus any ``routes`` the
caller adds (the Feishu bot mounts ``/feishu/events`` here).
"""

from __future__ import annotations

from collections.abc import Sequence

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route


def build_server(*, slack_app: AsyncApp | None = None, routes: Sequence[BaseRoute] = ()) -> Starlette:
    """The Starlette app serving the bots.

    Args:
        slack_app: the Slack bolt app; ``None`` leaves ``/slack/events`` out.
        routes: more routes (other platforms).
    """

    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    table: list[BaseRoute] = [Route("/healthz", healthz, methods=["GET"])]
    if slack_app is not None:
        handler = AsyncSlackRequestHandler(slack_app)

        async def slack_events(request: Request) -> Response:
            return await handler.handle(request)

        table.append(Route("/slack/events", slack_events, methods=["POST"]))
    return Starlette(routes=[*table, *routes])
