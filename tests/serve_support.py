"""``prhub serve`` as a real process for tests: started on a free port, waited for until ``/healthz`` says ok,
stopped with SIGINT (a test fails if it does not stop within 30 s); its stderr is kept for assertions."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class ServeProcess:
    """A running ``prhub serve``: its base URL, and after it stopped, what it wrote to stderr."""

    base: str
    proc: subprocess.Popen[str]
    err: str = ""


def _ok(health: dict[str, Any]) -> bool:
    return bool(health["status"] == "ok")


@contextmanager
def running_serve(args: Sequence[str], env: Mapping[str, str], *, port: int | None = None,
                  up_within_s: float = 60, cwd: Path | None = None,
                  up: Callable[[dict[str, Any]], bool] = _ok) -> Iterator[ServeProcess]:
    """Run ``prhub serve ARGS --host 127.0.0.1 --port PORT`` with ``env`` (in ``cwd``) until the block ends.

    Fails the test when the process exits before ``/healthz`` answers what ``up`` accepts (``status`` ``ok``)
    or takes longer than ``up_within_s`` seconds, or when SIGINT does not stop it within 30 s.
    """
    port = port or free_port()
    exe = Path(sys.executable).with_name("prhub")
    proc = subprocess.Popen([str(exe), "serve", *args, "--host", "127.0.0.1", "--port", str(port)],
                            env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    running = ServeProcess(base=f"http://127.0.0.1:{port}", proc=proc)
    try:
        deadline = time.monotonic() + up_within_s
        while True:
            try:
                if up(httpx.get(f"{running.base}/healthz", timeout=1).json()):
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, f"prhub serve did not come up in {up_within_s:.0f} s"
            time.sleep(0.2)
        yield running
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, running.err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, running.err = proc.communicate()
            pytest.fail(f"prhub serve did not stop on SIGINT:\n{running.err[-2000:]}")
