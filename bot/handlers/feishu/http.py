"""lark-oapi's event dispatcher behind a Starlette route: ``POST /feishu/events``.

lark-oapi ships only a Flask adapter; this is the same three steps for
Starlette: the request becomes a ``RawRequest`` (header names in the
``X-Lark-Request-Timestamp`` spelling the SDK looks up), the dispatcher's
``do()`` runs in a worker thread (it calls the bot's handlers synchronously,
and they may wait briefly on the bot's loop), and its ``RawResponse`` becomes
the HTTP response.

The dispatcher does the checks: the URL-verification challenge is answered
(``{"challenge": …}``) when its token matches ``FEISHU_VERIFICATION_TOKEN``;
an encrypted body (``{"encrypt": …}``) is decrypted with ``FEISHU_ENCRYPT_KEY``
and its ``X-Lark-Signature`` verified. Whatever the SDK refuses — a wrong token or
signature, a body that is not JSON, ciphertext that does not decrypt (whatever its
padding) — gets one identical answer, HTTP 401 ``{"msg": "invalid request"}``, and
reaches no handler: the SDK's own answers differ by the failure, which would tell a
forger how far a guess got (a padding oracle). The reason is logged.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from lark_oapi.core.model import RawRequest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = ["EVENTS_PATH", "events_route"]

log = logging.getLogger(__name__)

EVENTS_PATH = "/feishu/events"


def _refused() -> Response:
    return JSONResponse({"msg": "invalid request"}, status_code=401)


def events_route(dispatcher: Any, *, path: str = EVENTS_PATH) -> Route:
    """A ``POST`` route at ``path`` serving ``dispatcher`` (an ``EventDispatcherHandler``)."""

    async def endpoint(request: Request) -> Response:
        raw = RawRequest()
        raw.uri = request.url.path
        raw.headers = {_canonical(name): value for name, value in request.headers.items()}
        raw.body = await request.body()
        try:
            answer = await asyncio.to_thread(dispatcher.do, raw)
        except Exception as exc:  # the SDK raises what it likes on hostile input: all get one answer
            log.warning("feishu event refused: %s", type(exc).__name__)
            return _refused()
        status = int(answer.status_code or 500)
        if status != 200:
            log.warning("feishu event refused by the SDK (HTTP %d)", status)
            return _refused()
        headers = {str(k): str(v) for k, v in (answer.headers or {}).items()}
        return Response(content=bytes(answer.content or b""), status_code=status, headers=headers)

    return Route(path, endpoint, methods=["POST"])


def _canonical(name: str) -> str:
    """``x-lark-request-timestamp`` → ``X-Lark-Request-Timestamp`` (the SDK's dict lookups are exact)."""
    return "-".join(part.capitalize() for part in name.split("-"))
