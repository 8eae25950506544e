"""Issue 30: Feishu with only an encrypt key answers genuine events, and a wrong signature is refused
before its body is read — the real lark-oapi dispatcher, a real Redis and the fake Open API."""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from Crypto.Cipher import AES
from fakes.feishu_api import FakeFeishuAPI
from starlette.applications import Starlette

from bot.app import Services
from bot.delivery.feishu import FeishuClient, FeishuDeliverer
from bot.handlers.feishu.app import FeishuBot

from .conftest import fixture

KEY = "encrypt-key-test"


def _sealed(payload: dict[str, Any]) -> bytes:
    """``payload`` encrypted as Feishu does: AES-256-CBC, key SHA-256(encrypt key), IV first, base64."""
    plain = json.dumps(payload, ensure_ascii=False).encode()
    pad = 16 - len(plain) % 16
    iv = os.urandom(16)
    cipher = AES.new(hashlib.sha256(KEY.encode()).digest(), AES.MODE_CBC, iv)
    sealed = base64.b64encode(iv + cipher.encrypt(plain + bytes([pad]) * pad)).decode()
    return json.dumps({"encrypt": sealed}).encode()


def _headers(body: bytes, key: str = KEY) -> dict[str, str]:
    stamp, nonce = "1776650400", "nonce-1"
    signature = hashlib.sha256((stamp + nonce + key).encode() + body).hexdigest()
    return {"Content-Type": "application/json", "X-Lark-Request-Timestamp": stamp, "X-Lark-Request-Nonce": nonce,
            "X-Lark-Signature": signature}


@pytest.fixture
async def keyed(client: FeishuClient, services: Services) -> AsyncIterator[tuple[FeishuBot, httpx.AsyncClient]]:
    bot = FeishuBot(deliverer=FeishuDeliverer(client), core=services.core, claims=services.claims,
                    encrypt_key=KEY)  # no verification token: the README allows it
    await bot.start()
    app = Starlette(routes=[bot.events_route()])
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bot.test") as http:
        yield bot, http
    await bot.drain()


async def test_with_only_an_encrypt_key_a_genuine_event_is_answered(
        keyed: tuple[FeishuBot, httpx.AsyncClient], fake_api: FakeFeishuAPI) -> None:
    bot, http = keyed
    body = _sealed(fixture("p2p_text"))
    answer = await http.post("/feishu/events", content=body, headers=_headers(body))
    await bot.drain()
    assert answer.status_code == 200, answer.text
    assert [m.target for m in fake_api.replies()] == ["om_p2p_0001"]


async def test_with_only_an_encrypt_key_a_wrong_signature_or_an_unsigned_event_is_refused(
        keyed: tuple[FeishuBot, httpx.AsyncClient], fake_api: FakeFeishuAPI,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    bot, http = keyed
    body = _sealed(fixture("p2p_text"))
    forged = _headers(body, key="a-guess")
    for headers in (forged, {"Content-Type": "application/json"}):
        answer = await http.post("/feishu/events", content=body, headers=headers)
        assert (answer.status_code, answer.json()) == (401, {"msg": "invalid request"})
    junk = b"{" * 50_000 + b"\n forged line"
    answer = await http.post("/feishu/events", content=junk, headers=_headers(b"x"))
    assert answer.status_code == 401
    await bot.drain()
    assert fake_api.replies() == []
    refusals = [r.getMessage() for r in caplog.records if "request refused" in r.getMessage()]
    assert len(refusals) == 3
    assert all(len(line) < 300 and "\n" not in line for line in refusals)
    assert not [r for r in caplog.records if "forged line" in r.getMessage()]
