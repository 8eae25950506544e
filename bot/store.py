"""A small async store of JSON values with a time to live, and of records with an index: Redis, or a dict.

The analysis cache, the bot's claims (:mod:`bot.claims`) and its subscriptions
(:mod:`bot.subscriptions`) see only :class:`Store`. Two kinds of data:

- JSON values under string keys, each with an optional time to live (``get_json``,
  ``set_json``, ``delete``, ``claim``);
- records: JSON values under the fields of a hash, and an index set of the hashes that
  hold any (``put_record``, ``delete_record``, ``records``, ``index_members``). A change
  of a record and of the index is one atomic step (a Lua script in Redis), so two
  changes at the same instant lose nothing;
- logs: capped lists of JSON entries, oldest first (``append_log``, ``read_log``; Redis
  ``RPUSH`` + ``LTRIM`` in one transaction), e.g. the subscriptions' change log.

Two implementations share it:

- :class:`RedisStore` — redis-py's asyncio client (``PRHUB_REDIS_URL``). If Redis
  stops answering in the middle of a run, the store reports it once through its
  ``on_unavailable`` callback and from then on behaves as an empty cache (reads
  miss, writes are dropped): a one-shot CLI run is still worth finishing without
  its cache. Its connections come from a ``BlockingConnectionPool``: a burst of
  events waits (up to ``pool_timeout_s``) for a free connection instead of failing.
- :class:`MemoryStore` — a dict in this process, with the same TTL semantics;
  for tests of pure logic and for the CLI when no Redis answers.
- :class:`ResilientStore` — the bot's store (``prhub serve``): a strict
  :class:`RedisStore` with a short-lived in-process fallback. While Redis is down or hung
  (every call is bounded by the socket timeouts), the cache and the delivery claims live
  in memory for at most :data:`FALLBACK_TTL_S` and a warning is logged once per outage;
  state that must not be lost (records, logs, locks, once-only "done" claims) raises
  :class:`~bot.errors.StoreUnavailableError`, whose message tells the person that nothing
  was saved. After a failure Redis is left alone for :data:`RETRY_AFTER_S` seconds (so an
  outage costs each request nothing), then tried again; when it answers, the claims taken
  in memory meanwhile are written back (``SET NX``), so a redelivery is not answered twice.

:func:`open_store` picks one: Redis when it answers a ``PING``, else memory plus
a one-line warning for the caller to show.

Locks (:meth:`Store.lease`): a lease with a short time to live that its holder renews while the
work runs (redis-py's ``Lock``: ``extend()``, a token so only the holder renews or releases it).

Keys are plain strings; :func:`cache_key` joins parts with ``:`` and replaces a
part longer than :data:`MAX_PART` characters (or holding spaces or colons) by
its SHA-256 prefix, so keys stay short and unambiguous.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

if TYPE_CHECKING:
    import redis.asyncio as aioredis

from bot.errors import StoreUnavailableError

__all__ = ["BUSY_TRIES", "CONNECTION_RETRIES", "FALLBACK_TTL_S", "HEALTH_CHECK_INTERVAL_S", "KEY_PREFIX",
           "MAX_PART", "RETRY_AFTER_S", "FileStore", "Lease", "MemoryStore", "RedisStore",
           "ResilientStore", "Store", "StoreHealth", "cache_key", "digest_of", "open_store"]

log = logging.getLogger(__name__)
_T = TypeVar("_T")

# KEYS[1] the hash, KEYS[2] the index; ARGV[1] the field, ARGV[2] the JSON value, ARGV[3] the index member,
# ARGV[4] "1" to replace an existing field. Returns 1 when the field was new.
_PUT_RECORD = """
local new = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0
if new or ARGV[4] == '1' then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('SADD', KEYS[2], ARGV[3])
if new then return 1 else return 0 end
"""
# KEYS[1] the hash, KEYS[2] the index; ARGV[1] the field, ARGV[2] the index member. Returns 1 when it was there.
_DELETE_RECORD = """
local gone = redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('HLEN', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[2]) end
return gone
"""

# KEYS the claims of one delivery; ARGV[1] their time to live in milliseconds. All are set, or none when one is
# already there: returns 1 when this caller took them all.
_CLAIM_ALL = """
for _, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then return 0 end
end
for _, key in ipairs(KEYS) do redis.call('SET', key, '1', 'PX', ARGV[1]) end
return 1
"""

KEY_PREFIX = "prhub"
MAX_PART = 80
_CONNECT_TIMEOUT_S = 2.0
FALLBACK_TTL_S = 3600
"""The longest a value or claim lives in the in-process fallback while Redis is down (seconds)."""
RETRY_AFTER_S = 5.0
"""After a Redis failure, seconds during which the :class:`ResilientStore` does not try Redis again."""
HEALTH_CHECK_INTERVAL_S = 10
"""A pooled connection idle this long (seconds) is checked with a ``PING`` before it is used."""
CONNECTION_RETRIES = 2
"""Times a command that met a closed connection is sent again on a new one."""
BUSY_TRIES = 5
"""Least tries of a call whose pool was busy while Redis answered the probe (a burst, not an outage)."""
BUSY_WAIT_S = 3.0
"""Seconds a call whose pool stays busy keeps trying, after its :data:`BUSY_TRIES` (a burst on a slow machine
outlasts five short pool waits; a cached read then falls back to memory)."""
STATE_BUSY_WAIT_S = 30.0
"""Seconds a call on state — subscriptions, logs, leases, which have no fallback and would be refused to a
person — keeps trying while its pool stays busy and Redis answers the probe (a burst of hundreds of events on a
loaded two-core machine holds a small pool for many seconds; each try is bounded by the pool timeout)."""

StoreHealth = Literal["ok", "down", "memory"]
"""``ok``: Redis answers; ``down``: it does not (the bot is degraded); ``memory``: no Redis configured."""


class Lease(Protocol):
    """A held lock (:meth:`Store.lease`): renewed by its holder while the work runs."""

    async def extend(self, ttl_s: float) -> bool:
        """Set the lock's remaining time to ``ttl_s`` seconds; ``False`` when it is no longer ours."""
        ...

    async def release(self) -> None:
        """Give the lock back (a lock already expired or taken by another is left alone)."""
        ...


