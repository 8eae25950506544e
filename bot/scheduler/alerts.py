"""Alerts: a poll of the sources for newly merged PRs, the filters matched, and one message per batch.

Subscriptions are the ones the bots keep and the config file's (:mod:`bot.subscriptions`). A
subscriber is where the alert goes: a channel gets it in the channel, a person's DM
conversation (Slack ``D…``, a Feishu p2p chat) in that DM, and a Slack user id
(``U…``/``W…``) as a direct message.

One poll (:meth:`AlertPoller.poll`) has two steps.

**Collect**, for every repository somebody follows:

1. read the PRs merged in ``[checkpoint - alerts_overlap_s, now)`` from the repository's
   source (the source of a channel bound to it, else ``default_source``); the checkpoint
   is kept in the store (``prhub:alerts:checkpoint:{repo}``, an ISO instant) and starts at
   the first poll's ``now`` minus the overlap;
2. label each PR (the digest's labels); a filter's terms that need no analysis (labels, paths,
   authors, title) decide first, and only the PRs that pass are analysed, once per language
   (the process's digest service: the LLM when configured, from its cache when a digest analysed
   the PR already); then the whole filter (:func:`bot.filters.match`: exclusions win, bots —
   ``bots`` of the config, ``[bot]`` logins, dependabot, renovate — left out unless named;
   ``path:@me`` through the GitHub handle of whoever made the subscription and the repository's
   CODEOWNERS, :func:`bot.codeowners.cached_codeowners`);
3. add an :class:`~bot.batcher.Item` per (subscriber, PR) to the subscriber's queue
   (``prhub:alerts:queue:{platform}:{id}``, JSON, under ``prhub:alert:queue-lock:…``): an item
   pending, in flight or recently sent is not added again, so the overlap re-reads nothing twice
   (nor does a PR alerted before batching existed: its ``prhub:alert:sent:…`` marker is honoured).
   A queue whose lock stays taken holds the checkpoint, so a later poll adds those PRs;
4. move the checkpoint to ``now``.

**Deliver**, for every subscriber, under the queue lock: drop items whose subscription is gone
(unsubscribed, or re-made after the item arrived) or older than :data:`MAX_AGE`; take a batch
when one is due (:func:`bot.batcher.take`: ``alerts_batch_s`` after the first item, never sooner
than that after the previous message, moved out of the quiet hours in the person's time zone —
Slack ``users.info`` — else the channel's); write the queue with the batch in flight; send ONE
message (:func:`bot.cards.alert.render_batch_slack` / ``…_feishu``; a list too long for one
message continues in its thread) with the batch's key as the idempotency key; mark it sent, or
failed (its items go back, retried at the next poll).

So a burst of PRs is one message, a subscriber gets at most one message per window, and across
restarts nothing is lost (the queue and the in-flight batch are in Redis before anything is
sent) and nothing is sent twice (a batch confirmed is never taken again; one that was in flight
when the process died is sent again with the same key, which Feishu honours). Time is the
injected clock.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from bot.batcher import Item, Policy, Queue, QuietHours, add, failed, sent, take
from bot.cards.alert import Alert, AlertBatch
from bot.channels import Channels
from bot.claims import ALERT_LOCK_TTL_S, Claims, alert_keys, alert_queue_lock_key
from bot.codeowners import CodeOwners, cached_codeowners
from bot.config import Settings
from bot.delivery import Deliverers, Place
from bot.digest.labels import Labeler
from bot.digest.service import DigestService
from bot.digest.window import parse_week
from bot.errors import CodeownersError, FilterError, PrhubError
from bot.filters import Candidate, Filter, describe, match, reasons_text
from bot.models import DigestPR, Language, PullRequest, Window
from bot.people import People, Person
from bot.sources.reads import read_source
from bot.store import Store, cache_key
from bot.subscriptions import Subscriber, Subscription, Subscriptions

__all__ = ["MAX_AGE", "AlertPoller", "PollReport", "queue_key"]

log = logging.getLogger(__name__)

MAX_AGE = timedelta(days=3)
"""An item that could not be sent for this long (the platform keeps refusing) is dropped, with an error logged."""
LOCK_TRIES = 5
"""Tries (0.2 s apart) for a queue's lock while adding items; then the checkpoint waits for the next poll."""
WEBHOOK_LOCK_ROUNDS = 60
"""Rounds of :data:`LOCK_TRIES` (about a minute) for a merged PR from the webhook: no checkpoint keeps it for a
later poll, and a delivery holds the lock while the platform paces its messages."""


