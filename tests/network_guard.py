"""No test reaches past this machine: a connection to anything but the loopback addresses is refused and fails the test.

:func:`install` (called by ``tests/conftest.py`` before any test module is imported) wraps
``socket.socket.connect`` / ``connect_ex`` and ``socket.getaddrinfo`` for the whole process, every
thread included:

- a TCP or UDP connect to an address outside ``127.0.0.0/8`` and ``::1`` (IPv4-mapped loopback and
  the unspecified address, which Linux connects to this machine, are loopback too) raises
  :class:`OutsideConnection` *before* the real call, so no packet leaves;
- a name lookup of anything but ``localhost`` raises it too (a lookup is traffic to a resolver);
  numeric addresses are not looked up and pass;
- Unix sockets pass.

Each refusal is recorded; the autouse fixture in ``tests/conftest.py`` fails the test that caused
one even when the code under test caught the error (:func:`check`). Child processes (``prhub serve``
in a subprocess, pip in the install test) are outside this guard.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["OutsideConnection", "check", "install", "mark", "take"]

LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})

_lock = threading.Lock()
_violations: list[str] = []
_real: dict[str, Callable[..., Any]] = {}


class OutsideConnection(OSError):
    """A test tried to reach an address outside this machine."""


def _loopback(host: object) -> bool:
    text = host.decode() if isinstance(host, bytes) else host
    if text is None or text == "":
        return True
    if not isinstance(text, str):
        return False
    if text.lower() in LOCAL_NAMES:
        return True
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


def _numeric(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _refuse(what: str) -> None:
    with _lock:
        _violations.append(what)
    raise OutsideConnection(f"tests may only connect to 127.0.0.1 / ::1: refused {what}")


def _check_address(family: int, address: Any, verb: str) -> None:
    if family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple) or not address:
        return
    if not _loopback(address[0]):
        _refuse(f"{verb} to {address[0]!r} port {address[1] if len(address) > 1 else '?'}")


def _connect(self: socket.socket, address: Any) -> None:
    _check_address(self.family, address, "connect")
    _real["connect"](self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    _check_address(self.family, address, "connect")
    return int(_real["connect_ex"](self, address))


def _getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    text = host.decode() if isinstance(host, bytes) else host
    if isinstance(text, str) and not _loopback(text) and not _numeric(text):
        _refuse(f"name lookup of {text!r}")
    return _real["getaddrinfo"](host, *args, **kwargs)


def install() -> None:
    """Wrap the socket functions (once per process)."""
    if _real:
        return
    _real.update(connect=socket.socket.connect, connect_ex=socket.socket.connect_ex,
                 getaddrinfo=socket.getaddrinfo)
    socket.socket.connect = _connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = _getaddrinfo


def mark() -> int:
    """A position in the record of refusals (take it before a test, :func:`check` after)."""
    with _lock:
        return len(_violations)


def take(since: int) -> list[str]:
    """The refusals recorded after ``since``, removed from the record."""
    with _lock:
        found = _violations[since:]
        del _violations[since:]
    return found


def check(since: int) -> None:
    """Fail the running test when a connection outside the loopback addresses was tried after ``since``."""
    import pytest

    found = take(since)
    if found:
        pytest.fail("the test tried to reach the network outside 127.0.0.1 / ::1: " + "; ".join(found),
                    pytrace=False)
