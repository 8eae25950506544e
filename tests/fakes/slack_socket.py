"""A local fake of Slack's Socket Mode, on 127.0.0.1, beside :class:`~fakes.slack_api.FakeSlack`.

``apps.connections.open`` (called with the app-level token :data:`APP_TOKEN`) answers the URL of this
WebSocket server; a client that connects gets Slack's ``hello``; :meth:`FakeSocketMode.push` sends an
``events_api`` envelope (an Events API body, as Slack wraps it) to every connected client, and the acks the
clients send back (``{"envelope_id": …}``) are recorded in :attr:`FakeSocketMode.acks`.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import ServerConnection
from websockets.sync.server import serve as serve_websocket

from fakes.slack_api import FakeSlack

APP_TOKEN = "xapp-test-token"


class FakeSocketMode:
    """The connections, what was pushed and what was acknowledged; thread-safe."""

    def __init__(self) -> None:
        self.url = ""
        self.acks: list[str] = []
        self._connections: list[ServerConnection] = []
        self._lock = threading.Lock()

    def handle(self, connection: ServerConnection) -> None:
        """One client: ``hello``, then its acks until it goes."""
        connection.send(json.dumps({"type": "hello", "num_connections": 1,
                                    "debug_info": {"host": "fake", "approximate_connection_time": 3600},
                                    "connection_info": {"app_id": "A0APP"}}))
        with self._lock:
            self._connections.append(connection)
        try:
            for message in connection:
                data = json.loads(message)
                if isinstance(data, dict) and data.get("envelope_id"):
                    with self._lock:
                        self.acks.append(str(data["envelope_id"]))
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                self._connections.remove(connection)

    def connected(self) -> int:
        """How many clients are connected now."""
        with self._lock:
            return len(self._connections)

    def wait_connected(self, timeout: float = 20.0) -> bool:
        """Block until a client is connected (or ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.connected():
                return True
            time.sleep(0.05)
        return False

    def push(self, body: dict[str, Any]) -> str:
        """Send an Events API ``body`` to every connected client, as Slack does in Socket Mode; its envelope id."""
        envelope = str(uuid.uuid4())
        message = json.dumps({"envelope_id": envelope, "type": "events_api", "accepts_response_payload": False,
                              "retry_attempt": 0, "retry_reason": "", "payload": body})
        with self._lock:
            targets = list(self._connections)
        for connection in targets:
            connection.send(message)
        return envelope


@contextmanager
def serve_socket(fake: FakeSlack, socket: FakeSocketMode) -> Iterator[str]:
    """Run ``socket`` on 127.0.0.1 (a free port) in a thread and let ``fake``'s ``apps.connections.open`` answer its
    URL (``fake.socket_url``); yields the URL."""
    server = serve_websocket(socket.handle, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    socket.url = f"ws://127.0.0.1:{server.socket.getsockname()[1]}/link"
    fake.socket_url = socket.url
    fake.app_token = APP_TOKEN
    try:
        yield socket.url
    finally:
        server.shutdown()
        thread.join(10)
