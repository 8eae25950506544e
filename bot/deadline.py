"""Deadlines on work that do not count the waits for a platform's pacing.

An answer to a chat message has a deadline (``answer_deadline_s``) so that a stuck source or model
does not hold it forever. The time its replies spend queued behind the same channel's other replies
(:class:`bot.delivery.pacing.Pacer`, a platform's ``Retry-After``) is no part of that work: such waits
run inside :func:`not_counted`, which stops the clock of the current :class:`WorkDeadline` (a context
variable, so it reaches the waits of the tasks the answer starts) and starts it again afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar, Token
from types import TracebackType

__all__ = ["LongWaitNotice", "WorkDeadline", "not_counted", "on_long_wait", "once", "tell_long_wait"]

LongWaitNotice = Callable[[float], Awaitable[None]]
"""Tells the asker that a source keeps the answer waiting about ``seconds`` more (a rate limit)."""


class WorkDeadline:
    """A deadline on work that does not count the waits for the platform's pacing.

    Use as ``async with WorkDeadline(60):``; inside it, a wait wrapped in :func:`not_counted` (the
    pacer's, a platform's ``Retry-After``) stops the clock and gives back the time it took. When the
    work itself passes ``seconds``, the block raises :class:`TimeoutError` (``asyncio.timeout``).

    Args:
        seconds: the time the work may take, waits not counted; ``None``: no deadline.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._timeout: asyncio.Timeout | None = None
        self._paused = 0
        self._stopped = False
        self._left = self._since = 0.0
        self._token: Token[WorkDeadline | None] | None = None
        self.waited_s = 0.0
        """Seconds spent in waits that were not counted (the pacing queue)."""

    async def __aenter__(self) -> WorkDeadline:
        self._timeout = asyncio.timeout(self.seconds)
        await self._timeout.__aenter__()
        self._token = _CURRENT.set(self)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        assert self._timeout is not None
        assert self._token is not None
        _CURRENT.reset(self._token)
        await self._timeout.__aexit__(kind, exc, tb)

    def pause(self) -> None:
        """Stop the clock (nested pauses count: it runs again when the last one resumes)."""
        self._paused += 1
        timeout = self._timeout
        when = timeout.when() if timeout is not None else None
        if self._paused == 1 and timeout is not None and when is not None and not timeout.expired():
            now = asyncio.get_running_loop().time()
            self._left, self._since = max(0.0, when - now), now
            self._stopped = True
            timeout.reschedule(None)

    def resume(self) -> None:
        """Start the clock again with the time that was left when it stopped."""
        self._paused -= 1
        if self._paused == 0 and self._stopped and self._timeout is not None:
            self._stopped = False
            now = asyncio.get_running_loop().time()
            self.waited_s += now - self._since
            self._timeout.reschedule(now + self._left)


_CURRENT: ContextVar[WorkDeadline | None] = ContextVar("prhub_work_deadline", default=None)


@contextlib.contextmanager
def not_counted() -> Iterator[None]:
    """Run a wait without counting it against the current :class:`WorkDeadline` (if any)."""
    deadline = _CURRENT.get()
    if deadline is None:
        yield
        return
    deadline.pause()
    try:
        yield
    finally:
        deadline.resume()


_NOTICE: ContextVar[LongWaitNotice | None] = ContextVar("prhub_long_wait_notice", default=None)


def on_long_wait(notice: LongWaitNotice | None) -> Token[LongWaitNotice | None]:
    """Make ``notice`` the way the current answer (and the tasks it starts) tells its asker of a long
    wait (:func:`tell_long_wait`); the token resets it."""
    return _NOTICE.set(notice)


async def tell_long_wait(seconds: float) -> None:
    """Tell the current asker (if any: a scheduled push has none) that the answer waits ``seconds`` more
    for a source. The notice itself decides whether a second one is worth sending."""
    notice = _NOTICE.get()
    if notice is not None:
        await notice(seconds)


def once(notice: LongWaitNotice) -> LongWaitNotice:
    """``notice`` that speaks only the first time it is called (an answer tells its asker once)."""
    told = False

    async def first(seconds: float) -> None:
        nonlocal told
        if not told:
            told = True
            await notice(seconds)

    return first
