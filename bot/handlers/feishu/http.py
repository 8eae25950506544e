"""lark-oapi's event dispatcher behind a Starlette route: ``POST /feishu/events``.

lark-oapi ships only a Flask adapter; this is the same three steps for
Starlette: the request becomes a ``RawRequest`` (header names in the
``X-Lark-Request-Timestamp`` spelling the SDK looks up), the dispatcher's
``do()`` runs in a worker thread (it calls the bot's handlers synchronously,
and they may wait briefly on the bot's loop), and its ``RawResponse`` becomes
the HTTP response.

The signature first: with ``FEISHU_ENCRYPT_KEY`` set, a request carrying
``X-Lark-Signature`` is checked here (SHA-256 of timestamp, nonce, key and body,
compared in constant time) before anything reads its body; a wrong one is refused
with a one-line record of its size and source, never its content. A request
without signature headers can only be the URL-verification challenge (the SDK
refuses any other unsigned event when a key is set).

The dispatcher does the other checks: the challenge is answered (``{"challenge": …}``)
when its token matches ``FEISHU_VERIFICATION_TOKEN``; an encrypted body (``{"encrypt": …}``)
is decrypted with ``FEISHU_ENCRYPT_KEY``. Whatever is refused — a wrong token or
signature, a body that is not JSON, ciphertext that does not decrypt (whatever its
padding) — gets one identical answer, HTTP 401 ``{"msg": "invalid request"}``, and
reaches no handler: the SDK's own answers differ by the failure, which would tell a
forger how far a guess got (a padding oracle).

With an encrypt key and no verification token (the README allows it: the signature
authenticates each event), the SDK would refuse every event, whose token it cannot
compare with an empty one; ``decrypt_here`` then has this route decrypt the body itself
once the signature holds, drop the token, and hand the plaintext to a dispatcher built
without keys.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
from typing import Any

from lark_oapi.core.model import RawRequest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bot.handlers.signatures import refused_request

__all__ = ["EVENTS_PATH", "events_route"]

log = logging.getLogger(__name__)

EVENTS_PATH = "/feishu/events"
_TIMESTAMP, _NONCE, _SIGNATURE = "X-Lark-Request-Timestamp", "X-Lark-Request-Nonce", "X-Lark-Signature"


class _Refused(Exception):
    """A request that does not get past the checks (the reason stays in the one log line)."""


def _refused() -> Response:
    return JSONResponse({"msg": "invalid request"}, status_code=401)


def signature_ok(headers: dict[str, str], body: bytes, encrypt_key: str) -> bool:
    """Whether ``X-Lark-Signature`` is SHA-256(timestamp + nonce + key + body) (constant-time compare)."""
    stamp, nonce, signature = headers.get(_TIMESTAMP, ""), headers.get(_NONCE, ""), headers.get(_SIGNATURE, "")
    expected = hashlib.sha256((stamp + nonce + encrypt_key).encode("utf-8") + body).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace"))


def _plaintext(body: bytes, encrypt_key: str, *, signed: bool) -> bytes:
    """The decrypted event without its token (``decrypt_here``); an unsigned one must be the challenge."""
    from lark_oapi.core.utils.decryptor import AESCipher

    try:
        sealed = json.loads(body)
        event = json.loads(AESCipher(encrypt_key).decrypt(base64.b64decode(sealed["encrypt"])))
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise _Refused("not an encrypted event") from exc
    if not isinstance(event, dict):
        raise _Refused("not an event")
    if not signed and event.get("type") != "url_verification":
        raise _Refused("an unsigned event")
    event.pop("token", None)
    if isinstance(event.get("header"), dict):
        event["header"].pop("token", None)
    return json.dumps(event, ensure_ascii=False).encode("utf-8")


def events_route(dispatcher: Any, *, path: str = EVENTS_PATH, encrypt_key: str = "",
                 decrypt_here: bool = False) -> Route:
    """A ``POST`` route at ``path`` serving ``dispatcher`` (an ``EventDispatcherHandler``).

    Args:
        encrypt_key: ``FEISHU_ENCRYPT_KEY``: signatures are checked here first (see the module docstring).
        decrypt_here: decrypt here and give ``dispatcher`` (built without keys) the plaintext without its
            token — the encrypt-key-only setting.
    """

    async def endpoint(request: Request) -> Response:
        raw = RawRequest()
        raw.uri = request.url.path
        raw.headers = {_canonical(name): value for name, value in request.headers.items()}
        body = await request.body()
        peer = request.client.host if request.client else "-"
        signed = _SIGNATURE in raw.headers
        if encrypt_key and signed and not signature_ok(raw.headers, body, encrypt_key):
            refused_request("feishu", len(body), peer, "bad signature")
            return _refused()
        try:
            raw.body = await asyncio.to_thread(_plaintext, body, encrypt_key, signed=signed) if decrypt_here \
                else body
        except _Refused as exc:
            refused_request("feishu", len(body), peer, str(exc))
            return _refused()
        try:
            answer = await asyncio.to_thread(dispatcher.do, raw)
        except Exception as exc:  # the SDK raises what it likes on hostile input: all get one answer
            refused_request("feishu", len(body), peer, type(exc).__name__)
            return _refused()
        status = int(answer.status_code or 500)
        if status != 200:
            refused_request("feishu", len(body), peer, f"refused by the SDK (HTTP {status})")
            return _refused()
        headers = {str(k): str(v) for k, v in (answer.headers or {}).items()}
        return Response(content=bytes(answer.content or b""), status_code=status, headers=headers)

    return Route(path, endpoint, methods=["POST"])


def _canonical(name: str) -> str:
    """``x-lark-request-timestamp`` → ``X-Lark-Request-Timestamp`` (the SDK's dict lookups are exact)."""
    return "-".join(part.capitalize() for part in name.split("-"))
