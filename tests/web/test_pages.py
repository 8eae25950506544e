"""Digest pages under signed links, through a real server: uvicorn on 127.0.0.1 serving the
route of :mod:`bot.web.pages`, digests kept in the real Redis (DB 15, a unique prefix)."""

from __future__ import annotations

import asyncio
import socket
import time

import httpx
import pytest
import uvicorn
from itsdangerous import TimestampSigner, URLSafeTimedSerializer
from page_support import compared_w16
from redis_support import redis_store

from bot.config import Settings, load_settings
from bot.errors import ConfigError
from bot.handlers.server import build_server
from bot.web import links as links_module
from bot.web.links import BadLink, PageLinks
from bot.web.pages import MESSAGES, DigestPages, page_routes

SECRET = "test-secret-of-enough-length-0123456789"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _OldSigner(TimestampSigner):
    """Signs as if two hours ago."""

    def get_timestamp(self) -> int:
        return int(time.time()) - 7200


def test_links_round_trip_and_refuse() -> None:
    links = PageLinks(SECRET, ttl_s=3600)
    token = links.token("abc123")
    assert links.page_id(token) == "abc123"
    with pytest.raises(BadLink) as unsigned:
        links.page_id("abc123")
    assert unsigned.value.reason == "unsigned"
    with pytest.raises(BadLink) as tampered:
        links.page_id(token[:-2] + ("AA" if not token.endswith("AA") else "BB"))
    assert tampered.value.reason == "tampered"
    with pytest.raises(BadLink) as other_key:
        PageLinks(SECRET + "x").page_id(token)
    assert other_key.value.reason == "tampered"
    old = URLSafeTimedSerializer(SECRET, salt=links_module._SALT, signer=_OldSigner).dumps("abc123")
    with pytest.raises(BadLink) as expired:
        links.page_id(old)
    assert expired.value.reason == "expired"
    assert PageLinks(SECRET).ttl_s == 30 * 24 * 3600


def test_links_are_signed_with_sha256_and_old_sha1_links_verify_until_they_expire() -> None:
    import hashlib
    import hmac

    from itsdangerous.encoding import base64_decode

    links = PageLinks(SECRET, ttl_s=3600)
    token = links.token("abc123")
    payload, signature = token.rsplit(".", 1)
    key = hashlib.sha256  # itsdangerous derives the key from the secret and salt with the same digest
    derived = key(links_module._SALT.encode() + b"signer" + SECRET.encode()).digest()
    expected = hmac.new(derived, payload.encode(), hashlib.sha256).digest()
    assert base64_decode(signature) == expected  # HMAC-SHA256, 32 bytes
    assert len(base64_decode(signature)) == 32
    sha1 = URLSafeTimedSerializer(SECRET, salt=links_module._SALT).dumps("old-page")  # before issue 30
    assert len(base64_decode(sha1.rsplit(".", 1)[1])) == 20
    assert links.page_id(sha1) == "old-page"  # still works
    old_sha1 = URLSafeTimedSerializer(SECRET, salt=links_module._SALT, signer=_OldSigner).dumps("old-page")
    with pytest.raises(BadLink) as expired:
        links.page_id(old_sha1)
    assert expired.value.reason == "expired"  # until it expires


def test_link_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PRHUB_PAGE_SECRET", raising=False)
    monkeypatch.delenv("PRHUB_CONFIG", raising=False)
    with pytest.raises(ConfigError, match="PRHUB_PAGE_SECRET"):
        PageLinks.from_env()
    monkeypatch.setenv("PRHUB_PAGE_SECRET", SECRET)
    monkeypatch.setenv("PRHUB_PUBLIC_URL", "https://prhub.example/")
    monkeypatch.setenv("PRHUB_PAGE_LINK_TTL_S", "600")
    settings = load_settings()
    assert settings.public_url == "https://prhub.example"
    links = PageLinks.from_env(settings)
    assert links.ttl_s == 600
    assert links.url("p1").startswith("https://prhub.example/pages/")
    assert PageLinks.from_env().url("p1").startswith("https://prhub.example/pages/")
    with pytest.raises(ConfigError, match="at least"):
        PageLinks("short")
    monkeypatch.setenv("PRHUB_PUBLIC_URL", "prhub.example")
    with pytest.raises(ConfigError, match="public_url"):
        load_settings()


async def test_pages_through_a_real_server(verl_settings: Settings) -> None:
    digest = compared_w16(verl_settings)
    links = PageLinks(SECRET, ttl_s=3600)
    async with redis_store() as store:
        pages = DigestPages(store)
        page_id = await pages.put(digest)
        assert page_id == DigestPages.page_id(digest)
        assert await pages.latest(digest.repo, "2026-W16", "zh") == digest
        assert set(await pages.known(digest.repo, ["2026-W15", "2026-W16"], "zh")) == {"2026-W16"}
        port = _free_port()
        server = uvicorn.Server(uvicorn.Config(build_server(routes=page_routes(pages, links)), host="127.0.0.1",
                                               port=port, log_level="warning", lifespan="off"))
        serving = asyncio.create_task(server.serve())
        try:
            for _ in range(200):  # uvicorn has no start event; wait at most 10 s
                if server.started:
                    break
                await asyncio.sleep(0.05)
            assert server.started, "uvicorn did not start"
            base = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base, timeout=60) as client:
                good = await client.get(links.path(page_id))
                assert good.status_code == 200, good.text
                assert good.headers["content-type"].startswith("text/html")
                assert "default-src 'none'" in good.headers["content-security-policy"]
                assert good.headers["referrer-policy"] == "no-referrer"
                assert "2026 第 16 周 · 04-13 至 04-19 周报" in good.text
                assert "周环比" in good.text
                again = await client.get(links.path(page_id))
                assert again.text == good.text  # rendered once, kept

                token = links.token(page_id)
                answers = {
                    "unsigned": await client.get(f"/pages/{page_id}"),
                    "bare": await client.get("/pages"),
                    "tampered": await client.get(f"/pages/{token[:-3]}xyz"),
                    "expired": await client.get("/pages/" + URLSafeTimedSerializer(
                        SECRET, salt=links_module._SALT, signer=_OldSigner).dumps(page_id)),
                    "gone": await client.get(links.path("0" * 32)),
                }
            for name, answer in answers.items():
                expected = 404 if name == "gone" else 403
                assert answer.status_code == expected, (name, answer.text)
                assert answer.headers["content-type"].startswith("text/plain")
                message = MESSAGES["unsigned" if name == "bare" else name]
                assert answer.text.strip() == message
                assert "<html" not in answer.text
                assert "/work" not in answer.text
        finally:
            server.should_exit = True
            await serving
