"""The bot's HTTP server (Starlette, run by uvicorn in ``prhub serve --slack http``).

Routes: ``POST /slack/events`` (Slack events, slash commands and interactivity alike; the signature
is checked before bolt parses anything — :func:`bot.handlers.signatures.slack_signature_ok` — and a
request without a valid one gets HTTP 401 and a one-line log record), ``GET /healthz``, ``GET /readyz``,
``GET /metrics``, plus any ``routes`` the caller adds (the Feishu bot mounts ``/feishu/events`` here).

``/healthz`` (liveness) answers HTTP 200 with JSON ``{"status": "ok" | "degraded", "redis": "ok" | "down",
…}`` from the caller's ``health`` (a degraded bot still answers, so it stays up); without one,
``{"status": "ok"}``. ``/readyz`` (readiness) answers 200 when the caller's ``ready`` says so, else 503,
with its JSON (:mod:`bot.handlers.health`). ``/metrics`` is :mod:`bot.metrics` in the Prometheus text format.

Every request body is bounded (:class:`BodyLimit`): a ``Content-Length`` over ``max_body_bytes``
gets HTTP 413 before anything is read, and a body without one is cut off with 413 as soon as
it passes the limit, so a 20 MB POST costs neither memory nor CPU.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.handlers.signatures import refused_request, slack_signature_ok

__all__ = ["DEFAULT_MAX_BODY_BYTES", "BodyLimit", "build_server"]

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
Health = Callable[[], Awaitable[dict[str, Any]]]
Ready = Callable[[], Awaitable[tuple[bool, dict[str, Any]]]]


class _TooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: HTTP 413 for a request body over ``max_bytes`` (see the module docstring)."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await _refuse(scope, receive, send)
            return
        seen = 0
        started = False

        async def bounded_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, bounded_receive, watched_send)
        except _TooLarge:
            if not started:
                await _refuse(scope, receive, send)


async def _refuse(scope: Scope, receive: Receive, send: Send) -> None:
    await PlainTextResponse("request body too large", status_code=413,
                            headers={"Connection": "close"})(scope, receive, send)


def build_server(*, slack_app: AsyncApp | None = None, routes: Sequence[BaseRoute] = (),
                 health: Health | None = None, ready: Ready | None = None, metrics: bool = True,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Starlette:
    """The Starlette app serving the bots.

    Args:
        slack_app: the Slack bolt app; ``None`` leaves ``/slack/events`` out.
        routes: more routes (other platforms).
        health: what ``/healthz`` reports (a dict with at least ``status``).
        ready: what ``/readyz`` reports (ready or not, and the JSON); ``None``: ready when ``/healthz`` answers.
        metrics: serve ``/metrics``.
        max_body_bytes: the largest request body read (``max_body_bytes``).
    """

    async def healthz(_: Request) -> Response:
        return JSONResponse(await health() if health is not None else {"status": "ok"})

    async def readyz(_: Request) -> Response:
        ok, report = await ready() if ready is not None else (True, {"ready": True, "checks": {}})
        return JSONResponse(report, status_code=200 if ok else 503)

    async def metrics_text(_: Request) -> Response:
        from bot import metrics as registry

        body = await asyncio.to_thread(registry.render)  # scrape-time collectors read Redis
        return Response(body, media_type=registry.CONTENT_TYPE)

    table: list[BaseRoute] = [Route("/healthz", healthz, methods=["GET"]), Route("/readyz", readyz, methods=["GET"])]
    if metrics:
        table.append(Route("/metrics", metrics_text, methods=["GET"]))
    if slack_app is not None:
        handler = AsyncSlackRequestHandler(slack_app)
        secret: str = getattr(slack_app, "_signing_secret", "") or ""

        async def slack_events(request: Request) -> Response:
            body = await request.body()  # kept by the request: bolt reads the same bytes
            if not slack_signature_ok(body, request.headers, secret):  # before anything parses the body
                refused_request("slack", len(body), request.client.host if request.client else "-", "bad signature")
                return PlainTextResponse("invalid request", status_code=401)
            return await handler.handle(request)

        table.append(Route("/slack/events", slack_events, methods=["POST"]))
    return Starlette(routes=[*table, *routes], middleware=[Middleware(BodyLimit, max_bytes=max_body_bytes)])
