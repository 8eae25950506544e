"""Issue 30: the GitHub webhook cannot record a delivery while Redis is down, so it answers 503 and
GitHub's redelivery after the outage is handled — once — rather than called a duplicate."""

from __future__ import annotations

import json

import httpx

from bot.claims import Claims
from bot.handlers.github import GitHubWebhook, signature
from bot.handlers.server import build_server
from bot.store import RedisStore, ResilientStore

from .conftest import PrivateRedis

SECRET = "webhook-secret"


async def test_a_delivery_during_a_redis_outage_gets_503_and_its_redelivery_is_handled(
        private_redis: PrivateRedis) -> None:
    store = ResilientStore(RedisStore.from_url(private_redis.url, degrade=False, socket_timeout_s=0.5),
                           retry_after_s=0.0)
    calls: list[tuple[str, int]] = []

    async def on_merged(repo: str, number: int) -> None:
        calls.append((repo, number))

    hook = GitHubWebhook(secret=SECRET, claims=Claims(store), on_merged=on_merged, max_bytes=64 * 1024)
    body = json.dumps({"action": "closed", "repository": {"full_name": "verl-project/verl"},
                       "pull_request": {"number": 6046, "merged": True}}).encode()
    headers = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "d-outage", "Content-Type": "application/json",
               "X-Hub-Signature-256": signature(SECRET, body)}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=build_server(routes=hook.routes())),
                                 base_url="http://bot") as http:
        try:
            private_redis.stop()
            during = await http.post("/github/webhook", content=body, headers=headers)
            assert during.status_code == 503
            await hook.idle()
            assert calls == []
            private_redis.start()
            again = await http.post("/github/webhook", content=body, headers=headers)  # GitHub's redelivery
            assert again.status_code == 202, again.text
            await hook.idle()
            assert calls == [("verl-project/verl", 6046)]
            third = await http.post("/github/webhook", content=body, headers=headers)
            assert third.status_code == 200
            assert "duplicate" in third.text
        finally:
            await store.close()
