"""POST /github/webhook: signatures, sizes, events and redeliveries, with the claims in the real Redis."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from redis_support import redis_store

from bot.claims import Claims
from bot.handlers.github import GitHubWebhook, signature
from bot.handlers.server import build_server
from bot.store import RedisStore

SECRET = "it's a secret to everybody"


def merged(number: int = 6046, repo: str = "verl-project/verl", **changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"action": "closed", "number": number, "repository": {"full_name": repo},
                               "pull_request": {"number": number, "merged": True, "title": "x"}}
    payload.update(changes)
    return payload


@pytest.fixture
async def store() -> AsyncIterator[RedisStore]:
    async with redis_store() as made:
        yield made


class Receiver:
    def __init__(self, store: RedisStore, max_bytes: int = 64 * 1024) -> None:
        self.calls: list[tuple[str, int]] = []

        async def on_merged(repo: str, number: int) -> None:
            self.calls.append((repo, number))

        self.hook = GitHubWebhook(secret=SECRET, claims=Claims(store), on_merged=on_merged, max_bytes=max_bytes)
        self.client = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_server(routes=self.hook.routes())),
                                        base_url="http://bot")

    async def deliver(self, payload: Any, *, event: str = "pull_request", delivery: str | None = None,
                      secret: str | None = SECRET, body: bytes | None = None,
                      headers: dict[str, str] | None = None) -> httpx.Response:
        raw = body if body is not None else json.dumps(payload).encode()
        sent = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
                "Content-Type": "application/json"}
        if secret is not None:
            sent["X-Hub-Signature-256"] = signature(secret, raw)
        sent.update(headers or {})
        answer = await self.client.post("/github/webhook", content=raw, headers=sent)
        await self.hook.idle()
        return answer


@pytest.fixture
async def receiver(store: RedisStore) -> AsyncIterator[Receiver]:
    made = Receiver(store)
    yield made
    await made.client.aclose()


async def test_a_signed_merged_pr_is_accepted_and_handled_once(receiver: Receiver) -> None:
    answer = await receiver.deliver(merged(), delivery="d-1")
    assert answer.status_code == 202
    assert "verl-project/verl#6046" in answer.text
    assert receiver.calls == [("verl-project/verl", 6046)]
    again = await receiver.deliver(merged(), delivery="d-1")  # GitHub's redelivery: same id
    assert again.status_code == 200
    assert "duplicate" in again.text
    assert receiver.calls == [("verl-project/verl", 6046)]


async def test_the_same_delivery_at_two_replicas_is_handled_by_one(store: RedisStore) -> None:
    first, second = Receiver(store), Receiver(store)
    try:
        answers = [await first.deliver(merged(), delivery="d-2"), await second.deliver(merged(), delivery="d-2")]
        assert sorted(a.status_code for a in answers) == [200, 202]
        assert first.calls + second.calls == [("verl-project/verl", 6046)]
    finally:
        await first.client.aclose()
        await second.client.aclose()


@pytest.mark.parametrize("case", ["missing", "wrong", "other secret", "tampered"])
async def test_a_bad_signature_is_refused_and_nothing_is_done(receiver: Receiver, case: str) -> None:
    body = json.dumps(merged()).encode()
    if case == "missing":
        answer = await receiver.deliver(None, body=body, secret=None)
    elif case == "wrong":
        answer = await receiver.deliver(None, body=body, headers={"X-Hub-Signature-256": "sha256=" + "0" * 64})
    elif case == "other secret":
        answer = await receiver.deliver(None, body=body, secret="another secret")
    else:
        signed = signature(SECRET, body)
        answer = await receiver.deliver(None, body=body.replace(b"6046", b"6047"),
                                        headers={"X-Hub-Signature-256": signed})
    assert answer.status_code == 401
    assert "签名无效" in answer.text
    assert receiver.calls == []


async def test_a_refused_delivery_does_not_use_up_its_id(receiver: Receiver) -> None:
    body = json.dumps(merged()).encode()
    assert (await receiver.deliver(None, body=body, secret="nope", delivery="d-3")).status_code == 401
    assert (await receiver.deliver(None, body=body, delivery="d-3")).status_code == 202
    assert receiver.calls == [("verl-project/verl", 6046)]


async def test_a_body_over_the_limit_is_413(store: RedisStore) -> None:
    small = Receiver(store, max_bytes=2048)
    try:
        payload = merged(padding="x" * 4096)
        answer = await small.deliver(payload)
        assert answer.status_code == 413
        # a body that says nothing of its length is counted as it is read
        raw = json.dumps(payload).encode()

        async def chunks() -> AsyncIterator[bytes]:
            for start in range(0, len(raw), 1000):
                yield raw[start:start + 1000]

        streamed = await small.client.post("/github/webhook", content=chunks(), headers={
            "X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-4",
            "X-Hub-Signature-256": signature(SECRET, raw)})
        assert streamed.status_code == 413
        assert small.calls == []
    finally:
        await small.client.aclose()


async def test_ping_and_other_events_are_acknowledged_and_ignored(receiver: Receiver) -> None:
    ping = await receiver.deliver({"zen": "Keep it logically awesome.", "hook_id": 1}, event="ping")
    assert ping.status_code == 200
    assert "pong" in ping.text
    push = await receiver.deliver({"ref": "refs/heads/main"}, event="push")
    assert push.status_code == 200
    assert "ignored" in push.text
    opened = await receiver.deliver(merged(action="opened"))
    closed = await receiver.deliver(merged(pull_request={"number": 6046, "merged": False}))
    assert (opened.status_code, closed.status_code) == (200, 200)
    assert receiver.calls == []


async def test_malformed_deliveries_get_400(receiver: Receiver) -> None:
    assert (await receiver.deliver(None, body=b"{not json")).status_code == 400
    assert (await receiver.deliver(merged(repository={}))).status_code == 400
    assert (await receiver.deliver(merged(), headers={"X-GitHub-Delivery": ""})).status_code == 400
    assert receiver.calls == []
