"""Post Slack messages to an incoming webhook (``https://hooks.slack.com/services/T…/B…/…``): no app, no server.

An incoming webhook takes one message per request — the JSON ``{"text", "blocks"}`` of
``chat.postMessage`` without a channel (the webhook is bound to one) — and answers ``200 ok``, or
HTTP 400 with an error word (``invalid_blocks``, ``no_text``, ``invalid_payload``), 403/404 for a
revoked URL (``no_service``, ``channel_is_archived``), 429 with ``Retry-After`` when posting faster
than about one message a second. It returns no ``ts``, so the messages of a long digest cannot be
threaded: they are posted one after another, in order (each within Slack's limits: 50 blocks, 3,000
characters a section — :func:`bot.cards.slack.render_slack` keeps them). Slack signs what it sends to
an app, not what an app sends to a webhook: there is no secret to sign with; the URL is the secret.

Buttons that call the app back (完整报告 in the thread, 订阅标签) have no app to call here:
:func:`webhook_messages` keeps only link buttons and drops the rest.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

from bot.errors import DeliveryError

__all__ = ["MAX_RETRIES", "SlackWebhookError", "post_messages", "webhook_messages"]

MAX_RETRIES = 3
"""Waits for a 429 (``Retry-After`` seconds, else 1 s) before the post gives up."""


class SlackWebhookError(DeliveryError):
    """The webhook refused a message (``status``, Slack's error word) or could not be reached (``status`` 0)."""

    def __init__(self, message: str, *, status: int = 0, error: str = "") -> None:
        super().__init__(message, code=error, status=status)
        self.zh = (f"Slack webhook 没有接受消息：HTTP {status} {error}" if status else
                   f"Slack webhook 没有接受消息：{message}")


class _RateLimited(Exception):
    def __init__(self, wait_s: float) -> None:
        super().__init__(f"rate limited, retry in {wait_s:g} s")
        self.wait_s = wait_s


def webhook_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` (``{"text", "blocks"}``, as :func:`bot.cards.slack.render_slack` gives them) for a webhook:
    in each ``actions`` block only the link buttons (``url``) stay; an ``actions`` block left empty goes."""
    out: list[dict[str, Any]] = []
    for message in messages:
        blocks: list[dict[str, Any]] = []
        for block in message.get("blocks", []):
            if block.get("type") == "actions":
                links = [e for e in block.get("elements", []) if e.get("type") == "button" and e.get("url")]
                for link in links:
                    link.pop("action_id", None)
                    link.pop("value", None)
                if not links:
                    continue
                block = {**block, "elements": links}
            blocks.append(block)
        out.append({"text": message.get("text", ""), "blocks": blocks})
    return out


async def post_messages(url: str, messages: Sequence[dict[str, Any]], *, http: httpx.AsyncClient,
                        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> int:
    """Post each message to the incoming webhook ``url``, in order; returns how many were posted.

    Raises:
        SlackWebhookError: a message was refused (HTTP status and Slack's error word kept), the webhook
            could not be reached, or it still answered 429 after :data:`MAX_RETRIES` waits. Messages
            before it were posted; none after it is.
    """
    posted = 0
    for message in messages:
        retrying = AsyncRetrying(stop=stop_after_attempt(MAX_RETRIES + 1), wait=_wait, sleep=sleep,
                                 retry=retry_if_exception_type(_RateLimited), reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    await _post(url, message, http=http)
        except _RateLimited as exc:
            raise SlackWebhookError(f"the Slack webhook still answered 429 after {MAX_RETRIES} waits",
                                    status=429, error="rate_limited") from exc
        posted += 1
    return posted


async def _post(url: str, message: dict[str, Any], *, http: httpx.AsyncClient) -> None:
    try:
        response = await http.post(url, content=json.dumps(message, ensure_ascii=False).encode(),
                                   headers={"Content-Type": "application/json; charset=utf-8"})
    except httpx.HTTPError as exc:
        raise SlackWebhookError(f"the Slack webhook could not be reached: {type(exc).__name__}") from exc
    if response.status_code == 429:
        raise _RateLimited(float(response.headers.get("Retry-After", "1") or 1))
    if response.status_code != 200:
        word = response.text.strip()[:200]
        raise SlackWebhookError(f"the Slack webhook refused the message: HTTP {response.status_code} {word}",
                                status=response.status_code, error=word)


def _wait(state: RetryCallState) -> float:
    exc = state.outcome.exception() if state.outcome is not None else None
    return exc.wait_s if isinstance(exc, _RateLimited) else 1.0
