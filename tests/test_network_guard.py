"""The guard of :mod:`network_guard`: outside addresses and name lookups are refused before any packet
leaves, and the test that tried is failed. The real socket calls are replaced by recorders here, so a
broken guard could not send anything either; the addresses are from TEST-NET-1 (RFC 5737)."""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import network_guard
import pytest

OUTSIDE = "192.0.2.1"


@pytest.fixture
def real_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, Any]]]:
    """The calls that reached the real socket functions (recorded, not made, for outside addresses)."""
    made: list[tuple[str, Any]] = []
    real = dict(network_guard._real)

    def connect(sock: socket.socket, address: Any) -> None:
        made.append(("connect", address))
        if address[0] not in ("127.0.0.1", "::1"):
            raise AssertionError("the guard let an outside connect through")
        real["connect"](sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(("getaddrinfo", host))
        return real["getaddrinfo"](host, *args, **kwargs)

    monkeypatch.setitem(network_guard._real, "connect", connect)
    monkeypatch.setitem(network_guard._real, "getaddrinfo", getaddrinfo)
    since = network_guard.mark()
    yield made
    network_guard.take(since)  # this test's refusals were made on purpose


def test_an_outside_address_is_refused_before_the_real_connect(real_calls: list[tuple[str, Any]]) -> None:
    since = network_guard.mark()
    with pytest.raises(network_guard.OutsideConnection, match=re.escape(OUTSIDE)):
        socket.create_connection((OUTSIDE, 80), timeout=1)
    assert [c for c in real_calls if c[0] == "connect"] == []
    with pytest.raises(pytest.fail.Exception, match=r"outside 127\.0\.0\.1"):
        network_guard.check(since)  # what the autouse fixture does after each test


def test_a_name_lookup_is_refused(real_calls: list[tuple[str, Any]]) -> None:
    with pytest.raises(network_guard.OutsideConnection, match=r"example\.com"):
        socket.getaddrinfo("example.com", 443)
    assert real_calls == []


def test_clients_see_the_refusal_as_a_connection_error(real_calls: list[tuple[str, Any]]) -> None:
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://{OUTSIDE}:81/", timeout=1)

    async def asyncio_connect() -> None:
        await asyncio.open_connection(OUTSIDE, 82)

    with pytest.raises(network_guard.OutsideConnection):
        asyncio.run(asyncio_connect())
    assert [c for c in real_calls if c[0] == "connect"] == []


def test_loopback_connections_pass(real_calls: list[tuple[str, Any]]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
        with socket.create_connection(("localhost", port), timeout=2):
            pass
    assert ("connect", ("127.0.0.1", port)) in real_calls
