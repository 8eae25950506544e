"""The weekly push: the digest of the week that just ended, exactly once per (channel, repository, week).

A channel with ``push`` in its ``[channels."platform:id"]`` section gets, at that time in
its ``timezone``, the digest of the ISO week before the fire's week (``mon 10:00`` of
2026-W17 posts 2026-W16), for its ``repo``, from its ``source``, in its ``language`` —
the same core and cards as the bots' "上周周报".

Exactly once, whoever runs it (the scheduler of any replica, a late run, the catch-up at
start, ``prhub push``) — two claims (:mod:`bot.claims`, :func:`~bot.claims.push_keys`):

- ``prhub:push:done:{platform}:{id}:{repo}:{week}`` — set after the last message was
  accepted (:data:`~bot.claims.DONE_TTL_S`, over a year); present = nothing to do;
- ``prhub:push:lock:{platform}:{id}:{repo}:{week}`` — taken before building the digest
  (:data:`~bot.claims.PUSH_LOCK_TTL_S`); whoever does not get it does nothing.

A digest posted whole in one thread marks that thread complete (:func:`bot.delivery.post_digest`),
so 完整报告 under it posts nothing more.

A push that fails (the platform refuses, the source cannot be read) releases its lock and
raises, so the next try posts it. A process that dies in the middle of posting leaves the
lock to expire: a catch-up after that may post the digest again (Feishu drops the repeated
cards by their ``uuid``; Slack shows them twice) — a repeat rather than a lost digest.

Catch-up (:meth:`Pusher.catch_up`, at start): a fire within ``push_grace_s`` (default 24 h)
before now whose week is not done is pushed now; older misses within the last
:data:`LOOKBACK` are logged at ERROR level with the command that posts them.

The digest compares the week with the weeks before it (week over week, read from the same source
without any LLM call, :meth:`~bot.digest.service.DigestService.look_back`).

A week still being analysed (an LLM analyzer that has not finished by the deadline,
:data:`LLM_DEADLINE_S`) is posted with what is ready; the rest show as pending
(分析结果尚未生成). The digest comes from the process's :class:`~bot.digest.service.DigestService`,
the same one the chat bots use (with ``prhub worker`` processes alive, its analyses are jobs on the
queue, :mod:`bot.jobs`). In ``prhub serve`` a post with pending analyses is handed to the
:class:`~bot.scheduler.refresh.PendingRefresher`, which edits it in place when they land.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from redis.exceptions import RedisError

from bot.channels import Channels
from bot.claims import PUSH_LOCK_TTL_S, Claims, push_keys
from bot.config import Settings
from bot.delivery import Deliverers, Place, post_digest, split_channel
from bot.digest.service import DigestService
from bot.digest.window import parse_week
from bot.errors import ConfigError, PrhubError
from bot.scheduler.refresh import PendingRefresher
from bot.scheduler.schedule import cron_trigger, fires_between, latest_fire, week_before

__all__ = ["LLM_DEADLINE_S", "LOOKBACK", "RETRY_EVERY_S", "PushOutcome", "Pusher"]

log = logging.getLogger(__name__)

RETRY_EVERY_S = 15 * 60
"""How often pushes that failed within their grace are tried again (seconds)."""
LLM_DEADLINE_S = 15 * 60
"""How long a push waits for LLM analyses before posting the rest as pending (seconds)."""
LOOKBACK = timedelta(days=7)
"""How far back the catch-up looks for missed fires: the last week (so only the latest fire of a
weekly push counts, and a fresh install does not report the weeks before it existed)."""


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


class Pusher:
    """Weekly pushes of the configured channels.

    Args:
        settings: ``push_grace_s``.
        claims: markers and locks (Redis; a Redis failure propagates — better no push than two).
        channels: the channels' bindings (``repo``, ``source``, ``language``, ``timezone``, ``push``)
            and their sources.
        deliverers: where channels are.
        digests: the digest service.
        clock: the current instant (aware).
        deadline_s: how long the LLM analyses of one push may take (:data:`LLM_DEADLINE_S`).
        refresher: fills in a posted digest's pending analyses when they land (``prhub serve``;
            :mod:`bot.scheduler.refresh`); ``None``: the post stays as it is.
    """

    def __init__(self, *, settings: Settings, claims: Claims, channels: Channels, deliverers: Deliverers,
                 digests: DigestService, clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 deadline_s: float = LLM_DEADLINE_S, refresher: PendingRefresher | None = None) -> None:
        self.settings = settings
        self._claims = claims
        self._channels = channels
        self._deliverers = deliverers
        self._digests = digests
        self._clock = clock
        self._deadline_s = deadline_s
        self._refresher = refresher

    def scheduled_channels(self) -> list[str]:
        """The channel keys with a ``push`` time, sorted."""
        return self._channels.scheduled()

    def _keys(self, channel: str, repo: str, week: str) -> tuple[str, str]:
        platform, ident = split_channel(channel)
        return push_keys(platform, ident, repo, week)

    async def is_done(self, channel: str, week: str) -> bool:
        """Whether the push of ``week`` to ``channel`` (for its bound repository) is marked done."""
        _, repo = self._channels.resolve(channel)
        return await self._claims.is_done(self._keys(channel, repo, week)[0])

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
        source, repo = self._channels.resolve(channel)
        binding = self._channels.binding(channel)
        language, tz = binding.language or self.settings.language, binding.timezone or "UTC"
        now = self._clock()
        window = parse_week(week, tz=tz, now=now) if week is not None else week_before(fire or now, tz)
        done_key, lock_key = self._keys(channel, repo, window.name)
        if await self._claims.is_done(done_key):
            return PushOutcome(channel, repo, window.name, "already_done")
        if not await self._claims.lock(lock_key, PUSH_LOCK_TTL_S):
            return PushOutcome(channel, repo, window.name, "busy")
        try:
            if await self._claims.is_done(done_key):  # finished just before our lock
                return PushOutcome(channel, repo, window.name, "already_done")
            prs = await asyncio.to_thread(source.merged_prs, repo, window)
            earlier = await self._digests.look_back(source, repo, window, language=language)
            digest = await self._digests.digest(prs, repo=repo, window=window, language=language, now=now,
                                                deadline_s=self._deadline_s, lookback=earlier.lookback,
                                                known=earlier.known)
            posted = await post_digest(deliverer, self._claims, Place(target), digest, key=done_key)
            await self._claims.take(done_key)
        except BaseException:
            await self._claims.release(lock_key)
            raise
        log.info("pushed %s %s to %s: %d PRs, %d pending", repo, window.name, channel,
                 digest.stats.pr_count, len(digest.pending))
        if self._refresher is not None:  # the seam of issue 17: pending cards edited when analyses land
            self._refresher.track(deliverer, Place(target), posted, digest, lambda: self._digests.digest(
                prs, repo=repo, window=window, language=language, now=now, deadline_s=self._deadline_s,
                lookback=earlier.lookback, known=earlier.known), what=f"{repo} {window.name} to {channel}")
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
                        _, repo = self._channels.resolve(channel)
                        log.error("MISSED weekly push: %s %s to %s was due at %s, more than %s ago "
                                  "(push_grace_s); post it with: prhub push --channel %s --week %s",
                                  repo, week, channel, fire.isoformat(), grace, channel, week)
                        outcomes.append(PushOutcome(channel, repo, week, "missed"))
            except (PrhubError, RedisError):  # one channel's failure must not stop the others' catch-up
                log.exception("catch-up of the weekly push to %s failed", channel)
        return outcomes