def queue_key(who: Subscriber) -> str:
    """Where ``who``'s alert queue (:class:`~bot.batcher.Queue`) is kept."""
    return cache_key("alerts", "queue", who.platform, who.id)


@dataclass
class PollReport:
    """What one poll did: PRs read, items queued, alerts sent (``(subscriber key, repo, number)``) in
    ``messages`` messages, queues skipped (busy elsewhere), and failures."""

    prs_seen: int = 0
    queued: int = 0
    sent: list[tuple[str, str, int]] = field(default_factory=list)
    messages: int = 0
    skipped: int = 0
    failed: list[str] = field(default_factory=list)


def _without_analysis(flt: Filter) -> Filter:
    """``flt`` without the terms an analysis decides (verdicts, score bounds): what a PR must pass to be
    worth analysing at all (a filter matches only PRs its relaxed form matches)."""
    return Filter(include=tuple(t for t in flt.include if t.key != "verdict"),
                  exclude=tuple(t for t in flt.exclude if t.key != "verdict"))


class AlertPoller:
    """The alerts job.

    Args:
        settings: languages and zones of the channels, ``alerts_overlap_s``, ``alerts_batch_s``,
            ``quiet_hours``, ``bots``.
        store: checkpoints and queues (Redis; its failures propagate).
        claims: the queue locks (and the markers of the alerts before batching).
        subscriptions: who follows what.
        people: the GitHub handles behind ``@me``.
        channels: the sources of the followed repositories.
        deliverers: where subscribers are (and their people's time zones).
        digests: the digest service (the PRs' analyses).
        clock: the current instant (aware).
        sleep: how to wait for a busy queue lock (tests pass a quick one).
    """

    def __init__(self, *, settings: Settings, store: Store, claims: Claims, subscriptions: Subscriptions,
                 people: People, channels: Channels, deliverers: Deliverers, digests: DigestService,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC),
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.settings = settings
        self._store = store
        self._claims = claims
        self._subscriptions = subscriptions
        self._people = people
        self._channels = channels
        self._deliverers = deliverers
        self._digests = digests
        self._clock = clock
        self._sleep = sleep

    def _checkpoint_key(self, repo: str) -> str:
        return cache_key("alerts", "checkpoint", repo.lower())

    def _language(self, who: Subscriber) -> Language:
        return self.settings.channel(who.key).language or self.settings.language

    async def poll(self) -> PollReport:
        """One poll: collect for every followed repository, then deliver to every subscriber (see the
        module docstring).

        Raises:
            redis.exceptions.RedisError: the store did not answer (nothing is marked sent that was not).
        """
        report = PollReport()
        subscriptions = await self._subscriptions.all()
        by_repo: dict[str, list[tuple[Subscriber, Subscription]]] = {}
        for who, subs in subscriptions.items():
            for sub in subs:
                by_repo.setdefault(sub.repo.lower(), []).append((who, sub))
        for pairs in by_repo.values():
            await self._collect(pairs[0][1].repo, pairs, report)
        for who, subs in subscriptions.items():
            await self._deliver(who, subs, report)
        return report

    async def on_merged(self, repo: str, number: int) -> PollReport:
        """A PR merged just now (the GitHub webhook): analyse it in the language of every channel and
        subscriber that follows ``repo`` (through the digest service, so with workers alive the jobs
        are queued, once per language whoever asks), then queue its alerts and deliver what is due —
        the poll's steps for this one PR, without moving the checkpoint (a later poll that reads it
        again adds nothing twice).

        Raises:
            PrhubError: the source cannot give the PR.
            redis.exceptions.RedisError: the store did not answer.
        """
        report = PollReport()
        source = self._channels.source_for_repo(repo)
        pr = await read_source(source, source.pull_request, repo, number)
        repo = pr.repo
        try:
            week = parse_week("this", tz=self.settings.timezone, now=pr.merged_at)
            neighbours = await read_source(source, source.merged_prs, repo, week)
        except PrhubError as exc:  # the hot files then come from this PR alone
            log.warning("webhook: %s: the week of #%d could not be read: %s", repo, number, exc)
            neighbours = [pr]
            week = None
        # core files from the repository's history, as the digest of that week takes them
        history = await self._digests.earlier_records(source, repo, week) if week is not None else None
        subscriptions = await self._subscriptions.all()
        pairs = [(who, sub) for who, subs in subscriptions.items() for sub in subs if sub.repo.lower() == repo.lower()]
        languages = {self._language(who) for who, _ in pairs}
        languages |= {cfg.language or self.settings.language for key, cfg in self.settings.channels.items()
                      if (cfg.repo or self.settings.default_repo or "").lower() == repo.lower()}
        if (self.settings.default_repo or "").lower() == repo.lower() or not languages:
            languages.add(self.settings.language)
        await asyncio.gather(*(self._digests.pr(pr, language=lang, window_prs=neighbours, history=history)
                               for lang in sorted(languages)))
        report.prs_seen = 1
        if not pairs:
            return report
        now = self._clock()
        owners = await self._codeowners(source, repo, pairs)
        items = await self._matches(repo, [pr], pairs, owners, await self._handles(pairs), now,
                                    {pr.number: history} if history is not None else {})
        for who, found in items.items():
            for _ in range(WEBHOOK_LOCK_ROUNDS):  # no checkpoint holds this PR back: wait longer for the lock
                if await self._enqueue(who, found):
                    report.queued += len(found)
                    break
            else:
                report.skipped += 1
                log.warning("webhook: %s#%d: %s's alert queue stayed locked; the next poll adds it", repo, number,
                            who.key)
        for who in items:  # a queue locked by another delivery now is delivered by it or by the next poll
            await self._deliver(who, subscriptions[who], report)
        return report

    # -- collect ------------------------------------------------------------------------------------------

    async def _collect(self, repo: str, pairs: list[tuple[Subscriber, Subscription]], report: PollReport) -> None:
        now = self._clock()
        overlap = timedelta(seconds=self.settings.alerts_overlap_s)
        saved = await self._store.get_json(self._checkpoint_key(repo))
        checkpoint = datetime.fromisoformat(saved) if isinstance(saved, str) else now
        window = Window(start=checkpoint - overlap, end=now, timezone="UTC", name="alerts")
        source = self._channels.source_for_repo(repo)
        try:
            prs = await read_source(source, source.merged_prs, repo, window)
        except PrhubError as exc:  # one repository's source failing must not stop the others' alerts
            log.warning("alerts: %s: %s", repo, exc)
            report.failed.append(f"{repo}: {exc}")
            return
        report.prs_seen += len(prs)
        # core files from the repository's history before each PR's week, as the digest of that week takes them
        # (a poll after Monday 00:00 still finds PRs of the week before)
        weeks = {pr.number: parse_week("this", tz=self.settings.timezone, now=pr.merged_at) for pr in prs}
        before: dict[str, tuple[PullRequest, ...]] = {}
        for week in {w.name: w for w in weeks.values()}.values():
            before[week.name] = await self._digests.earlier_records(source, repo, week)
        history = {number: before[week.name] for number, week in weeks.items()}
        owners = await self._codeowners(source, repo, pairs)
        handles = await self._handles(pairs)
        items = await self._matches(repo, prs, pairs, owners, handles, now, history)
        hold: datetime | None = None
        for who, found in items.items():
            if not await self._enqueue(who, found):
                merged = min(datetime.fromisoformat(i.payload["merged_at"]) for i in found)
                hold = merged if hold is None else min(hold, merged)
                report.skipped += 1
            else:
                report.queued += len(found)
        # PRs that could not be queued keep the checkpoint before them, so a later poll adds them.
        new = now if hold is None else min(now, hold)
        await self._store.set_json(self._checkpoint_key(repo), new.isoformat())

    async def _codeowners(self, source: object, repo: str,
                          pairs: list[tuple[Subscriber, Subscription]]) -> CodeOwners | None:
        if not any(sub.filter.uses_codeowners for _, sub in pairs):
            return None
        try:
            return await cached_codeowners(self._store, source, repo, ttl_s=self.settings.codeowners_ttl_s)
        except (CodeownersError, PrhubError) as exc:
            log.warning("alerts: %s: CODEOWNERS unavailable, path:@… filters match nothing for now: %s", repo, exc)
            return None

    async def _handles(self, pairs: list[tuple[Subscriber, Subscription]]) -> dict[str, str | None]:
        """The GitHub handle of whoever made each ``@me`` subscription, by subscription field and subscriber."""
        out: dict[str, str | None] = {}
        for who, sub in pairs:
            if sub.filter.uses_me:
                maker = sub.created_by if sub.created_by not in (None, "config", "cli") else None
                out[f"{who.key}|{sub.field}"] = (await self._people.github(Person(who.platform, maker))
                                                 if maker else None)
        return out

    async def _matches(self, repo: str, prs: list[PullRequest], pairs: list[tuple[Subscriber, Subscription]],
                       owners: CodeOwners | None, handles: dict[str, str | None],
                       now: datetime, history: Mapping[int, Sequence[PullRequest]] | None = None,
                       ) -> dict[Subscriber, list[Item]]:
        """What each subscriber gets of ``prs``; ``history`` gives, by PR number, the records before its week
        (core files, :meth:`~bot.digest.service.DigestService.earlier_records`)."""
        labeler = Labeler(self.settings.repo(repo))
        bots = self.settings.bots_of(repo)
        items: dict[Subscriber, list[Item]] = {}
        unusable: set[str] = set()
        for pr in prs:
            base = dataclasses.replace(Candidate.of(pr), labels=tuple(dict.fromkeys(
                label.lower() for label in labeler.labels(pr))))
            analysed: dict[Language, DigestPR] = {}
            for who, sub in pairs:
                key = f"{repo.lower()}#{pr.number}"
                if any(i.key == key for i in items.get(who, ())):
                    continue  # another of the subscriber's filters matched it already
                me = handles.get(f"{who.key}|{sub.field}")
                try:
                    if not match(_without_analysis(sub.filter), base, bots=bots, me=me, codeowners=owners):
                        continue
                    language = self._language(who)
                    if language not in analysed:
                        analysed[language] = await self._digests.pr(pr, language=language, window_prs=prs,
                                                                    history=(history or {}).get(pr.number))
                    item = analysed[language]
                    found = match(sub.filter, dataclasses.replace(base, analysis=item.analysis), bots=bots, me=me,
                                  codeowners=owners)
                except FilterError as exc:  # @me without a handle, CODEOWNERS missing: said once per poll
                    if sub.field not in unusable:
                        unusable.add(sub.field)
                        log.warning("alerts: %s's subscription %s matches nothing for now: %s", who.key, sub.field,
                                    exc)
                    continue
                if not found:
                    continue
                sent_before, _ = alert_keys(who.platform, who.id, repo, pr.number)
                if await self._claims.is_done(sent_before):
                    continue
                items.setdefault(who, []).append(Item(key=key, arrived_at=now, payload={
                    "repo": repo, "number": pr.number, "merged_at": pr.merged_at.isoformat(),
                    "pr": item.model_dump(mode="json"), "subscription": describe(sub.filter, language),
                    "why": reasons_text(found.reasons, language), "field": sub.field}))
        return items

    async def _enqueue(self, who: Subscriber, found: list[Item]) -> bool:
        """Add ``found`` to ``who``'s queue under its lock; ``False`` when the lock stayed taken."""
        lock = alert_queue_lock_key(who.platform, who.id)
        for attempt in range(LOCK_TRIES):
            if await self._claims.lock(lock, ALERT_LOCK_TTL_S):
                break
            if attempt + 1 < LOCK_TRIES:
                await self._sleep(0.2)
        else:
            return False
        try:
            queue = await self._load(who)
            await self._save(who, add(queue, found))
        finally:
            await self._claims.release(lock)
        return True

    # -- deliver ------------------------------------------------------------------------------------------

    async def _load(self, who: Subscriber) -> Queue:
        raw = await self._store.get_json(queue_key(who))
        if raw is None:
            return Queue(subscriber=who.key)
        try:
            return Queue.model_validate(raw)
        except ValidationError as exc:  # never silently: an unreadable queue is logged and started over
            log.error("alerts: the queue of %s is unreadable, starting a new one: %s", who.key, exc)
            return Queue(subscriber=who.key)

    async def _save(self, who: Subscriber, queue: Queue) -> None:
        await self._store.set_json(queue_key(who), queue.model_dump(mode="json"))

    def _prune(self, queue: Queue, subs: tuple[Subscription, ...], now: datetime) -> Queue:
        """``queue`` without pending items whose subscription is gone (or was made after they arrived), and
        without items older than :data:`MAX_AGE`."""
        since = {s.field: s.created_at for s in subs}
        kept: list[Item] = []
        for item in queue.pending:
            field_name = str(item.payload.get("field", ""))
            if field_name not in since:
                continue
            made = since[field_name]
            if made is not None and made.tzinfo is not None and item.arrived_at < made:
                continue
            if now - item.arrived_at > MAX_AGE:
                log.error("alerts: %s to %s could not be sent for %s; dropped", item.key, queue.subscriber, MAX_AGE)
                continue
            kept.append(item)
        if len(kept) == len(queue.pending):
            return queue
        return queue.model_copy(update={"pending": tuple(kept)})

    async def _zone(self, who: Subscriber, subs: tuple[Subscription, ...]) -> str:
        """The subscriber's time zone: the person's (Slack ``users.info``) for a DM or a user id, else the
        channel's (``timezone`` of its section, else the global one)."""
        fallback = self.settings.channel(who.key).timezone or self.settings.timezone
        person: str | None = None
        if who.is_person:
            person = who.id
        elif who.platform == "slack" and who.id.startswith("D"):
            makers = [s for s in subs if s.created_by and s.created_by not in ("config", "cli")]
            person = max(makers, key=lambda s: s.created_at or datetime.min.replace(tzinfo=UTC)).created_by \
                if makers else None
        if person is None:
            return fallback
        try:
            deliverer, _ = self._deliverers.for_channel(who.key)
        except PrhubError:
            return fallback
        return await deliverer.person_timezone(person) or fallback

    async def _policy(self, who: Subscriber, zone_name: str) -> Policy:
        quiet = self.settings.channel(who.key).quiet_hours
        hours = QuietHours.parse(quiet, zone_name) if quiet and quiet != "off" else None
        return Policy(window=timedelta(seconds=self.settings.alerts_batch_s), quiet=hours)

    async def _deliver(self, who: Subscriber, subs: tuple[Subscription, ...], report: PollReport) -> None:
        lock = alert_queue_lock_key(who.platform, who.id)
        if not await self._claims.lock(lock, ALERT_LOCK_TTL_S):
            report.skipped += 1  # another replica is delivering to this subscriber now
            return
        try:
            now = self._clock()
            loaded = await self._load(who)
            if not loaded.pending and loaded.in_flight is None:
                return
            queue = self._prune(loaded, subs, now)
            zone_name = await self._zone(who, subs)
            queue, batch = take(queue, await self._policy(who, zone_name), now)
            if batch is None:
                if queue != loaded:
                    await self._save(who, queue)
                return
            await self._save(who, queue)  # in flight before anything is sent: a crash resends it, never loses it
            try:
                deliverer, target = self._deliverers.for_channel(who.key)
                language = self._language(who)
                messages = deliverer.alert_messages(AlertBatch(tuple(_alert(i, language, zone_name)
                                                                     for i in batch.items), language, zone_name))
                await deliverer.post(Place(target), messages, key=f"{batch.key}@{batch.taken_at.isoformat()}")
            except (PrhubError, ValidationError) as exc:
                await self._save(who, failed(queue, batch.key))
                log.error("alerts to %s failed (retried at the next poll): %s", who.key, exc)
                report.failed.append(f"{who.key}: {exc}")
                return
            await self._save(who, sent(queue, batch.key, self._clock()))
            report.messages += 1
            report.sent += [(who.key, str(i.payload.get("repo", "")), int(i.payload.get("number", 0)))
                            for i in batch.items]
        finally:
            await self._claims.release(lock)


def _alert(item: Item, language: Language, zone_name: str) -> Alert:
    payload: dict[str, Any] = item.payload
    return Alert(pr=DigestPR.model_validate(payload["pr"]), repo=str(payload["repo"]),
                 subscription=str(payload.get("subscription", "")), why=str(payload.get("why", "")),
                 language=language, timezone=zone_name)
