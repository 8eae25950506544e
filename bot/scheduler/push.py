"""The weekly push: the digest of the week that just ended, exactly once per (channel, repository, week).

A channel with ``push`` in its ``[channels."platform:id"]`` section gets, at that time in
its ``timezone``, the digest of the ISO week before the fire's week (``mon 10:00`` of
2026-W17 posts 2026-W16), for its ``repo``, from its ``source``, in its ``language`` —
the same core and cards as the bots' "上周周报".

Exactly once, whoever runs it (the scheduler of any replica, a late run, the catch-up at
start, ``prhub push``) — two keys in the store:

- ``prhub:push:done:{platform}:{id}:{repo}:{week}`` — set after the last message was
  accepted (:data:`DONE_TTL_S`, over a year); present = nothing to do;
- ``prhub:push:lock:{platform}:{id}:{repo}:{week}`` — ``SET NX EX`` (:meth:`Store.claim`,
  :data:`LOCK_TTL_S`) taken before building the digest; whoever does not get it does nothing.

A push that fails (the platform refuses, the source cannot be read) releases its lock and
raises, so the next try posts it. A process that dies in the middle of posting leaves the
lock to expire: a catch-up after that may post the digest again (Feishu drops the repeated
cards by their ``uuid``; Slack shows them twice) — a repeat rather than a lost digest.

Catch-up (:meth:`Pusher.catch_up`, at start): a fire within ``push_grace_s`` (default 24 h)
before now whose week is not done is pushed now; older misses within the last
:data:`LOOKBACK` are logged at ERROR level with the command that posts them.

A week still being analysed (an LLM analyzer that has not finished by the deadline)
is posted with what is ready; the rest show as pending (分析结果尚未生成).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from redis.exceptions import RedisError

from bot.config import Settings
from bot.digest.heuristic import AnalysisContext
from bot.digest.service import AsyncAnalyzer, build_digest, build_digest_async
from bot.digest.window import parse_week
from bot.errors import ConfigError, LLMStopError, PrhubError, SourceError
from bot.models import Analysis, Digest, Language, PullRequest, Window
from bot.scheduler.delivery import Deliverers, split_channel
from bot.scheduler.schedule import cron_trigger, fires_between, latest_fire, week_before
from bot.sources.base import PRSource, canonical_repo
from bot.sources.base import open_source as open_spec
from bot.store import Store, cache_key

__all__ = ["DONE_TTL_S", "LOCK_TTL_S", "LOOKBACK", "DeadlineAnalyzer", "PushOutcome", "Pusher"]

log = logging.getLogger(__name__)

RETRY_EVERY_S = 15 * 60
"""How often pushes that failed within their grace are tried again (seconds)."""

DONE_TTL_S = 400 * 24 * 3600
LOCK_TTL_S = 30 * 60
LOOKBACK = timedelta(days=7)
"""How far back the catch-up looks for missed fires: the last week (so only the latest fire of a
weekly push counts, and a fresh install does not report the weeks before it existed)."""

DigestBuilder = Callable[[Sequence[PullRequest], str, Window, Language], Awaitable[Digest]]
"""``(prs, repo, window, language) -> digest``."""
SourceOpener = Callable[[str], PRSource]


@dataclass(frozen=True, slots=True)
class PushOutcome:
    """What one push did: ``posted`` (``prs`` PRs, ``pending`` of them without analysis),
    ``already_done`` (the marker was there), ``busy`` (another run holds the lock) or
    ``missed`` (a fire beyond the grace, only logged)."""

    channel: str
    repo: str
    week: str
    status: Literal["posted", "already_done", "busy", "missed"]
    prs: int = 0
    pending: int = 0


class DeadlineAnalyzer:
    """An :class:`~bot.digest.service.AsyncAnalyzer` whose answers not ready by ``deadline``
    (a monotonic instant, seconds) are ``None`` — pending — while the inner analysis goes on
    in the background (it fills the cache for the next digest)."""

    def __init__(self, inner: AsyncAnalyzer, *, seconds: float,
                 clock: Callable[[], float] | None = None) -> None:
        self.name = inner.name
        self._inner = inner
        self._clock = clock or asyncio.get_running_loop().time
        self._deadline = self._clock() + seconds
        self._tasks: set[asyncio.Task[Analysis | None]] = set()

    async def analyze_async(self, pr: PullRequest, context: AnalysisContext) -> Analysis | None:
        """The inner analysis, or ``None`` when the deadline passes first."""
        task = asyncio.ensure_future(self._inner.analyze_async(pr, context))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        try:
            return await asyncio.wait_for(asyncio.shield(task), max(0.0, self._deadline - self._clock()))
        except TimeoutError:
            return None

    async def cancel(self) -> None:
        """Stop the analyses still running in the background (shutdown, tests)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def heuristic_builder(prs: Sequence[PullRequest], repo: str, window: Window, language: Language, *,
                            settings: Settings, now: datetime) -> Digest:
    """The digest with the embedded heuristic analyzer, built in a worker thread."""
    return await asyncio.to_thread(build_digest, prs, repo=repo, window=window, settings=settings,
                                   language=language, now=now)


