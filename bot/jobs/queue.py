"""The analysis queue: Dramatiq's Redis broker on the bot's Redis, one message per (PR, language).

A job's id (Dramatiq's ``message_id``) is the PR's analysis cache key
(:func:`bot.digest.llm.analyzer.analysis_key`), so however many processes ask for one PR, one job
is queued and one analysis made:

- :meth:`JobQueue.enqueue` first takes ``prhub:job:queued:{key}`` (``SET NX``, for as long as a job
  may wait and run); whoever does not get it sends nothing — the job is already on its way;
- the worker reads the cache before it calls the model (a job repeated by a retry, or by the broker
  after its worker died, costs no second call when the first one finished);
- a job whose model call failed is retried by Dramatiq's ``Retries`` middleware (exponential backoff);
  when the retries are spent, or the model is unusable (credentials, quota), the worker writes
  ``prhub:job:failed:{key}`` (the heuristic analysis with its reason, the stop reason, or — a job that
  could not even make the heuristic — an error, and the waiter analyses in its own process) for the
  waiters, and frees the queued marker so a later ask queues again.

A worker that dies holds its fetched messages in Dramatiq's per-worker ack set; once its heartbeat is
older than ``jobs_heartbeat_timeout_s`` another worker's broker moves them back to the queue
(Dramatiq's queue maintenance) — the job is retried by another worker.

Workers also write their own heartbeat (:data:`WORKERS_KEY`, a hash: worker id -> JSON with host,
pid, concurrency, counts and the last beat): :meth:`JobQueue.workers` reads it (``/healthz``), and
:class:`QueueAnalyzer` queues only while a worker is alive — with none, the analysis runs in the
process that asked, as before.

Keys (under ``PRHUB_REDIS_KEY_PREFIX``): Dramatiq's ``prhub:jobs:{queue}``, ``prhub:jobs:{queue}.msgs``,
``prhub:jobs:{queue}.DQ`` (retries waiting their backoff), ``prhub:jobs:{queue}.XQ`` (dead letters,
7 days), ``prhub:jobs:__acks__.{broker}.{queue}``, ``prhub:jobs:__heartbeats__``; ours
``prhub:job:queued:{key}``, ``prhub:job:failed:{key}``, ``prhub:workers`` and ``prhub:jobs:stats``
(``stored``, ``cached``, ``failed``: counts over all workers).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import redis
from dramatiq import Message
from dramatiq.brokers.redis import (
    RedisBroker,
    _RedisConsumer,  # the one consumer to extend: no public name
)
from dramatiq.errors import DecodeError
from dramatiq.middleware import CurrentMessage
from redis.exceptions import RedisError

from bot.config import Settings
from bot.digest.heuristic import AnalysisContext
from bot.errors import LLMStopError
from bot.models import Analysis, Language, PullRequest
from bot.store import Store, cache_key

__all__ = ["ACTOR", "STATS_KEY", "WORKERS_KEY", "JobQueue", "KeyedAnalyzer", "QueueAnalyzer", "WorkerBeat",
           "failed_key", "queued_key"]

log = logging.getLogger(__name__)

ACTOR = "prhub.analyze"
"""The Dramatiq actor name of an analysis job."""
WORKERS_KEY = cache_key("workers")
STATS_KEY = cache_key("jobs", "stats")
BEAT_EVERY_S = 5.0
"""How often a worker writes its heartbeat, seconds; one older than three beats is not alive."""
FAILED_TTL_S = 15 * 60
"""How long waiters see a job's failure (then a new ask queues it again), seconds."""


def queued_key(key: str) -> str:
    """The marker "a job for analysis ``key`` is queued or running"."""
    return cache_key("job", "queued", key)


def failed_key(key: str) -> str:
    """Where a job that gave up leaves its outcome for the waiters (JSON)."""
    return cache_key("job", "failed", key)


@dataclass(frozen=True, slots=True)
class WorkerBeat:
    """One worker's last heartbeat (:data:`WORKERS_KEY`): ``beat_at`` is epoch seconds."""

    id: str
    host: str
    pid: int
    concurrency: int
    queue: str
    started_at: float
    beat_at: float
    done: int = 0
    failed: int = 0

    def as_json(self) -> dict[str, Any]:
        """The beat as a JSON object (what :data:`WORKERS_KEY` holds)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def alive(self, now: float) -> bool:
        """Whether the beat is recent (within three beat intervals)."""
        return now - self.beat_at <= 3 * BEAT_EVERY_S


class _SafeConsumer(_RedisConsumer):
    """Dramatiq's Redis consumer, except that a message that does not decode is dead-lettered (moved to
    ``{queue}.XQ``, where Dramatiq keeps failed messages for 7 days) and logged once, instead of
    raising out of the consumer: unhandled, it stops the worker's consumer thread, and as the message
    stays in the worker's ack set, every worker that inherits it stops the same way."""

    def __next__(self) -> Any:
        while True:
            try:
                return super().__next__()  # type: ignore[no-untyped-call]
            except DecodeError as exc:
                self._dead_letter(bytes(exc.data) if isinstance(exc.data, bytes | bytearray) else b"")

    def _dead_letter(self, data: bytes) -> None:
        client = self.broker.client
        acks = f"{self.broker.namespace}:__acks__.{self.broker.broker_id}.{self.queue_name}"
        messages = f"{self.broker.namespace}:{self.queue_name}.msgs"
        for member in client.smembers(acks):
            ident = _text(member)
            if client.hget(messages, ident) == data:
                self.broker.do_nack(self.queue_name, ident)
                log.error("job queue %s: message %s does not decode (%d bytes); moved to the dead letters",
                          self.queue_name, ident, len(data))
                return
        log.error("job queue %s: a message does not decode (%d bytes) and was not found to dead-letter",
                  self.queue_name, len(data))


