"""Label alerts: a poll of the sources for newly merged PRs, one short card per (subscriber, matching PR).

Subscriptions are the ones the bots keep (:mod:`bot.handlers.core`): ``prhub:sub-index``
lists the subscribers ``platform:conversation`` and ``prhub:sub:{platform}:{id}`` their
``[repo, label]`` pairs. A subscriber is where the alert goes: a channel gets it in the
channel, a person's DM conversation (Slack ``D…``, a Feishu p2p chat) in that DM, and a
Slack user id (``U…``/``W…``) as a direct message.

One poll (:meth:`AlertPoller.poll`), for every repository somebody follows:

1. read the PRs merged in ``[checkpoint - alerts_overlap_s, now)`` from the repository's
   source (the source of a channel bound to it, else ``default_source``); the checkpoint
   is kept in the store (``prhub:alerts:checkpoint:{repo}``, an ISO instant) and starts at
   the first poll's ``now`` minus the overlap;
2. label each PR (the digest's labels: GitHub labels, title modules, path rules); analyse
   only the PRs somebody follows, once per language;
3. for each (subscriber, PR): skip when ``prhub:alert:sent:…`` is there; take
   ``prhub:alert:lock:…`` (``SET NX EX``, :data:`LOCK_TTL_S`) or skip; wait for the chat's
   pace (:data:`~bot.scheduler.delivery.PACE_S`); send; mark sent (:data:`SENT_TTL_S`).
   A refused send releases the lock, is logged, and holds the checkpoint at that PR so a
   later poll tries again;
4. move the checkpoint to ``now``.

So each (subscriber, PR) is alerted once however often the job runs, restarts or runs in
several replicas; a PR a source lists late is still found within the overlap. A process
dying between the send and the mark can repeat that one alert after the lock expires.
Unsubscribing removes the pair from the subscriber's list, so the next poll sends nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from redis.exceptions import RedisError

from bot.cards.alert import Alert
from bot.config import Settings
from bot.digest.labels import Labeler
from bot.digest.service import Analyzer, analyze_pr
from bot.errors import PrhubError
from bot.handlers.core import SUB_INDEX_KEY, SUB_KEY, Subscription
from bot.models import DigestPR, Language, PullRequest, Window
from bot.scheduler.delivery import PACE_S, Deliverers
from bot.sources.base import PRSource
from bot.sources.base import open_source as open_spec
from bot.store import Store, cache_key

__all__ = ["LOCK_TTL_S", "SENT_TTL_S", "AlertPoller", "PollReport", "Subscriber", "known_labels",
           "read_subscriptions"]

log = logging.getLogger(__name__)

SENT_TTL_S = 400 * 24 * 3600
LOCK_TTL_S = 10 * 60


@dataclass(frozen=True, slots=True, order=True)
class Subscriber:
    """Who gets alerts: ``platform`` (``slack``, ``feishu``) and the conversation or user ``id``."""

    platform: str
    id: str

    @property
    def key(self) -> str:
        """``platform:id`` (as in ``prhub:sub-index`` and ``prhub subscriptions --subscriber``)."""
        return f"{self.platform}:{self.id}"

    @property
    def is_person(self) -> bool:
        """A user id rather than a conversation: sent as a direct message."""
        return (self.platform == "slack" and self.id[:1] in ("U", "W")) or (
            self.platform == "feishu" and self.id.startswith("ou_"))


async def read_subscriptions(store: Store) -> dict[Subscriber, tuple[Subscription, ...]]:
    """Every subscriber with its subscriptions (sorted), from the keys the bots write."""
    out: dict[Subscriber, tuple[Subscription, ...]] = {}
    for member in sorted(await store.get_json(SUB_INDEX_KEY) or []):
        platform, _, ident = str(member).partition(":")
        raw = await store.get_json(SUB_KEY.format(platform=platform, subscriber=ident)) or []
        subs = tuple(sorted((Subscription(str(repo), str(label).lower()) for repo, label in raw),
                           key=lambda s: (s.repo.lower(), s.label)))
        if subs:
            out[Subscriber(platform, ident)] = subs
    return out


def known_labels(prs: Iterable[PullRequest], settings: Settings, repo: str) -> list[str]:
    """The labels ``repo`` has used on ``prs`` plus those its label rules and aliases can give, sorted —
    what a subscription to an unknown label is warned against."""
    config = settings.repo(repo)
    labeler = Labeler(config)
    found = {label.lower() for pr in prs for label in labeler.labels(pr)}
    found |= {rule.label.lower() for rule in config.label_rules}
    found |= {target.lower() for target in config.aliases.values()}
    return sorted(found)


@dataclass
class PollReport:
    """What one poll did: PRs read, alerts sent (``(subscriber key, repo, number)``), alerts
    skipped as already sent or being sent elsewhere, and failures."""

    prs_seen: int = 0
    sent: list[tuple[str, str, int]] = field(default_factory=list)
    skipped: int = 0
    failed: list[str] = field(default_factory=list)


class Pacer:
    """At most one message per ``PACE_S[platform]`` seconds to one chat (monotonic clock, injected sleep)."""

    def __init__(self, *, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._sleep = sleep
        self._clock = clock
        self._last: dict[str, float] = {}

    async def wait(self, subscriber: Subscriber) -> None:
        """Wait until ``subscriber``'s chat may get the next message, and count it as sent now."""
        gap = PACE_S.get(subscriber.platform, 1.0)
        last = self._last.get(subscriber.key)
        if last is not None and self._clock() - last < gap:
            await self._sleep(gap - (self._clock() - last))
        self._last[subscriber.key] = self._clock()


