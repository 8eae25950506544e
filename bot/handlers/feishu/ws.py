"""Feishu's long connection (``lark.ws.Client``) in a thread and an event loop of its own.

lark-oapi's websocket client keeps its event loop in a module global taken at
import time (``lark_oapi.ws.client.loop``) and ``start()`` blocks in
``run_until_complete`` forever: there is no ``stop()``. Run in the bot's own
thread it would take over the bot's loop. :class:`LongConnection` therefore

- starts a daemon thread, gives it a fresh event loop and points the SDK's
  module global at it before building the client;
- runs ``start()`` there (endpoint discovery, websocket connect, ping and
  receive loops; events go to the dispatcher, whose handlers hand the work to
  the bot's loop);
- on :meth:`LongConnection.stop`, turns off auto-reconnect, closes the
  websocket and cancels every task on that loop from inside it, so ``start()``
  returns; the thread then closes its loop and ends.

One long connection per process (the SDK's loop is a module global). Errors
raised by ``start()`` other than the shutdown itself are kept in
:attr:`LongConnection.error`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

import lark_oapi as lark
import lark_oapi.ws.client as sdk_ws

__all__ = ["ClientFactory", "LongConnection"]

log = logging.getLogger(__name__)

ClientFactory = Callable[..., Any]
"""Builds the SDK client: called as ``factory(app_id, app_secret, event_handler=…, domain=…, log_level=…)``."""


class LongConnection:
    """The long-connection client, isolated in its own thread.

    Args:
        app_id: ``FEISHU_APP_ID``.
        app_secret: ``FEISHU_APP_SECRET``.
        dispatcher: the ``EventDispatcherHandler`` events go to.
        domain: the Open API origin (``PRHUB_FEISHU_API_URL``).
        client_factory: builds the client in the connection's thread (:mod:`bot.app` passes
            ``lark_oapi.ws.Client``; tests a subclass whose connection step is replaced).
    """

    def __init__(self, *, app_id: str, app_secret: str, dispatcher: Any, domain: str,
                 client_factory: ClientFactory) -> None:
        self._args = (app_id, app_secret)
        self._dispatcher = dispatcher
        self._domain = domain
        self._factory = client_factory
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._stopping = False
        self.error: BaseException | None = None

    @property
    def running(self) -> bool:
        """Whether the thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start the thread; returns once its loop and client exist (the connection follows)."""
        if self._thread is not None:
            raise RuntimeError("LongConnection already started")
        self._thread = threading.Thread(target=self._run, name="feishu-ws", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)

    def stop(self, timeout_s: float = 10.0) -> None:
        """Close the connection and end the thread (waits up to ``timeout_s``)."""
        self._stopping = True
        loop, client = self._loop, self._client
        if loop is not None and client is not None and not loop.is_closed():
            shutdown = _shutdown(client)
            try:
                asyncio.run_coroutine_threadsafe(shutdown, loop)
            except RuntimeError:  # the loop closed meanwhile: nothing left to stop
                shutdown.close()
        if self._thread is not None:
            self._thread.join(timeout_s)
            if self._thread.is_alive():
                log.warning("feishu long connection did not stop within %.0f s", timeout_s)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        imported_with = sdk_ws.loop
        sdk_ws.loop = loop  # the SDK schedules everything on this module global
        self._loop = loop
        try:
            self._client = self._factory(*self._args, event_handler=self._dispatcher, domain=self._domain,
                                   log_level=lark.LogLevel.WARNING)
        except BaseException as exc:
            self.error = exc
            self._ready.set()
            sdk_ws.loop = imported_with
            loop.close()
            return
        self._ready.set()
        try:
            if not self._stopping:
                self._client.start()
        except asyncio.CancelledError:
            pass  # stop() cancelled the loop's tasks
        except BaseException as exc:
            if not self._stopping:
                self.error = exc
                log.error("feishu long connection ended: %s", exc)
        finally:
            _cancel_all(loop)
            loop.close()
            sdk_ws.loop = imported_with  # the SDK's own loop again (it stays referenced, as at import)


async def _shutdown(client: Any) -> None:
    """Inside the connection's loop: no reconnect, close the socket, cancel every other task."""
    client._auto_reconnect = False
    try:
        await client._disconnect()
    finally:
        current = asyncio.current_task()
        for task in asyncio.all_tasks():
            if task is not current:
                task.cancel()


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