class Pusher:
    """Weekly pushes of the configured channels.

    Args:
        settings: channel bindings (``repo``, ``source``, ``language``, ``timezone``, ``push``)
            and ``push_grace_s``.
        store: markers and locks (Redis; a Redis failure propagates — better no push than two).
        deliverers: where channels are.
        open_source: opens a source spec (each spec once).
        build: builds the digest (default: the heuristic; ``prhub serve`` passes the LLM
            one with a deadline when a model is configured).
        clock: the current instant (aware).
    """

    def __init__(self, *, settings: Settings, store: Store, deliverers: Deliverers,
                 open_source: SourceOpener | None = None, build: DigestBuilder | None = None,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.settings = settings
        self._store = store
        self._deliverers = deliverers
        self._open = open_source or (lambda spec: open_spec(spec, settings=settings))
        self._sources: dict[str, PRSource] = {}
        self._clock = clock
        self._build = build or (lambda prs, repo, window, lang: heuristic_builder(
            prs, repo, window, lang, settings=settings, now=self._clock()))

    def scheduled_channels(self) -> list[str]:
        """The channel keys with a ``push`` time, sorted."""
        return sorted(key for key, cfg in self.settings.channels.items() if cfg.push is not None)

    def _source(self, spec: str) -> PRSource:
        source = self._sources.get(spec)
        if source is None:
            source = self._sources[spec] = self._open(spec)
        return source

    def _binding(self, channel: str) -> tuple[PRSource, str, Language, str]:
        binding = self.settings.channel(channel)
        source = self._source(binding.source or self.settings.default_source)
        repo = binding.repo
        if repo is None or "/" not in repo:
            try:
                held = source.repos()
            except SourceError:
                held = []
            repo = canonical_repo(repo, held)
        return source, repo.strip(), binding.language or self.settings.language, binding.timezone or "UTC"

    def _keys(self, channel: str, repo: str, week: str) -> tuple[str, str]:
        platform, ident = split_channel(channel)
        return (cache_key("push", "done", platform, ident, repo, week),
                cache_key("push", "lock", platform, ident, repo, week))

    async def is_done(self, channel: str, week: str) -> bool:
        """Whether the push of ``week`` to ``channel`` (for its bound repository) is marked done."""
        _, repo, _, _ = self._binding(channel)
        return await self._store.get_json(self._keys(channel, repo, week)[0]) is not None

    async def push(self, channel: str, week: str | None = None, *, fire: datetime | None = None) -> PushOutcome:
        """Push one week's digest to ``channel`` unless that was done.

        Args:
            channel: ``slack:C123``, ``feishu:oc_x`` or ``feishu-webhook:NAME``.
            week: ``YYYY-Www``, ``this`` or ``last`` in the channel's zone; ``None``: the week
                before ``fire`` (default: now) — what the schedule posts.
            fire: the scheduled instant this run stands for (a late run still posts its week).

        Raises:
            ConfigError: the channel or its platform is not configured.
            PrhubError: the source or the platform failed (the lock is released first).
            redis.exceptions.RedisError: the store did not answer.
        """
        deliverer, target = self._deliverers.for_channel(channel)
        source, repo, language, tz = self._binding(channel)
        now = self._clock()
        window = parse_week(week, tz=tz, now=now) if week is not None else week_before(fire or now, tz)
        done_key, lock_key = self._keys(channel, repo, window.name)
        if await self._store.get_json(done_key) is not None:
            return PushOutcome(channel, repo, window.name, "already_done")
        if not await self._store.claim(lock_key, LOCK_TTL_S):
            return PushOutcome(channel, repo, window.name, "busy")
        try:
            if await self._store.get_json(done_key) is not None:  # finished just before our lock
                return PushOutcome(channel, repo, window.name, "already_done")
            prs = await asyncio.to_thread(source.merged_prs, repo, window)
            digest = await self._build(prs, repo, window, language)
            await deliverer.post_digest(target, digest, key=done_key)
            await self._store.claim(done_key, DONE_TTL_S)
        except BaseException:
            await self._store.delete(lock_key)
            raise
        log.info("pushed %s %s to %s: %d PRs, %d pending", repo, window.name, channel,
                 digest.stats.pr_count, len(digest.pending))
        return PushOutcome(channel, repo, window.name, "posted", digest.stats.pr_count, len(digest.pending))

    async def run_scheduled(self, channel: str) -> PushOutcome | None:
        """The scheduler's job: push the week of the latest fire within the grace (``None``: no fire
        in it — the job ran far too late, :meth:`catch_up` reports such misses)."""
        cfg = self.settings.channel(channel)
        if cfg.push is None:
            raise ConfigError(f"channel {channel} has no push time")
        now = self._clock()
        fire = latest_fire(cron_trigger(cfg.push, cfg.timezone or "UTC"), now,
                           timedelta(seconds=max(self.settings.push_grace_s, 60)))
        if fire is None:
            return None
        return await self.push(channel, fire=fire)

    async def catch_up(self, *, report_missed: bool = True) -> list[PushOutcome]:
        """At start: push the weeks whose fire lies within the grace and are not done; log the
        older misses of the last :data:`LOOKBACK` loudly. One channel's failure is logged and
        the others go on. The scheduler also runs it every :data:`RETRY_EVERY_S` seconds with
        ``report_missed=False``, so a push that failed (source or platform down at the fire)
        is tried again until it is posted or its grace runs out.

        Returns:
            One outcome per fire looked at (``posted``, ``already_done``, ``busy`` or ``missed``).
        """
        now = self._clock()
        grace = timedelta(seconds=self.settings.push_grace_s)
        outcomes: list[PushOutcome] = []
        for channel in self.scheduled_channels():
            cfg = self.settings.channel(channel)
            assert cfg.push is not None
            tz = cfg.timezone or "UTC"
            try:
                for fire in fires_between(cron_trigger(cfg.push, tz), now - LOOKBACK + timedelta(seconds=1), now):
                    week = week_before(fire, tz).name
                    if now - fire <= grace:
                        outcomes.append(await self.push(channel, fire=fire))
                    elif report_missed and not await self.is_done(channel, week):
                        _, repo, _, _ = self._binding(channel)
                        log.error("MISSED weekly push: %s %s to %s was due at %s, more than %s ago "
                                  "(push_grace_s); post it with: prhub push --channel %s --week %s",
                                  repo, week, channel, fire.isoformat(), grace, channel, week)
                        outcomes.append(PushOutcome(channel, repo, week, "missed"))
            except (PrhubError, RedisError):  # one channel's failure must not stop the others' catch-up
                log.exception("catch-up of the weekly push to %s failed", channel)
        return outcomes


async def llm_builder(settings: Settings, store: Store, *, deadline_s: float,
                      clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> DigestBuilder:
    """A builder with the LLM analyzer and narrator (``PRHUB_LLM_MODEL``), caching in ``store``;
    analyses not done ``deadline_s`` seconds after a build starts are shown as pending."""
    from bot.digest.llm import llm_runtime

    runtime = llm_runtime(settings, store)

    async def build(prs: Sequence[PullRequest], repo: str, window: Window, language: Language) -> Digest:
        try:
            return await build_digest_async(
                prs, repo=repo, window=window, settings=settings, language=language,
                analyzer=DeadlineAnalyzer(runtime.analyzer, seconds=deadline_s), narrator=runtime.narrator,
                meter=runtime.meter, now=clock())
        except LLMStopError as exc:  # key refused or quota spent: the week's digest still goes out
            log.error("LLM unusable for the push of %s %s, using the heuristic analyzer: %s", repo, window.name, exc)
            return await build_digest_async(prs, repo=repo, window=window, settings=settings, language=language,
                                            now=clock())

    return build