class AlertPoller:
    """The alerts job.

    Args:
        settings: channel bindings (sources, languages, zones), ``alerts_overlap_s``.
        store: subscriptions, checkpoints, markers (Redis; its failures propagate).
        deliverers: where subscribers are.
        open_source: opens a source spec (each once; default :func:`bot.sources.base.open_source`).
        analyzer: the per-PR analyzer (default: the heuristic).
        clock: the current instant (aware).
        pacer: per-chat pacing (tests inject a sleep that does not sleep).
    """

    def __init__(self, *, settings: Settings, store: Store, deliverers: Deliverers,
                 open_source: Callable[[str], PRSource] | None = None, analyzer: Analyzer | None = None,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC), pacer: Pacer | None = None) -> None:
        self.settings = settings
        self._store = store
        self._deliverers = deliverers
        self._open = open_source or (lambda spec: open_spec(spec, settings=settings))
        self._sources: dict[str, PRSource] = {}
        self._analyzer = analyzer
        self._clock = clock
        self._pacer = pacer or Pacer()

    def source_for(self, repo: str) -> PRSource:
        """The source of a channel bound to ``repo`` (the first in key order), else ``default_source``."""
        spec = next((cfg.source for _, cfg in sorted(self.settings.channels.items())
                     if cfg.source and (cfg.repo or "").lower() == repo.lower()), None)
        spec = spec or self.settings.default_source
        source = self._sources.get(spec)
        if source is None:
            source = self._sources[spec] = self._open(spec)
        return source

    def _checkpoint_key(self, repo: str) -> str:
        return cache_key("alerts", "checkpoint", repo.lower())

    async def poll(self) -> PollReport:
        """One poll over every followed repository (see the module docstring).

        Raises:
            redis.exceptions.RedisError: the store did not answer (nothing is marked sent that was not).
        """
        report = PollReport()
        subscriptions = await read_subscriptions(self._store)
        repos = sorted({s.repo.lower(): s.repo for subs in subscriptions.values() for s in subs}.values())
        for repo in repos:
            followers = {who: {s.label for s in subs if s.repo.lower() == repo.lower()}
                         for who, subs in subscriptions.items()}
            await self._poll_repo(repo, {w: labels for w, labels in followers.items() if labels}, report)
        return report

    async def _poll_repo(self, repo: str, followers: dict[Subscriber, set[str]], report: PollReport) -> None:
        now = self._clock()
        overlap = timedelta(seconds=self.settings.alerts_overlap_s)
        saved = await self._store.get_json(self._checkpoint_key(repo))
        checkpoint = datetime.fromisoformat(saved) if isinstance(saved, str) else now
        window = Window(start=checkpoint - overlap, end=now, timezone="UTC", name="alerts")
        try:
            prs = await asyncio.to_thread(self.source_for(repo).merged_prs, repo, window)
        except PrhubError as exc:  # one repository's source failing must not stop the others' alerts
            log.warning("alerts: %s: %s", repo, exc)
            report.failed.append(f"{repo}: {exc}")
            return
        report.prs_seen += len(prs)
        labeler = Labeler(self.settings.repo(repo))
        hold: datetime | None = None
        for pr in prs:
            labels = {label.lower() for label in labeler.labels(pr)}
            analysed: dict[Language, DigestPR] = {}
            for who, wanted in sorted(followers.items()):
                matched = tuple(sorted(labels & wanted))
                if not matched:
                    continue
                language = self.settings.channel(who.key).language or self.settings.language
                if language not in analysed:
                    analysed[language] = await asyncio.to_thread(
                        analyze_pr, pr, settings=self.settings, language=language, analyzer=self._analyzer,
                        window_prs=prs)
                tz = self.settings.channel(who.key).timezone or self.settings.timezone
                alert = Alert(analysed[language], repo, matched, language, tz)
                if not await self._send(who, alert, report):
                    hold = pr.merged_at if hold is None else min(hold, pr.merged_at)
        # A PR that could not be alerted keeps the checkpoint before it, so a later poll retries it.
        new = now if hold is None else min(now, hold)
        await self._store.set_json(self._checkpoint_key(repo), new.isoformat())

    async def _send(self, who: Subscriber, alert: Alert, report: PollReport) -> bool:
        """Alert ``who`` once; ``False`` when the platform refused (to be retried)."""
        parts = (who.platform, who.id, alert.repo, alert.pr.number)
        sent_key, lock_key = cache_key("alert", "sent", *parts), cache_key("alert", "lock", *parts)
        if await self._store.get_json(sent_key) is not None or not await self._store.claim(lock_key, LOCK_TTL_S):
            report.skipped += 1
            return True
        try:
            deliverer, target = self._deliverers.for_channel(who.key)
            await self._pacer.wait(who)
            if who.is_person:
                await deliverer.dm(target, alert, key=sent_key)
            else:
                await deliverer.post_alert(target, alert, key=sent_key)
        except (PrhubError, RedisError) as exc:
            await self._store.delete(lock_key)
            log.error("alert of %s #%d to %s failed (retried at the next poll): %s", alert.repo,
                      alert.pr.number, who.key, exc)
            report.failed.append(f"{who.key} {alert.repo}#{alert.pr.number}: {exc}")
            return False
        await self._store.claim(sent_key, SENT_TTL_S)
        report.sent.append((who.key, alert.repo, alert.pr.number))
        return True
