"""The GitHub webhook receiver: ``POST /github/webhook`` in ``prhub serve`` (with ``GITHUB_WEBHOOK_SECRET``).

Each delivery, in order:

1. a body over ``github_webhook_max_bytes`` (``Content-Length``, or the bytes read) -> **413**;
2. ``X-Hub-Signature-256`` must be ``sha256=`` + the HMAC-SHA256 of the raw body under the secret
   (compared with :func:`hmac.compare_digest`); missing, malformed or wrong -> **401**, nothing done;
3. ``X-GitHub-Event: ping`` -> 200 ``pong``; an event other than ``pull_request``, or a
   ``pull_request`` that is not ``closed`` with ``merged: true`` -> 200, ignored;
4. the ``X-GitHub-Delivery`` id is claimed (:func:`bot.claims.seen_key` ``github:delivery:{id}``): a
   delivery seen before — a redelivery, or the same delivery reaching another replica — -> 200
   ``duplicate``, nothing done twice; while Redis is down the delivery cannot be recorded -> **503**
   (GitHub's redelivery, once Redis is back, is then the first);
5. a merged PR -> **202**, and ``on_merged(repo, number)`` runs in the background (the analyses in the
   languages of the channels that follow the repository, and the alerts: GitHub wants an answer
   within 10 seconds). Its failure is logged; the alerts' polling still finds the PR.

Answers are one line of text in Chinese and English; no server detail is echoed.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable

from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from bot.claims import Claims, seen_key
from bot.errors import StoreUnavailableError
from bot.store import redis_errors

__all__ = ["GitHubWebhook", "signature"]

log = logging.getLogger(__name__)

OnMerged = Callable[[str, int], Awaitable[object]]
"""Called as ``on_merged("owner/name", number)`` for each merged PR delivered."""


def signature(secret: str, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` value GitHub sends for ``body``: ``sha256=`` + hex HMAC-SHA256."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _text(status: int, zh: str, en: str) -> Response:
    return PlainTextResponse(f"{zh} / {en}\n", status_code=status)


class GitHubWebhook:
    """The receiver (see the module docstring).

    Args:
        secret: the webhook's secret.
        claims: the delivery claims (Redis; a failure answers 503 so GitHub may redeliver).
        on_merged: the work of one merged PR.
        max_bytes: the largest body accepted.
    """

    def __init__(self, *, secret: str, claims: Claims, on_merged: OnMerged, max_bytes: int) -> None:
        if not secret:
            raise ValueError("the GitHub webhook needs a secret")
        self._secret = secret
        self._claims = claims
        self._on_merged = on_merged
        self._max_bytes = max_bytes
        self._tasks: set[asyncio.Task[None]] = set()

    def routes(self) -> list[Route]:
        """``POST /github/webhook``."""
        return [Route("/github/webhook", self.handle, methods=["POST"])]

    async def _body(self, request: Request) -> bytes | None:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self._max_bytes:
            return None
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self._max_bytes:
                return None
            chunks.append(chunk)
        return b"".join(chunks)

    async def handle(self, request: Request) -> Response:
        """One delivery (see the module docstring for the answers)."""
        try:
            body = await self._body(request)
        except ClientDisconnect:
            return _text(400, "请求未读完", "request body incomplete")
        if body is None:
            return _text(413, f"请求体超过 {self._max_bytes} 字节", f"body larger than {self._max_bytes} bytes")
        given = request.headers.get("x-hub-signature-256", "")
        if not given or not hmac.compare_digest(given.encode(), signature(self._secret, body).encode()):
            return _text(401, "签名无效", "invalid or missing X-Hub-Signature-256")
        event = request.headers.get("x-github-event", "")
        if event == "ping":
            return _text(200, "pong", "pong")
        if event != "pull_request":
            return _text(200, "已忽略", f"event {event or '-'} ignored")
        try:
            payload = json.loads(body)
        except ValueError:
            return _text(400, "请求体不是 JSON", "body is not JSON")
        merged = (isinstance(payload, dict) and payload.get("action") == "closed"
                  and isinstance(payload.get("pull_request"), dict) and payload["pull_request"].get("merged") is True)
        if not merged:
            return _text(200, "已忽略", "not a merged pull request")
        repo = (payload.get("repository") or {}).get("full_name")
        number = payload["pull_request"].get("number")
        if not isinstance(repo, str) or "/" not in repo or not isinstance(number, int):
            return _text(400, "缺少仓库或 PR 编号", "repository.full_name or pull_request.number missing")
        delivery = request.headers.get("x-github-delivery", "").strip()
        if not delivery:
            return _text(400, "缺少 X-GitHub-Delivery", "X-GitHub-Delivery missing")
        store_failed: tuple[type[Exception], ...] = (StoreUnavailableError, *redis_errors())
        try:
            first = await self._claims.first_delivery(seen_key("github", "delivery", delivery), local_ok=False)
        except store_failed as exc:  # Redis: let GitHub redeliver later rather than lose or double the work
            log.warning("github webhook %s: delivery claim failed: %s", delivery, exc)
            return _text(503, "暂时无法处理，请稍后重试", "temporarily unavailable, retry later")
        if not first:
            return _text(200, "重复投递，已处理过", "duplicate delivery")
        task = asyncio.ensure_future(self._run(repo, number, delivery))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return _text(202, f"已接收 {repo}#{number}", f"accepted {repo}#{number}")

    async def _run(self, repo: str, number: int, delivery: str) -> None:
        try:
            await self._on_merged(repo, number)
        except Exception:
            log.exception("github webhook %s: %s#%d could not be handled (the alerts' polling will find it)",
                          delivery, repo, number)

    async def idle(self) -> None:
        """Wait until the merged PRs received so far are handled (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def aclose(self) -> None:
        """Stop the work still running (shutdown)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