class Store(Protocol):
    """JSON values under string keys, each with an optional time to live."""

    async def get_json(self, key: str) -> Any | None:
        """The value stored under ``key`` (decoded JSON), or ``None`` when absent or expired."""
        ...

    async def set_json(self, key: str, value: Any, ttl_s: int | None = None) -> None:
        """Store ``value`` (anything :func:`json.dumps` accepts) under ``key``, for ``ttl_s`` seconds
        (``None``: no expiry)."""
        ...

    async def delete(self, *keys: str) -> None:
        """Remove ``keys``; missing keys are ignored."""
        ...

    async def claim(self, key: str, ttl_s: int, *, local_ok: bool = False) -> bool:
        """Atomically mark ``key`` as taken for ``ttl_s`` seconds.

        Returns ``True`` for the one caller that took it, ``False`` while it is
        already taken (Redis ``SET key 1 NX EX ttl``). Used to handle each chat
        event once across redeliveries, restarts and replicas. ``local_ok``: while
        Redis is down, a claim in this process will do (a chat delivery: answering
        it beats losing it); without it the claim raises.
        """
        ...

    async def claim_all(self, keys: Sequence[str], ttl_s: int, *, local_ok: bool = False) -> bool:
        """Claim every one of ``keys`` for ``ttl_s`` seconds in one atomic step, or none of them.

        Returns ``True`` for the one caller that took them all, ``False`` when any was already taken
        (then nothing was taken): of any number of simultaneous callers with overlapping keys, exactly
        one wins. ``local_ok`` as in :meth:`claim`.
        """
        ...

    async def lease(self, key: str, ttl_s: float) -> Lease | None:
        """Take the lock ``key`` for ``ttl_s`` seconds: the :class:`Lease`, or ``None`` when it is held."""
        ...

    async def put_record(self, key: str, field: str, value: Any, *, index: str, member: str,
                         replace: bool = False) -> bool:
        """Store ``value`` (JSON) under ``field`` of the hash ``key`` and add ``member`` to the set ``index``,
        in one atomic step. An existing field is kept unless ``replace``.

        Returns:
            ``True`` when ``field`` was not there before.
        """
        ...

    async def delete_record(self, key: str, field: str, *, index: str, member: str) -> bool:
        """Remove ``field`` from the hash ``key``; when the hash is then empty, remove ``member`` from the
        set ``index`` — in one atomic step.

        Returns:
            ``True`` when ``field`` was there.
        """
        ...

    async def records(self, key: str) -> dict[str, Any]:
        """Every field of the hash ``key`` with its decoded JSON value (empty when there is none)."""
        ...

    async def records_many(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        """:meth:`records` of each of ``keys``, in order, read in one round trip (a Redis pipeline)."""
        ...

    async def index_members(self, index: str) -> list[str]:
        """The members of the set ``index``, sorted."""
        ...

    async def append_log(self, key: str, value: Any, *, max_len: int) -> None:
        """Append ``value`` (JSON) to the list ``key``, keeping only its last ``max_len`` entries (one atomic step)."""
        ...

    async def read_log(self, key: str, *, limit: int | None = None) -> list[Any]:
        """The entries of the list ``key``, oldest first: all of them, or the last ``limit``."""
        ...

    async def close(self) -> None:
        """Release connections; the store is not used afterwards."""
        ...


def cache_key(*parts: object, prefix: str = KEY_PREFIX) -> str:
    """``prefix:part1:part2:…``; a part that is long or holds ``:``/whitespace becomes ``h-`` + 16 hex
    digits of its SHA-256 (repository names keep their ``/``)."""
    out = [prefix]
    for part in parts:
        text = str(part)
        if len(text) > MAX_PART or any(c in text for c in ": \t\n"):
            text = "h-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        out.append(text)
    return ":".join(out)


def digest_of(value: Any) -> str:
    """A stable SHA-256 hex digest of a JSON-able value (keys sorted), for content keys."""
    data = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


class MemoryStore:
    """:class:`Store` in a dict of this process; expiry is checked on read (monotonic clock)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._data: dict[str, tuple[str, float | None]] = {}
        self._hashes: dict[str, dict[str, str]] = {}
        self._sets: dict[str, set[str]] = {}
        self._logs: dict[str, list[str]] = {}
        self._clock = clock

    async def get_json(self, key: str) -> Any | None:
        """See :meth:`Store.get_json`."""
        item = self._data.get(key)
        if item is None:
            return None
        text, expires = item
        if expires is not None and self._clock() >= expires:
            del self._data[key]
            return None
        return json.loads(text)

    async def set_json(self, key: str, value: Any, ttl_s: int | None = None) -> None:
        """See :meth:`Store.set_json`; the value is serialised now, so later changes to it do not leak in."""
        self._data[key] = (json.dumps(value, ensure_ascii=False), None if ttl_s is None else self._clock() + ttl_s)

    async def delete(self, *keys: str) -> None:
        """See :meth:`Store.delete`."""
        for key in keys:
            self._data.pop(key, None)

    async def claim(self, key: str, ttl_s: int, *, local_ok: bool = False) -> bool:
        """See :meth:`Store.claim` (atomic within this process's event loop: no await inside)."""
        item = self._data.get(key)
        if item is not None and (item[1] is None or self._clock() < item[1]):
            return False
        self._data[key] = ("1", self._clock() + ttl_s)
        return True

    async def claim_all(self, keys: Sequence[str], ttl_s: int, *, local_ok: bool = False) -> bool:
        """See :meth:`Store.claim_all` (no await inside: atomic on this loop)."""
        now = self._clock()
        if any((item := self._data.get(key)) is not None and (item[1] is None or now < item[1]) for key in keys):
            return False
        for key in keys:
            self._data[key] = ("1", now + ttl_s)
        return True

    def remaining(self, key: str) -> float | None:
        """Seconds ``key`` still lives (``None``: absent, or no expiry)."""
        item = self._data.get(key)
        if item is None or item[1] is None:
            return None
        left = item[1] - self._clock()
        return left if left > 0 else None

    async def lease(self, key: str, ttl_s: float) -> Lease | None:
        """See :meth:`Store.lease` (a token in the value, so only the holder extends or releases it)."""
        item = self._data.get(key)
        if item is not None and (item[1] is None or self._clock() < item[1]):
            return None
        token = uuid.uuid4().hex
        self._data[key] = (json.dumps(token), self._clock() + ttl_s)
        return _MemoryLease(self, key, token)

    async def put_record(self, key: str, field: str, value: Any, *, index: str, member: str,
                         replace: bool = False) -> bool:
        """See :meth:`Store.put_record` (no await inside: atomic on this loop)."""
        fields = self._hashes.setdefault(key, {})
        new = field not in fields
        if new or replace:
            fields[field] = json.dumps(value, ensure_ascii=False)
        self._sets.setdefault(index, set()).add(member)
        return new

    async def delete_record(self, key: str, field: str, *, index: str, member: str) -> bool:
        """See :meth:`Store.delete_record`."""
        fields = self._hashes.get(key, {})
        gone = fields.pop(field, None) is not None
        if not fields:
            self._hashes.pop(key, None)
            self._sets.get(index, set()).discard(member)
        return gone

    async def records(self, key: str) -> dict[str, Any]:
        """See :meth:`Store.records`."""
        return {name: json.loads(text) for name, text in self._hashes.get(key, {}).items()}

    async def records_many(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        """See :meth:`Store.records_many`."""
        return [await self.records(key) for key in keys]

    async def index_members(self, index: str) -> list[str]:
        """See :meth:`Store.index_members`."""
        return sorted(self._sets.get(index, set()))

    async def append_log(self, key: str, value: Any, *, max_len: int) -> None:
        """See :meth:`Store.append_log`."""
        entries = self._logs.setdefault(key, [])
        entries.append(json.dumps(value, ensure_ascii=False))
        del entries[: max(0, len(entries) - max_len)]

    async def read_log(self, key: str, *, limit: int | None = None) -> list[Any]:
        """See :meth:`Store.read_log`."""
        entries = self._logs.get(key, [])
        shown = entries if limit is None else entries[-limit:] if limit > 0 else []
        return [json.loads(text) for text in shown]

    async def close(self) -> None:
        """Nothing to release."""

    def __len__(self) -> int:
        return len(self._data) + len(self._hashes) + len(self._sets) + len(self._logs)


class FileStore(MemoryStore):
    """A :class:`MemoryStore` read from a JSON file at open and written back at :meth:`close` — the analysis
    cache of a command run by a CI job with no Redis (``PRHUB_CACHE_FILE``; the CI's cache keeps the file
    between runs, docs/github-action.md). Only plain keys (``get_json``/``set_json``: analyses, digests,
    source caches) are kept, each with its expiry as a wall-clock instant; records, sets, logs and claims
    live for the run. A file that is missing or unreadable starts an empty cache (one warning); the file
    is replaced atomically (written beside it, then renamed), so a run killed mid-write leaves the old one.

    Args:
        path: the JSON file (``{"version": 1, "entries": {key: [json text, expires at (epoch s) or null]}}``).
        warn: called with one line when the file cannot be read or written.
    """

    VERSION = 1

    def __init__(self, path: Path, *, warn: Callable[[str], None] | None = None) -> None:
        super().__init__(clock=time.time)
        self.path = path
        self._warn = warn or log.warning
        self.loaded = 0
        """How many entries the file held at open (not expired)."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            self._warn(f"the cache file {path.name} could not be read ({type(exc).__name__}); starting empty")
            return
        entries = raw.get("entries") if isinstance(raw, dict) and raw.get("version") == self.VERSION else None
        if not isinstance(entries, dict):
            self._warn(f"the cache file {path.name} is not a prhub cache; starting empty")
            return
        now = time.time()
        for key, item in entries.items():
            if (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)
                    and (item[1] is None or (isinstance(item[1], int | float) and item[1] > now))):
                self._data[key] = (item[0], item[1])
        self.loaded = len(self._data)

    async def close(self) -> None:
        """Write the plain keys that have not expired back to the file (atomically)."""
        now = time.time()
        entries = {k: [text, expires] for k, (text, expires) in self._data.items()
                   if expires is None or expires > now}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text(json.dumps({"version": self.VERSION, "entries": entries}, ensure_ascii=False),
                           encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            self._warn(f"the cache file {self.path.name} could not be written: {exc.strerror}")


def redis_errors() -> tuple[type[Exception], ...]:
    """What a failed Redis call raises, for an ``except`` clause: ``(redis.exceptions.RedisError,)``, or
    ``()`` when redis was never imported (then no store of the process talks to Redis, and nothing
    raises it) — so a run on the :class:`MemoryStore` does not load redis-py just to name its error."""
    module = sys.modules.get("redis.exceptions")
    return (module.RedisError,) if module is not None else ()


class _MemoryLease:
    def __init__(self, store: MemoryStore, key: str, token: str) -> None:
        self._store, self._key, self._token = store, key, token

    def _ours(self) -> bool:
        item = self._store._data.get(self._key)
        return item is not None and item[0] == json.dumps(self._token) and (
            item[1] is None or self._store._clock() < item[1])

    async def extend(self, ttl_s: float) -> bool:
        if not self._ours():
            return False
        self._store._data[self._key] = (json.dumps(self._token), self._store._clock() + ttl_s)
        return True

    async def release(self) -> None:
        if self._ours():
            del self._store._data[self._key]


class _RedisLease:
    """redis-py's ``Lock`` (a token per holder; ``extend`` and ``release`` by Lua scripts)."""

    def __init__(self, lock: Any) -> None:
        self._lock = lock

    async def extend(self, ttl_s: float) -> bool:
        from redis.exceptions import LockError  # a Redis lease exists only once redis is loaded

        try:
            return bool(await self._lock.extend(ttl_s, replace_ttl=True))
        except LockError:
            return False
        except redis_errors() as exc:
            raise StoreUnavailableError(f"Redis does not answer ({exc})") from exc

    async def release(self) -> None:
        from redis.exceptions import LockError

        try:
            await self._lock.release()
        except LockError:
            return  # expired, or taken by another since: nothing of ours to give back
        except redis_errors() as exc:
            log.warning("could not release a lock (%s); it expires by itself", exc)


class RedisStore:
    """:class:`Store` on redis-py's asyncio client.

    Args:
        client: a ``redis.asyncio.Redis`` (injected; tests pass one on DB 15).
        on_unavailable: called once, with a one-line message, the first time Redis
            fails; after that every read misses and every write is skipped.
        key_prefix: prepended to every key (tests isolate themselves with a unique one).
        degrade: ``True`` (a cache: the one-shot CLI) — a Redis failure turns the store
            off as described above; ``False`` (the bot's state: subscriptions, markers,
            checkpoints) — every failure is raised, so nothing is silently lost and the
            next call tries Redis again.
        probe: a client with a connection of its own for :meth:`probe` (``None``: the pool's).
    """

    def __init__(self, client: aioredis.Redis, *, on_unavailable: Callable[[str], None] | None = None,
                 key_prefix: str = "", degrade: bool = True, probe: aioredis.Redis | None = None) -> None:
        self._client = client
        self._probe = probe
        self.key_prefix = key_prefix
        self._on_unavailable = on_unavailable
        self._degrade = degrade
        self.available = True

    @classmethod
    def from_url(cls, url: str, *, on_unavailable: Callable[[str], None] | None = None,
                 degrade: bool = True, key_prefix: str = "", max_connections: int = 64,
                 pool_timeout_s: float = 2.0, socket_timeout_s: float = _CONNECT_TIMEOUT_S) -> RedisStore:
        """A store on ``url`` (``redis://host:port/db``) with short connect and socket timeouts
        (``socket_timeout_s``, 2 s) and a ``BlockingConnectionPool`` of ``max_connections``: a caller
        finding every connection busy waits up to ``pool_timeout_s`` for one (then a ``RedisError``);
        ``degrade`` and ``key_prefix`` as in the class.

        A pooled connection idle for :data:`HEALTH_CHECK_INTERVAL_S` is checked with a ``PING`` before
        use, and a command that meets a closed connection (a Redis restarted since) reconnects and is
        sent again, up to :data:`CONNECTION_RETRIES` times (redis-py's ``health_check_interval`` and
        ``Retry`` on ``ConnectionError``; a timeout is not retried, so a hung Redis costs one timeout).
        :meth:`probe` pings on a connection of its own, outside the pool."""
        import redis.asyncio as aioredis  # imported here: a run on the memory store never loads redis
        from redis.asyncio.retry import Retry
        from redis.backoff import ExponentialBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError

        connect_s = min(socket_timeout_s, _CONNECT_TIMEOUT_S)
        def retry() -> Retry:
            return Retry(ExponentialBackoff(cap=0.5, base=0.05), CONNECTION_RETRIES,
                         supported_errors=(RedisConnectionError,))

        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=pool_timeout_s, health_check_interval=HEALTH_CHECK_INTERVAL_S,
            retry=retry(), retry_on_error=[RedisConnectionError], socket_connect_timeout=connect_s,
            socket_timeout=socket_timeout_s,
        )
        client = aioredis.Redis.from_pool(pool)  # the client owns the pool: aclose() closes it
        probe = aioredis.Redis.from_url(url, single_connection_client=True, socket_connect_timeout=connect_s,
                                        socket_timeout=socket_timeout_s, retry=retry(),
                                        retry_on_error=[RedisConnectionError])
        return cls(client, on_unavailable=on_unavailable, degrade=degrade, key_prefix=key_prefix, probe=probe)

    async def ping(self) -> None:
        """Check that Redis answers.

        Raises:
            redis.exceptions.RedisError: it does not (connection refused, timeout, auth).
        """
        await self._client.ping()

    async def probe(self) -> None:
        """``PING`` on the probe's own connection, which a busy pool does not delay: whether Redis itself
        answers, as opposed to every pooled connection being in use.

        Raises:
            redis.exceptions.RedisError: Redis does not answer.
        """
        await (self._probe or self._client).ping()

    def _lost(self, exc: Exception) -> None:
        if not self._degrade:
            raise exc
        if self.available:
            self.available = False
            if self._on_unavailable is not None:
                self._on_unavailable(f"Redis stopped answering ({exc}); continuing without the cache")

    async def get_json(self, key: str) -> Any | None:
        """See :meth:`Store.get_json`."""
        if not self.available:
            return None
        try:
            raw = await self._client.get(self.key_prefix + key)
        except redis_errors() as exc:
            self._lost(exc)
            return None
        return None if raw is None else json.loads(raw)

    async def set_json(self, key: str, value: Any, ttl_s: int | None = None) -> None:
        """See :meth:`Store.set_json` (``SET key value EX ttl``)."""
        if not self.available:
            return
        try:
            await self._client.set(self.key_prefix + key, json.dumps(value, ensure_ascii=False), ex=ttl_s)
        except redis_errors() as exc:
            self._lost(exc)

    async def delete(self, *keys: str) -> None:
        """See :meth:`Store.delete`."""
        if not self.available or not keys:
            return
        try:
            await self._client.delete(*(self.key_prefix + k for k in keys))
        except redis_errors() as exc:
            self._lost(exc)

    async def claim(self, key: str, ttl_s: int, *, local_ok: bool = False) -> bool:
        """See :meth:`Store.claim`. Unlike the cache methods, a Redis failure is raised here
        (``local_ok`` is the :class:`ResilientStore`'s business): answering twice or not at all
        must be the caller's decision.

        Raises:
            redis.exceptions.RedisError: Redis did not answer.
        """
        return bool(await self._client.set(self.key_prefix + key, "1", nx=True, ex=ttl_s))

    async def claim_all(self, keys: Sequence[str], ttl_s: int, *, local_ok: bool = False) -> bool:
        """See :meth:`Store.claim_all` (one Lua script: ``EXISTS`` on each key, then ``SET … PX`` on each).

        Raises:
            redis.exceptions.RedisError: Redis did not answer.
        """
        if not keys:
            return True
        names = [self.key_prefix + key for key in keys]
        return bool(await self._client.eval(_CLAIM_ALL, len(names), *names, str(ttl_s * 1000)))

    async def claim_for(self, key: str, ttl_ms: int) -> bool:
        """A claim of ``ttl_ms`` milliseconds (``SET NX PX``; the fallback's claims written back)."""
        return bool(await self._client.set(self.key_prefix + key, "1", nx=True, px=max(1, ttl_ms)))

    async def lease(self, key: str, ttl_s: float) -> Lease | None:
        """See :meth:`Store.lease` (redis-py's ``Lock``, not blocking).

        Raises:
            redis.exceptions.RedisError: Redis did not answer.
        """
        lock = self._client.lock(self.key_prefix + key, timeout=ttl_s, blocking=False)
        return _RedisLease(lock) if await lock.acquire() else None

    async def put_record(self, key: str, field: str, value: Any, *, index: str, member: str,
                         replace: bool = False) -> bool:
        """See :meth:`Store.put_record` (one Lua script: ``HSET``/``HEXISTS`` and ``SADD``).

        Raises:
            redis.exceptions.RedisError: Redis did not answer (records are state, never silently dropped).
        """
        keys = [self.key_prefix + key, self.key_prefix + index]
        args = [field, json.dumps(value, ensure_ascii=False), member, "1" if replace else "0"]
        return bool(await self._client.eval(_PUT_RECORD, 2, *keys, *args))

    async def delete_record(self, key: str, field: str, *, index: str, member: str) -> bool:
        """See :meth:`Store.delete_record` (one Lua script: ``HDEL``, ``HLEN``, ``SREM``).

        Raises:
            redis.exceptions.RedisError: Redis did not answer.
        """
        keys = [self.key_prefix + key, self.key_prefix + index]
        return bool(await self._client.eval(_DELETE_RECORD, 2, *keys, field, member))

    async def records(self, key: str) -> dict[str, Any]:
        """See :meth:`Store.records` (``HGETALL``).

        Raises:
            redis.exceptions.RedisError: Redis did not answer.
        """
        raw = await self._client.hgetall(self.key_prefix + key)
        return {_text(name): json.loads(value) for name, value in raw.items()}

    async def records_many(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        """See :meth:`Store.records_many` (``HGETALL`` of each in one pipeline, no transaction).

        Raises:
            redis.exceptions.RedisError: Redis did not answer.
        """
        if not keys:
            return []
        async with self._client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.hgetall(self.key_prefix + key)
            answers = await pipe.execute()
        return [{_text(name): json.loads(value) for name, value in raw.items()} for raw in answers]

    async def index_members(self, index: str) -> list[str]:
        """See :meth:`Store.index_members` (``SMEMBERS``).

        Raises:
            redis.exceptions.RedisError: Redis did not answer.
        """
        return sorted(_text(member) for member in await self._client.smembers(self.key_prefix + index))

    async def append_log(self, key: str, value: Any, *, max_len: int) -> None:
        """See :meth:`Store.append_log` (``RPUSH`` and ``LTRIM`` in one ``MULTI``).

        Raises:
            redis.exceptions.RedisError: Redis did not answer (a log is state, never silently dropped).
        """
        async with self._client.pipeline(transaction=True) as pipe:
            pipe.rpush(self.key_prefix + key, json.dumps(value, ensure_ascii=False))
            pipe.ltrim(self.key_prefix + key, -max_len, -1)
            await pipe.execute()

    async def read_log(self, key: str, *, limit: int | None = None) -> list[Any]:
        """See :meth:`Store.read_log` (``LRANGE``).

        Raises:
            redis.exceptions.RedisError: Redis did not answer.
        """
        if limit is not None and limit <= 0:
            return []
        raw = await self._client.lrange(self.key_prefix + key, -limit if limit is not None else 0, -1)
        return [json.loads(item) for item in raw]

    async def close(self) -> None:
        """Close the client's connection pool (and the probe's connection)."""
        if self._probe is not None:
            await self._probe.aclose()
        await self._client.aclose()


class ResilientStore:
    """:class:`Store` of the bot: a strict :class:`RedisStore` (``degrade=False``) that answers through a
    Redis fault (see the module docstring).

    Args:
        redis: the strict store (every failure raised to this class).
        clock: monotonic seconds (tests move it).
        retry_after_s: how long Redis is left alone after a failure (:data:`RETRY_AFTER_S`).
        fallback_ttl_s: the longest life of what the fallback keeps (:data:`FALLBACK_TTL_S`).
    """

    def __init__(self, redis: RedisStore, *, clock: Callable[[], float] = time.monotonic,
                 retry_after_s: float = RETRY_AFTER_S, fallback_ttl_s: int = FALLBACK_TTL_S) -> None:
        self.redis = redis
        self.key_prefix = redis.key_prefix
        self._clock = clock
        self._retry_after_s = retry_after_s
        self._fallback_ttl_s = fallback_ttl_s
        self._memory = MemoryStore(clock=clock)
        self._claimed: list[str] = []  # claims taken in memory during an outage, written back after it
        self._down_since: float | None = None
        self._next_try = 0.0
        self._probing: asyncio.Future[bool] | None = None
        self._checking: asyncio.Task[StoreHealth] | None = None
        self.reason = ""
        self.outages = 0
        """Outages declared since the start: calls that failed while Redis did not answer its probe either."""
        self.busy = 0
        """Calls that failed while Redis answered the probe (every pooled connection in use: load, not an outage)."""

    @property
    def health(self) -> StoreHealth:
        """``ok`` or ``down`` (as of the last call; :meth:`check` asks Redis)."""
        return "ok" if self._down_since is None else "down"

    @property
    def down_for_s(self) -> float | None:
        """Seconds since the current outage was declared, ``None`` while Redis answers (for ``/readyz``)."""
        return None if self._down_since is None else self._clock() - self._down_since

    async def check(self) -> StoreHealth:
        """Ask Redis (a ``PING``, bounded by the socket timeout) when it was down and is due a try; the health."""
        if self._down_since is not None and self._clock() >= self._next_try:
            try:
                await self.redis.probe()
            except redis_errors() as exc:
                self._failed(exc)
            else:
                await self._recovered()
        return self.health

    def check_soon(self) -> StoreHealth:
        """The health now, without waiting on Redis: when it is down and due a try, :meth:`check` runs in
        the background (one at a time) and a later call sees its result. ``/healthz`` uses this, so it
        answers at once whether Redis answers, hangs or is gone."""
        if self._down_since is not None and self._clock() >= self._next_try and (
                self._checking is None or self._checking.done()):
            self._checking = asyncio.get_running_loop().create_task(self.check(), name="redis health check")
        return self.health

    async def _answers_probe(self) -> bool:
        """Whether Redis answers a ``PING`` on the probe's own connection; simultaneous callers share one."""
        if self._probing is None or self._probing.done():
            failures: tuple[type[Exception], ...] = (TimeoutError, *redis_errors())

            async def ping() -> bool:
                try:
                    await self.redis.probe()
                except failures:
                    return False
                return True
            self._probing = asyncio.ensure_future(ping())
        return await asyncio.shield(self._probing)

    def _failed(self, exc: BaseException) -> None:
        now = self._clock()
        self._next_try = now + self._retry_after_s
        self.reason = str(exc) or type(exc).__name__
        if self._down_since is None:
            self._down_since = now
            self.outages += 1
            log.warning("Redis does not answer (%s): degraded, answering with an in-process fallback; "
                        "subscriptions cannot be saved until it is back", self.reason)

    async def _recovered(self) -> None:
        if self._down_since is None:
            return
        outage = self._clock() - self._down_since
        self._down_since = None
        written = await self._write_back()
        if self._down_since is None:
            log.warning("Redis answers again after %.0f s: %d claims of the outage written back", outage, written)

    async def _write_back(self) -> int:
        """Write the claims taken in memory to Redis (``SET NX``, their remaining time); how many were."""
        keys, self._claimed = self._claimed, []
        written = 0
        for index, key in enumerate(keys):
            left = self._memory.remaining(key)
            if left is None:
                continue
            try:
                await self.redis.claim_for(key, int(left * 1000))
            except redis_errors() as exc:
                self._claimed.extend(keys[index:])
                self._failed(exc)
                return written
            written += 1
        return written

    async def _call(self, op: Callable[[], Awaitable[_T]],
                    busy_wait_s: float | None = None) -> tuple[bool, _T | None]:
        """``(True, result)`` when Redis answered, ``(False, None)`` when it is down (now or still).

        A failure is an outage only when Redis does not answer the probe either (:meth:`RedisStore.probe`,
        on a connection outside the pool); while it does, the pool was busy (a burst) and the call is tried
        again, at least :data:`BUSY_TRIES` times and for ``busy_wait_s`` seconds (:data:`BUSY_WAIT_S`), before
        this one call gives up without declaring an outage."""
        if self._down_since is not None:
            if self._clock() < self._next_try:
                return False, None
            was_down = True
        else:
            was_down = False
        failures: tuple[type[Exception], ...] = (TimeoutError, *redis_errors())
        patience_s = BUSY_WAIT_S if busy_wait_s is None else busy_wait_s
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                result = await op()
            except failures as exc:
                if was_down or not await self._answers_probe():
                    self._failed(exc)
                    return False, None
                self.busy += 1
                if attempt >= BUSY_TRIES and time.monotonic() - started >= patience_s:
                    self.reason = f"Redis is busy ({exc})"
                    log.warning("Redis answers but its connections stayed busy (%s); this call gives up", exc)
                    return False, None
                await asyncio.sleep(0.05)  # a moment for the burst to hand connections back
                continue
            break
        if was_down:
            await self._recovered()
        elif self._claimed:
            await self._write_back()
        return True, result

    async def _state(self, op: Callable[[], Awaitable[_T]]) -> _T:
        answered, result = await self._call(op, busy_wait_s=STATE_BUSY_WAIT_S)
        if not answered:
            raise StoreUnavailableError(f"Redis does not answer ({self.reason})")
        return result  # type: ignore[return-value]

    def _short(self, ttl_s: int | None) -> int:
        return self._fallback_ttl_s if ttl_s is None else min(ttl_s, self._fallback_ttl_s)

    async def get_json(self, key: str) -> Any | None:
        """See :meth:`Store.get_json`; while Redis is down, what the fallback holds."""
        answered, value = await self._call(lambda: self.redis.get_json(key))
        if not answered:
            return await self._memory.get_json(key)
        return value

    async def set_json(self, key: str, value: Any, ttl_s: int | None = None) -> None:
        """See :meth:`Store.set_json`; while Redis is down, kept in the fallback for a short while."""
        answered, _ = await self._call(lambda: self.redis.set_json(key, value, ttl_s))
        if not answered:
            await self._memory.set_json(key, value, self._short(ttl_s))

    async def delete(self, *keys: str) -> None:
        """See :meth:`Store.delete` (from the fallback too)."""
        await self._memory.delete(*keys)
        await self._call(lambda: self.redis.delete(*keys))

    async def claim(self, key: str, ttl_s: int, *, local_ok: bool = False) -> bool:
        """See :meth:`Store.claim`.

        Raises:
            StoreUnavailableError: Redis is down and the claim is not ``local_ok``.
        """
        if local_ok and await self._memory.get_json(key) is not None:
            return False  # claimed here during the outage (or since, before it was written back)
        answered, taken = await self._call(lambda: self.redis.claim(key, ttl_s))
        if answered:
            return bool(taken)
        if not local_ok:
            raise StoreUnavailableError(f"Redis does not answer ({self.reason})")
        fresh = await self._memory.claim(key, self._short(ttl_s))
        if fresh:
            self._claimed.append(key)
        return fresh

    async def claim_all(self, keys: Sequence[str], ttl_s: int, *, local_ok: bool = False) -> bool:
        """See :meth:`Store.claim_all`; while Redis is down and ``local_ok``, all or none in the fallback.

        Raises:
            StoreUnavailableError: Redis is down and the claim is not ``local_ok``.
        """
        if local_ok:
            for key in keys:
                if await self._memory.get_json(key) is not None:
                    return False  # claimed here during the outage (or since, before it was written back)
        answered, taken = await self._call(lambda: self.redis.claim_all(keys, ttl_s))
        if answered:
            return bool(taken)
        if not local_ok:
            raise StoreUnavailableError(f"Redis does not answer ({self.reason})")
        fresh = await self._memory.claim_all(keys, self._short(ttl_s))
        if fresh:
            self._claimed.extend(keys)
        return fresh

    async def lease(self, key: str, ttl_s: float) -> Lease | None:
        """See :meth:`Store.lease`.

        Raises:
            StoreUnavailableError: Redis is down (a lock in one process would not stop the others).
        """
        return await self._state(lambda: self.redis.lease(key, ttl_s))

    async def put_record(self, key: str, field: str, value: Any, *, index: str, member: str,
                         replace: bool = False) -> bool:
        """See :meth:`Store.put_record`.

        Raises:
            StoreUnavailableError: Redis is down (nothing was saved).
        """
        return await self._state(lambda: self.redis.put_record(key, field, value, index=index, member=member,
                                                              replace=replace))

    async def delete_record(self, key: str, field: str, *, index: str, member: str) -> bool:
        """See :meth:`Store.delete_record`.

        Raises:
            StoreUnavailableError: Redis is down (nothing was changed).
        """
        return await self._state(lambda: self.redis.delete_record(key, field, index=index, member=member))

    async def records(self, key: str) -> dict[str, Any]:
        """See :meth:`Store.records`.

        Raises:
            StoreUnavailableError: Redis is down.
        """
        return await self._state(lambda: self.redis.records(key))

    async def records_many(self, keys: Sequence[str]) -> list[dict[str, Any]]:
        """See :meth:`Store.records_many`.

        Raises:
            StoreUnavailableError: Redis is down.
        """
        return await self._state(lambda: self.redis.records_many(keys))

    async def index_members(self, index: str) -> list[str]:
        """See :meth:`Store.index_members`.

        Raises:
            StoreUnavailableError: Redis is down.
        """
        return await self._state(lambda: self.redis.index_members(index))

    async def append_log(self, key: str, value: Any, *, max_len: int) -> None:
        """See :meth:`Store.append_log`.

        Raises:
            StoreUnavailableError: Redis is down.
        """
        await self._state(lambda: self.redis.append_log(key, value, max_len=max_len))

    async def read_log(self, key: str, *, limit: int | None = None) -> list[Any]:
        """See :meth:`Store.read_log`.

        Raises:
            StoreUnavailableError: Redis is down.
        """
        return await self._state(lambda: self.redis.read_log(key, limit=limit))

    async def close(self) -> None:
        """Close the Redis connection pool."""
        await self.redis.close()


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


async def open_store(url: str | None, *, warn: Callable[[str], None], key_prefix: str = "") -> Store:
    """The Redis store at ``url`` if it answers a ``PING``, else a :class:`MemoryStore`.

    Args:
        url: ``PRHUB_REDIS_URL``; ``None`` or empty means no Redis.
        warn: called with one line when Redis does not answer now, or stops answering
            later (at most once in total per store).
        key_prefix: ``PRHUB_REDIS_KEY_PREFIX``.
    """
    if not url:
        return MemoryStore()
    store = RedisStore.from_url(url, on_unavailable=warn, key_prefix=key_prefix)
    try:
        await store.ping()
    except redis_errors() as exc:
        await store.close()
        warn(f"Redis at {_safe_url(url)} does not answer ({exc}); continuing without the cache")
        return MemoryStore()
    return store


def _safe_url(url: str) -> str:
    """``url`` without a password (``redis://:secret@host`` -> ``redis://***@host``)."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    return scheme + sep + rest