class _Broker(RedisBroker):
    """Dramatiq's Redis broker with :class:`_SafeConsumer`."""

    @property
    def consumer_class(self) -> type[_SafeConsumer]:
        return _SafeConsumer


class JobQueue:
    """The analysis queue of ``settings`` (see the module docstring); one per process.

    Args:
        settings: ``redis_url``, ``redis_key_prefix``, ``jobs_queue``, ``jobs_heartbeat_timeout_s``,
            ``jobs_time_limit_s``.
        client: a synchronous redis-py client (default: one on ``redis_url``); the broker and the
            heartbeats use it from threads.
        clock: epoch seconds (tests).
    """

    def __init__(self, settings: Settings, *, client: redis.Redis | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.prefix = settings.redis_key_prefix
        self.queue_name = settings.jobs_queue
        self.client = client or redis.Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=10)
        self.broker = _Broker(client=self.client, namespace=self.prefix + cache_key("jobs"),
                                  heartbeat_timeout=settings.jobs_heartbeat_timeout_s * 1000,
                                  maintenance_chance=settings.jobs_maintenance_chance)  # type: ignore[no-untyped-call]
        self.broker.add_middleware(CurrentMessage())
        self._clock = clock

    def key(self, name: str) -> str:
        """``name`` with the process's key prefix (for the raw client)."""
        return self.prefix + name

    def enqueue(self, pr: PullRequest, context: AnalysisContext, key: str) -> bool:
        """Queue the analysis of ``pr`` in ``context.language`` as job ``key`` unless one is queued.

        Returns:
            ``True`` when this call sent the job, ``False`` when it was already queued or running.

        Raises:
            redis.exceptions.RedisError: Redis did not answer (nothing was queued).
        """
        ttl = self.settings.jobs_time_limit_s * (self.settings.jobs_max_retries + 2) + 3600
        if not self.client.set(self.key(queued_key(key)), str(self._clock()), nx=True, ex=ttl):
            return False
        self.client.delete(self.key(failed_key(key)))
        body = {"key": key, "pr": pr.model_dump(mode="json"), "language": context.language,
                "hot_files": sorted(context.hot_files)}
        message: Message[Any] = Message(queue_name=self.queue_name, actor_name=ACTOR, args=(), kwargs=body,
                                        options={}, message_id=key)
        try:
            self.broker.enqueue(message)
        except BaseException:
            self.client.delete(self.key(queued_key(key)))
            raise
        return True

    def workers(self) -> list[WorkerBeat]:
        """The workers whose heartbeat is recent, by id; stale entries are removed.

        Raises:
            redis.exceptions.RedisError: Redis did not answer.
        """
        now = self._clock()
        alive: list[WorkerBeat] = []
        stale: list[bytes | str] = []
        for field, raw in self.client.hgetall(self.key(WORKERS_KEY)).items():
            try:
                beat = WorkerBeat(**json.loads(raw))
            except (TypeError, ValueError):
                stale.append(field)
                continue
            if beat.alive(now):
                alive.append(beat)
            elif now - beat.beat_at > 3600:
                stale.append(field)
        if stale:
            self.client.hdel(self.key(WORKERS_KEY), *stale)
        return sorted(alive, key=lambda b: b.id)

    def beat(self, beat: WorkerBeat) -> None:
        """Write ``beat`` (a worker's heartbeat)."""
        self.client.hset(self.key(WORKERS_KEY), beat.id, json.dumps(beat.as_json()))

    def forget(self, worker_id: str) -> None:
        """Remove a stopping worker's heartbeat."""
        self.client.hdel(self.key(WORKERS_KEY), worker_id)

    def count(self, field: str, by: int = 1) -> None:
        """Add ``by`` to the jobs' counter ``field`` (:data:`STATS_KEY`)."""
        self.client.hincrby(self.key(STATS_KEY), field, by)

    def stats(self) -> dict[str, int]:
        """The jobs' counters over all workers (``stored``, ``cached``, ``failed``)."""
        raw = self.client.hgetall(self.key(STATS_KEY))
        return {_text(k): int(v) for k, v in raw.items()}

    def pending(self) -> int:
        """Messages waiting in the queue (not yet fetched by a worker)."""
        return int(self.client.llen(self.prefix + cache_key("jobs") + ":" + self.queue_name))

    def done(self, key: str) -> None:
        """The job ``key`` ended (stored or failed): a later ask may queue it again."""
        self.client.delete(self.key(queued_key(key)))

    def fail(self, key: str, outcome: dict[str, Any]) -> None:
        """Leave the failure ``outcome`` of job ``key`` for its waiters and free its marker."""
        self.client.set(self.key(failed_key(key)), json.dumps(outcome, ensure_ascii=False), ex=FAILED_TTL_S)
        self.done(key)
        self.count("failed")

    def close(self) -> None:
        """Close the broker's connections."""
        self.broker.close()
        self.client.close()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class KeyedAnalyzer(Protocol):
    """The in-process analyzer the queue stands in for: it names each analysis's cache key
    (:class:`bot.digest.llm.LLMAnalyzer`)."""

    name: str

    def key(self, pr: PullRequest, language: Language) -> str: ...

    async def analyze_async(self, pr: PullRequest, context: AnalysisContext) -> Analysis: ...


