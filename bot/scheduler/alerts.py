"""Label alerts: a poll of the sources for newly merged PRs, one short card per (subscriber, matching PR).

Subscriptions are the ones the bots keep (:mod:`bot.subscriptions`, one record each). A
subscriber is where the alert goes: a channel gets it in the channel, a person's DM
conversation (Slack ``D…``, a Feishu p2p chat) in that DM, and a Slack user id
(``U…``/``W…``) as a direct message.

One poll (:meth:`AlertPoller.poll`), for every repository somebody follows:

1. read the PRs merged in ``[checkpoint - alerts_overlap_s, now)`` from the repository's
   source (the source of a channel bound to it, else ``default_source``); the checkpoint
   is kept in the store (``prhub:alerts:checkpoint:{repo}``, an ISO instant) and starts at
   the first poll's ``now`` minus the overlap;
2. label each PR (the digest's labels: GitHub labels, title modules, path rules); analyse
   only the PRs somebody follows, once per language (the process's digest service: the LLM
   when configured, from its cache when a digest analysed the PR already);
3. for each (subscriber, PR): skip when ``prhub:alert:sent:…`` is there; take
   ``prhub:alert:lock:…`` (:data:`~bot.claims.ALERT_LOCK_TTL_S`) or skip; send (the deliverer
   paces each chat, :mod:`bot.delivery.pacing`); mark sent (:data:`~bot.claims.DONE_TTL_S`).
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
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from redis.exceptions import RedisError

from bot.cards.alert import Alert
from bot.channels import Channels
from bot.claims import ALERT_LOCK_TTL_S, Claims, alert_keys
from bot.config import Settings
from bot.delivery import Deliverers, Place
from bot.digest.labels import Labeler
from bot.digest.service import DigestService
from bot.errors import PrhubError
from bot.models import DigestPR, Language, Window
from bot.store import Store, cache_key
from bot.subscriptions import Subscriber, Subscriptions

__all__ = ["AlertPoller", "PollReport"]

log = logging.getLogger(__name__)


@dataclass
class PollReport:
    """What one poll did: PRs read, alerts sent (``(subscriber key, repo, number)``), alerts
    skipped as already sent or being sent elsewhere, and failures."""

    prs_seen: int = 0
    sent: list[tuple[str, str, int]] = field(default_factory=list)
    skipped: int = 0
    failed: list[str] = field(default_factory=list)


class AlertPoller:
    """The alerts job.

    Args:
        settings: channel languages and zones, ``alerts_overlap_s``.
        store: the checkpoints (Redis; its failures propagate).
        claims: the sent markers and locks.
        subscriptions: who follows what.
        channels: the sources of the followed repositories.
        deliverers: where subscribers are.
        digests: the digest service (the PRs' analyses).
        clock: the current instant (aware).
    """

    def __init__(self, *, settings: Settings, store: Store, claims: Claims, subscriptions: Subscriptions,
                 channels: Channels, deliverers: Deliverers, digests: DigestService,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.settings = settings
        self._store = store
        self._claims = claims
        self._subscriptions = subscriptions
        self._channels = channels
        self._deliverers = deliverers
        self._digests = digests
        self._clock = clock

    def _checkpoint_key(self, repo: str) -> str:
        return cache_key("alerts", "checkpoint", repo.lower())

    async def poll(self) -> PollReport:
        """One poll over every followed repository (see the module docstring).

        Raises:
            redis.exceptions.RedisError: the store did not answer (nothing is marked sent that was not).
        """
        report = PollReport()
        subscriptions = await self._subscriptions.all()
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
            prs = await asyncio.to_thread(self._channels.source_for_repo(repo).merged_prs, repo, window)
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
                    analysed[language] = await self._digests.pr(pr, language=language, window_prs=prs)
                tz = self.settings.channel(who.key).timezone or self.settings.timezone
                alert = Alert(analysed[language], repo, matched, language, tz)
                if not await self._send(who, alert, report):
                    hold = pr.merged_at if hold is None else min(hold, pr.merged_at)
        # A PR that could not be alerted keeps the checkpoint before it, so a later poll retries it.
        new = now if hold is None else min(now, hold)
        await self._store.set_json(self._checkpoint_key(repo), new.isoformat())

    async def _send(self, who: Subscriber, alert: Alert, report: PollReport) -> bool:
        """Alert ``who`` once; ``False`` when the platform refused (to be retried)."""
        sent_key, lock_key = alert_keys(who.platform, who.id, alert.repo, alert.pr.number)
        if await self._claims.is_done(sent_key) or not await self._claims.lock(lock_key, ALERT_LOCK_TTL_S):
            report.skipped += 1
            return True
        try:
            deliverer, target = self._deliverers.for_channel(who.key)
            await deliverer.post(Place(target), [deliverer.alert_message(alert)], key=sent_key)
        except (PrhubError, RedisError) as exc:
            await self._claims.release(lock_key)
            log.error("alert of %s #%d to %s failed (retried at the next poll): %s", alert.repo,
                      alert.pr.number, who.key, exc)
            report.failed.append(f"{who.key} {alert.repo}#{alert.pr.number}: {exc}")
            return False
        await self._claims.take(sent_key)
        report.sent.append((who.key, alert.repo, alert.pr.number))
        return True
