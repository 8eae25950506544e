"""Reading a source off the event loop without letting a slow one hold the others up.

Sources are synchronous (file, git or HTTP reads). Each opened source gets a small thread pool of its
own (:data:`SOURCE_THREADS` threads), so a GitHub source that sleeps through a rate limit fills only
its own pool: a question answered from a snapshot, the message parser and the digest builder (on
asyncio's default pool) go on meanwhile.

A read still waiting after :data:`NOTICE_AFTER_S` seconds while its source waits out a rate limit
(a source's ``rate_limited_until``, epoch seconds; :class:`bot.sources.github.GitHubSource` has one)
tells the asker once how long it will be (:func:`bot.deadline.tell_long_wait`: "GitHub 限流中，约 N 分钟后
回答"), and from then on the wait does not count against the answer's deadline: the answer comes when
the source can give it.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from bot.deadline import not_counted, tell_long_wait

__all__ = ["NOTICE_AFTER_S", "SOURCE_THREADS", "rate_limited_until", "read_source"]

SOURCE_THREADS = 4
"""Threads of one source's own pool: that many reads of it run at once, the rest queue behind them."""
NOTICE_AFTER_S = 3.0
"""Seconds a read may wait on a rate-limited source before the asker is told."""

_P = ParamSpec("_P")
_T = TypeVar("_T")
_POOLS: weakref.WeakKeyDictionary[Any, ThreadPoolExecutor] = weakref.WeakKeyDictionary()
_SHARED: dict[int, ThreadPoolExecutor] = {}  # sources that take no weak reference, by id
_LOCK = threading.Lock()


def rate_limited_until(source: object) -> float | None:
    """Epoch seconds until which ``source`` waits out a rate limit, ``None`` when it does not (or cannot)."""
    value = getattr(source, "rate_limited_until", None)
    return float(value) if isinstance(value, int | float) else None


def _pool(source: object) -> ThreadPoolExecutor:
    with _LOCK:
        try:
            pool = _POOLS.get(source)
        except TypeError:  # no weak reference: keyed by id (sources live as long as the process)
            pool = _SHARED.get(id(source))
            if pool is None:
                pool = _SHARED[id(source)] = _new_pool(source)
            return pool
        if pool is None:
            pool = _POOLS[source] = _new_pool(source)
            weakref.finalize(source, pool.shutdown, wait=False)
        return pool


def _new_pool(source: object) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=SOURCE_THREADS, thread_name_prefix=f"source-{type(source).__name__}")


async def read_source(source: object, call: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``call(*args, **kwargs)`` (a read of ``source``) in ``source``'s own thread pool; see the module
    docstring for the notice and the deadline. Whatever ``call`` raises is raised here."""
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(_pool(source), functools.partial(call, *args, **kwargs))
    told = False
    while True:
        done, _ = await asyncio.wait({future}, timeout=NOTICE_AFTER_S)
        if done:
            return future.result()
        until = rate_limited_until(source)
        if until is None:
            continue
        if not told:
            told = True
            await tell_long_wait(max(0.0, until - time.time()))
        with not_counted():  # the source's limit is no part of the work: the answer comes when it can
            await asyncio.wait({future})
        return future.result()