class QueueAnalyzer:
    """An :class:`~bot.digest.service.AsyncAnalyzer` that hands analyses to the workers when one is alive.

    For each PR: the cache (a hit is the answer); else, with a live worker, the job is queued
    (:meth:`JobQueue.enqueue`; one per key whoever asks) and the cache watched until the analysis
    lands (a digest's deadline, :class:`~bot.digest.service.DeadlineAnalyzer`, shows it as pending
    meanwhile); with no live worker, or when they all stop, ``inner`` analyses in this process (as
    without a queue), and so it does when the job has not landed after ``patience_s`` (a backlog, a job
    lost with its Redis). A job that gave up gives the heuristic analysis with the reason; a model found
    unusable raises :class:`~bot.errors.LLMStopError`, as ``inner`` would.

    Args:
        inner: the in-process LLM analyzer (its cache keys are the job ids).
        queue: the job queue.
        store: the analysis cache (the one ``inner`` and the workers write).
        poll_s: the longest wait between two looks at the cache, seconds.
        on_hit: called for an analysis found in the cache (the usage meter's cache hits).
        patience_s: how long one analysis waits for the workers before this process makes it itself
            (default: twice ``llm_timeout_s``).
    """

    def __init__(self, inner: KeyedAnalyzer, queue: JobQueue, store: Store, *, poll_s: float = 0.5,
                 on_hit: Callable[[], None] | None = None, patience_s: float | None = None) -> None:
        self.name = inner.name
        self._inner = inner
        self._queue = queue
        self._store = store
        self._poll_s = poll_s
        self._on_hit = on_hit
        self._patience_s = patience_s if patience_s is not None else 2 * queue.settings.llm_timeout_s
        self._known: tuple[float, bool] = (0.0, False)

    async def _workers_alive(self) -> bool:
        """Whether a worker is alive (the answer is kept for a beat when yes, a second when no)."""
        now = time.monotonic()
        until, alive = self._known
        if now < until:
            return alive
        try:
            alive = bool(await asyncio.to_thread(self._queue.workers))
        except RedisError as exc:
            log.warning("the job queue does not answer (%s): analysing in this process", exc)
            alive = False
        self._known = (now + (BEAT_EVERY_S if alive else 1.0), alive)
        return alive

    async def analyze_async(self, pr: PullRequest, context: AnalysisContext) -> Analysis:
        """The analysis of ``pr`` (see the class).

        Raises:
            LLMStopError: the model is unusable (a worker said so, or ``inner`` found it).
        """
        key = self._inner.key(pr, context.language)
        cached = await self._store.get_json(key)
        if cached is not None:
            if self._on_hit is not None:
                self._on_hit()
            return Analysis.model_validate(cached)
        if not await self._workers_alive():
            return await self._inner.analyze_async(pr, context)
        try:
            await asyncio.to_thread(self._queue.enqueue, pr, context, key)
        except RedisError as exc:
            log.warning("%s#%d could not be queued (%s): analysing in this process", pr.repo, pr.number, exc)
            return await self._inner.analyze_async(pr, context)
        return await self._wait(pr, context, key)

    async def _wait(self, pr: PullRequest, context: AnalysisContext, key: str) -> Analysis:
        wait = 0.05
        give_up = time.monotonic() + self._patience_s
        while True:
            await asyncio.sleep(wait)
            wait = min(self._poll_s, wait * 2)
            cached = await self._store.get_json(key)
            if cached is not None:
                return Analysis.model_validate(cached)
            failed = await self._store.get_json(failed_key(key))
            if failed is not None:
                if failed.get("stop"):
                    raise LLMStopError(str(failed["stop"]))
                if "analysis" in failed:
                    return Analysis.model_validate(failed["analysis"])
                log.warning("%s#%d: the job failed (%s): analysing it in this process", pr.repo, pr.number,
                            failed.get("error"))
                return await self._inner.analyze_async(pr, context)
            if not await self._workers_alive():
                log.warning("no worker is alive any more: analysing %s#%d in this process", pr.repo, pr.number)
                return await self._inner.analyze_async(pr, context)
            if time.monotonic() > give_up:
                log.warning("%s#%d: no analysis from the workers after %.0f s: analysing it in this process",
                            pr.repo, pr.number, self._patience_s)
                return await self._inner.analyze_async(pr, context)
