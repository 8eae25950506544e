"""``prhub worker``: runs analysis jobs (:mod:`bot.jobs.queue`) with the LLM analyzer, until stopped.

One :class:`AnalysisWorker` is a Dramatiq ``Worker`` (``worker_concurrency`` threads) on the queue's
broker, an asyncio event loop in its own thread (the LLM client, the Redis cache) and a heartbeat
thread (:meth:`bot.jobs.queue.JobQueue.beat`, every :data:`~bot.jobs.queue.BEAT_EVERY_S` seconds).
A job:

1. reads the cache: an analysis already there (another worker, a retry, the bot in-process) ends it
   (counted ``cached``);
2. else analyses the PR (:class:`bot.digest.llm.LLMAnalyzer`: one model call, the reply merged with
   the facts, cached) and counts ``stored``;
3. a model call that failed raises :class:`JobRetry`: Dramatiq retries it (``jobs_max_retries``,
   backoff from 2 s); the last try leaves the heuristic analysis with its reason to the waiters
   (:meth:`~bot.jobs.queue.JobQueue.fail`); a model found unusable (credentials, quota) fails at once.

Stopping (SIGINT, SIGTERM, :meth:`AnalysisWorker.stop`) lets the jobs under way finish (Dramatiq
puts the prefetched ones back) and removes the heartbeat; a worker that is killed leaves its jobs to
be requeued once its Dramatiq heartbeat is ``jobs_heartbeat_timeout_s`` old.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Coroutine
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Literal

import dramatiq
from dramatiq.middleware import CurrentMessage
from redis.exceptions import RedisError

from bot.config import Settings
from bot.digest.heuristic import AnalysisContext, HeuristicAnalyzer
from bot.errors import ConfigError, LLMStopError
from bot.jobs.queue import ACTOR, BEAT_EVERY_S, JobQueue, WorkerBeat
from bot.models import Language, PullRequest
from bot.store import RedisStore

if TYPE_CHECKING:
    from bot.digest.llm import LLMRuntime

__all__ = ["AnalysisWorker", "JobRetry"]

log = logging.getLogger(__name__)

Outcome = Literal["stored", "cached", "failed"]


class JobRetry(Exception):
    """A job to be tried again (the model call failed; Dramatiq's ``Retries`` backs off)."""


class AnalysisWorker:
    """Analysis jobs of ``settings``' queue (see the module docstring).

    Args:
        settings: the LLM (``PRHUB_LLM_*``; required), Redis, ``worker_concurrency``, the jobs' limits.
        concurrency: threads (default ``worker_concurrency``).
        queue: the job queue (default: one on ``settings``).
        poll_ms: the longest pause of an idle consumer between two fetches, milliseconds.

    Raises:
        ConfigError: no ``PRHUB_LLM_MODEL`` (the heuristic needs no worker).
    """

    def __init__(self, settings: Settings, *, concurrency: int | None = None, queue: JobQueue | None = None,
                 poll_ms: int = 500) -> None:
        if not settings.llm_model:
            raise ConfigError("prhub worker makes LLM analyses: set PRHUB_LLM_MODEL (the heuristic analysis "
                              "needs no worker)")
        self.settings = settings
        self.concurrency = concurrency or settings.worker_concurrency
        self.queue = queue or JobQueue(settings)
        self.id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.started_at = time.time()
        self.counts: dict[Outcome, int] = {"stored": 0, "cached": 0, "failed": 0}
        self._poll_ms = poll_ms
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: threading.Thread | None = None
        self._beat_thread: threading.Thread | None = None
        self._runtime: LLMRuntime | None = None
        self._store: RedisStore | None = None
        self._worker: dramatiq.Worker | None = None
        self.actor: dramatiq.Actor[Any, None] = dramatiq.Actor(
            self._job, broker=self.queue.broker, actor_name=ACTOR, queue_name=settings.jobs_queue, priority=0,
            options={"max_retries": settings.jobs_max_retries, "min_backoff": 2_000, "max_backoff": 60_000,
                     "time_limit": settings.jobs_time_limit_s * 1000, "throws": (LLMStopError,)})

    # -- life cycle ---------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the event loop, the heartbeat and the Dramatiq worker (returns at once).

        Raises:
            redis.exceptions.RedisError: Redis does not answer.
            RuntimeError: already started.
        """
        if self._loop is not None:
            raise RuntimeError("this worker was started already")
        self.queue.client.ping()
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, name="prhub-worker-loop", daemon=True)
        self._loop_thread.start()
        self._call(self._open())
        self._beat()
        self._beat_thread = threading.Thread(target=self._beats, name="prhub-worker-beat", daemon=True)
        self._beat_thread.start()
        self._worker = dramatiq.Worker(self.queue.broker, worker_threads=self.concurrency,
                                       worker_timeout=self._poll_ms)
        # Fetch no more than the threads can start: jobs a worker holds but does not run wait for it, while
        # the other workers may be idle (Dramatiq's default is twice the threads).
        self._worker.queue_prefetch = self.concurrency
        self._worker.start()
        log.info("worker %s: %d threads on queue %s", self.id, self.concurrency, self.settings.jobs_queue)

    def stop(self, timeout_s: float = 60.0) -> None:
        """Let the jobs under way finish (up to ``timeout_s``), then stop everything and drop the heartbeat."""
        self._stopping.set()
        if self._worker is not None:
            self._worker.stop(timeout=int(timeout_s * 1000))
        if self._beat_thread is not None:
            self._beat_thread.join(timeout=BEAT_EVERY_S + 1)
        try:
            self.queue.forget(self.id)
        except RedisError as exc:  # a Redis gone at shutdown: the beat just ages out
            log.warning("worker %s: heartbeat not removed: %s", self.id, exc)
        if self._loop is not None:
            self._call(self._close())
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._loop_thread is not None:
                self._loop_thread.join(timeout=5)
            if not self._loop.is_running():
                self._loop.close()
        self.queue.close()

    def wait(self) -> None:
        """Block until :meth:`stop` is called from elsewhere (after :meth:`start`)."""
        self._stopping.wait()

    async def _open(self) -> None:
        from bot.digest.llm import llm_runtime  # imports litellm

        self._store = RedisStore.from_url(self.settings.redis_url, degrade=False,
                                          key_prefix=self.settings.redis_key_prefix)
        self._runtime = llm_runtime(self.settings, self._store)

    async def _close(self) -> None:
        if self._store is not None:
            await self._store.close()
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:  # litellm's logging worker, and anything a stopped job left
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        await asyncio.get_running_loop().shutdown_default_executor()

    def _call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        assert self._loop is not None
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result()
        except BaseException:  # the time limit interrupts this thread: stop the coroutine too
            future.cancel()
            raise

    def _beat(self) -> None:
        with self._lock:
            counts = dict(self.counts)
        self.queue.beat(WorkerBeat(id=self.id, host=socket.gethostname(), pid=os.getpid(),
                                   concurrency=self.concurrency, queue=self.settings.jobs_queue,
                                   started_at=self.started_at, beat_at=time.time(),
                                   done=counts["stored"] + counts["cached"], failed=counts["failed"]))

    def _beats(self) -> None:
        while not self._stopping.wait(BEAT_EVERY_S):
            try:
                self._beat()
            except RedisError as exc:  # Redis away for a moment: the next beat tries again
                log.warning("worker %s: heartbeat failed: %s", self.id, exc)

    # -- one job ------------------------------------------------------------------------------------------

    def _job(self, key: str, pr: dict[str, Any], language: Language, hot_files: list[str]) -> None:
        message = CurrentMessage.get_current_message()
        last_try = message is None or message.options.get("retries", 0) >= self.settings.jobs_max_retries
        try:
            outcome: Outcome = self._call(self._analyze(key, PullRequest.model_validate(pr), language,
                                                        frozenset(hot_files), last_try))
        except LLMStopError as exc:
            self.queue.fail(key, {"stop": str(exc)})
            self._counted("failed")
            raise
        except BaseException as exc:  # a bug, Redis, the time limit: retried; the last try tells the waiters
            if last_try and not isinstance(exc, JobRetry):
                self._give_up(key, pr, language, hot_files, exc)
            raise
        if outcome != "failed":
            self.queue.count(outcome)
            self.queue.done(key)
        self._counted(outcome)

    def _give_up(self, key: str, pr: dict[str, Any], language: Language, hot_files: list[str],
                 exc: BaseException) -> None:
        """The heuristic analysis with the reason, for the waiters of a job that failed for good."""
        try:
            parsed = PullRequest.model_validate(pr)
            context = AnalysisContext(repo=self.settings.repo(parsed.repo), language=language,
                                      hot_files=frozenset(hot_files))
            analysis = HeuristicAnalyzer().analyze(parsed, context).model_copy(
                update={"fallback_reason": f"analysis job failed: {type(exc).__name__}"})
            outcome: dict[str, Any] = {"analysis": analysis.model_dump(mode="json")}
        except Exception:  # not even the heuristic: the waiters analyse it themselves
            log.exception("job %s: no analysis at all", key)
            outcome = {"error": f"analysis job failed: {type(exc).__name__}"}
        try:
            self.queue.fail(key, outcome)
            self._counted("failed")
        except RedisError:
            log.exception("job %s: its failure could not be recorded", key)

    def _counted(self, outcome: Outcome) -> None:
        with self._lock:
            self.counts[outcome] += 1

    async def _analyze(self, key: str, pr: PullRequest, language: Language, hot_files: frozenset[str],
                       last_try: bool) -> Outcome:
        assert self._store is not None
        assert self._runtime is not None
        if await self._store.get_json(key) is not None:
            return "cached"
        analyzer = self._runtime.analyzer
        context = AnalysisContext(repo=self.settings.repo(pr.repo), language=language, hot_files=hot_files)
        analysis = await analyzer.analyze_async(pr, context)
        if analysis.fallback_reason:
            if not last_try:
                raise JobRetry(f"{pr.repo}#{pr.number}: {analysis.fallback_reason}")
            await asyncio.to_thread(self.queue.fail, key, {"analysis": analysis.model_dump(mode="json")})
            return "failed"
        own = analyzer.key(pr, language)
        if own != key:  # the bot that queued it runs another model or prompt: its waiters read `key`
            log.error("job %s: this worker's analysis key is %s (another PRHUB_LLM_MODEL or prompt?)", key, own)
            await self._store.set_json(key, analysis.model_dump(mode="json"), self.settings.cache_ttl_s)
        return "stored"
