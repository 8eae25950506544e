"""Subscriptions: one record per (subscriber, repository, filter), written by the chat bots, read by the alerts.

A :class:`Subscriber` is where alerts go: ``platform`` (``slack``, ``feishu``, ``feishu-webhook``) and
the id of a conversation (a channel, a person's direct-message conversation) or, on Slack, of a
person (``U…``/``W…``: sent as a direct message). A :class:`Subscription` is one record of it: the
repository, the :class:`~bot.filters.Filter` (canonical: two filters that mean the same are equal,
so the same subscription is never stored twice), when and by whom it was made. Fields this version
does not know are ignored on read.

Layout in the store (docs/operator-guide.md "Redis keys")::

    prhub:subscriptions:{platform}:{id}   hash: field "{repo, lower case}|{filter text}" -> the record as JSON
    prhub:subscribers                     set: "{platform}:{id}" of every subscriber with a subscription
    prhub:subscriptions:log               list: the change log (who, when, what), the last CHANGE_LOG_ENTRIES

Subscribing and unsubscribing change the record and the index in one atomic step
(:meth:`bot.store.Store.put_record`, :meth:`~bot.store.Store.delete_record`): two changes at the
same instant lose nothing, and nothing is read, modified and written back. Each change is then
appended to the change log (:meth:`Subscriptions.changes`).

``[[subscriptions]]`` of the config file (:class:`bot.config.ConfiguredSubscription`) are listed
with the stored ones (``from_config``); they are changed in the file, not in chat.

Upgrades (:meth:`Subscriptions.migrate`, run at start by ``prhub serve``, ``prhub alerts``, ``prhub
push``, ``prhub subscriptions``): the first layout's ``prhub:sub:{platform}:{id}`` (a JSON list of
``[repo, label]``) with ``prhub:sub-index``, and the second layout's records of one label
(field ``{repo}|{label}``, JSON ``{"repo", "label", …}``), become records of the filter of that one
label. Each step writes the new record before it deletes the old one, so a crash midway leaves the
rest for the next start, and running it again, or on several replicas at once, adds nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal, Protocol

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from bot.config import Settings
from bot.digest.labels import Labeler
from bot.errors import FilterError, StoreUnavailableError
from bot.filters import Candidate, Filter, OwnerMap, Term, is_bot, match, parse_filter
from bot.models import DigestPR, Language, PullRequest
from bot.store import Store, cache_key

__all__ = [
    "CHANGE_LOG_ENTRIES",
    "CHANGE_LOG_KEY",
    "INDEX_KEY",
    "KNOWN_LABEL_WEEKS",
    "LEGACY_INDEX_KEY",
    "PREVIEW_WEEKS",
    "WRITE_LOCK_KEY",
    "AlertPreview",
    "Change",
    "SubscribeGuard",
    "Subscriber",
    "Subscription",
    "Subscriptions",
    "known_labels",
    "label_filter",
    "preview_alerts",
    "record_field",
]

log = logging.getLogger(__name__)

INDEX_KEY = cache_key("subscribers")
"""The set of ``platform:id`` with at least one subscription."""
CHANGE_LOG_KEY = cache_key("subscriptions", "log")
WRITE_LOCK_KEY = cache_key("subscriptions", "write-lock")
"""The lease around one subscription change (its caps checked, then stored): :meth:`Subscriptions.writing`."""
WRITE_LOCK_TTL_S = 10
"""Seconds the write lease lives if its holder dies."""
WRITE_WAIT_S = 10.0
"""Seconds a change waits for another to finish before it gives up (nothing saved)."""
"""The list of :class:`Change` entries, oldest first."""
CHANGE_LOG_ENTRIES = 10_000
"""How many changes the log keeps (the oldest go first)."""
LEGACY_INDEX_KEY = "prhub:sub-index"
"""The first layout's JSON list of subscribers (migrated at start, then deleted)."""
KNOWN_LABEL_WEEKS = 4
"""Labels a subscription may name: those the repository used in this many weeks, or its rules give."""


@dataclass(frozen=True, slots=True, order=True)
class Subscriber:
    """Who gets alerts: ``platform`` (``slack``, ``feishu``, ``feishu-webhook``) and the conversation or user ``id``."""

    platform: str
    id: str

    @classmethod
    def parse(cls, key: str) -> Subscriber:
        """``"slack:C123"`` -> ``Subscriber("slack", "C123")``."""
        platform, _, ident = key.partition(":")
        return cls(platform, ident)

    @property
    def key(self) -> str:
        """``platform:id`` (as in ``prhub:subscribers`` and ``prhub subscriptions --subscriber``)."""
        return f"{self.platform}:{self.id}"

    @property
    def is_person(self) -> bool:
        """A user id rather than a conversation: sent as a direct message."""
        return (self.platform == "slack" and self.id[:1] in ("U", "W")) or (
            self.platform == "feishu" and self.id.startswith("ou_"))


def label_filter(label: str) -> Filter:
    """The filter of the one label ``label`` (what a subscription of the first two layouts meant)."""
    return Filter(include=(Term(key="label", value=label),))


class Subscription(BaseModel):
    """Alerts for merged PRs of ``repo`` (``owner/name``) that ``filter`` matches.

    ``created_at`` (aware) and ``created_by`` (the platform's user id, ``cli``, or ``None`` for
    subscriptions migrated from the first layout) say who made it; ``from_config``: a
    ``[[subscriptions]]`` entry of the config file (not stored). A record of the second layout
    (``label`` instead of ``filter``) reads as the filter of that label.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    repo: str
    filter: Filter = Field(default_factory=Filter)
    created_at: datetime | None = None
    created_by: str | None = None
    from_config: bool = Field(default=False, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _label_of_the_second_layout(cls, data: Any) -> Any:
        if isinstance(data, dict) and "filter" not in data and isinstance(data.get("label"), str):
            return {**data, "filter": label_filter(data["label"])}
        return data

    @property
    def field(self) -> str:
        """The record's field in its subscriber's hash: ``{repo, lower case}|{filter text}``."""
        return record_field(self.repo, self.filter)

    def sort_key(self) -> tuple[str, str]:
        return self.repo.lower(), self.filter.text()


def record_field(repo: str, flt: Filter) -> str:
    """The hash field of the subscription to ``flt`` in ``repo``."""
    return f"{repo.strip().lower()}|{flt.text()}"


class Change(BaseModel):
    """One entry of the change log: ``at`` (aware), ``by`` (the platform user id, ``cli``, ``config``),
    the ``subscriber`` (``platform:id``), ``action`` and the subscription (``repo``, ``filter`` text)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    at: AwareDatetime
    by: str | None
    subscriber: str
    action: Literal["subscribe", "unsubscribe"]
    repo: str
    filter: str
    via: str = "chat"
    """``chat``, ``import``, ``unsubscribe all``."""


class SubscribeGuard(Protocol):
    """A check before a subscription is stored (issue 14's access control plugs in here: may this
    channel see the repository, is the per-person / per-channel cap reached)."""

    async def check_subscribe(self, who: Subscriber, user: str, repo: str) -> None:
        """Return when ``user`` may subscribe ``who`` to ``repo``.

        Raises:
            PrhubError: refused; the message is for the person (one line, no server paths).
        """
        ...


def _hash_key(who: Subscriber) -> str:
    return cache_key("subscriptions", who.platform, who.id)


def _legacy_key(platform: str, ident: str) -> str:
    return f"prhub:sub:{platform}:{ident}"  # spelled as the first bots wrote it


class Subscriptions:
    """The subscriptions in ``store`` (Redis in the bot; a :class:`~bot.store.MemoryStore` in tests), and
    those of the config file.

    Store failures propagate (:class:`redis.exceptions.RedisError`): a subscription is state the
    person asked for, never silently dropped.

    Args:
        store: where records and the change log live.
        settings: the config file's ``[[subscriptions]]`` (and the subscribers' bound repositories).
    """

    def __init__(self, store: Store, settings: Settings | None = None) -> None:
        self._store = store
        self._configured = _configured(settings) if settings is not None else {}

    @contextlib.asynccontextmanager
    async def writing(self, *, wait_s: float = WRITE_WAIT_S) -> AsyncIterator[None]:
        """Hold the one lease on subscription changes (``prhub:subscriptions:write-lock``) while the block
        runs, so a cap checked and the subscription then stored are one step: of simultaneous requests
        beyond a cap, none slips past it. Waits up to ``wait_s`` for another change to finish.

        Raises:
            StoreUnavailableError: Redis is down, or the lease stayed held for ``wait_s`` (nothing saved).
        """
        loop = asyncio.get_running_loop()
        give_up = loop.time() + wait_s
        while (lease := await self._store.lease(WRITE_LOCK_KEY, WRITE_LOCK_TTL_S)) is None:
            if loop.time() >= give_up:
                raise StoreUnavailableError(f"the subscriptions' write lock stayed held for {wait_s:g} s")
            await asyncio.sleep(0.02)
        try:
            yield
        finally:
            await asyncio.shield(lease.release())

    async def add(self, who: Subscriber, repo: str, flt: Filter, *, by: str | None = None,
                  now: datetime | None = None, via: str = "chat") -> bool:
        """Subscribe ``who`` to the PRs of ``repo`` that ``flt`` matches; ``False`` when an equal
        subscription was there (it is kept, nothing is logged)."""
        at = now or datetime.now(UTC)
        record = Subscription(repo=repo.strip(), filter=flt, created_by=by or None, created_at=at)
        return await self._put(who, record, by=by, at=at, via=via)

    async def _put(self, who: Subscriber, record: Subscription, *, by: str | None, at: datetime, via: str) -> bool:
        added = await self._store.put_record(_hash_key(who), record.field, record.model_dump(mode="json"),
                                             index=INDEX_KEY, member=who.key)
        if added:
            await self._log(Change(at=at, by=by, subscriber=who.key, action="subscribe", repo=record.repo,
                                   filter=record.filter.text(), via=via))
        return added

    async def remove(self, who: Subscriber, repo: str, flt: Filter, *, by: str | None = None,
                     now: datetime | None = None, via: str = "chat") -> bool:
        """Remove the subscription of ``who`` to ``flt`` (an equal filter) in ``repo``; ``False`` when
        there was none."""
        gone = await self._store.delete_record(_hash_key(who), record_field(repo, flt), index=INDEX_KEY,
                                               member=who.key)
        if gone:
            await self._log(Change(at=now or datetime.now(UTC), by=by, subscriber=who.key, action="unsubscribe",
                                   repo=repo.strip(), filter=flt.text(), via=via))
        return gone

    async def remove_all(self, who: Subscriber, repo: str | None = None, *, by: str | None = None,
                         now: datetime | None = None) -> tuple[Subscription, ...]:
        """Remove every stored subscription of ``who`` (of ``repo`` only, when given); returns those removed."""
        removed: list[Subscription] = []
        for sub in await self.of(who, stored_only=True):
            if repo is not None and sub.repo.lower() != repo.strip().lower():
                continue
            if await self.remove(who, sub.repo, sub.filter, by=by, now=now, via="unsubscribe all"):
                removed.append(sub)
        return tuple(removed)

    async def of(self, who: Subscriber, *, stored_only: bool = False) -> tuple[Subscription, ...]:
        """The subscriptions of ``who`` (the config file's too, unless ``stored_only``), sorted by
        repository and filter."""
        return self._merged(who, await self._store.records(_hash_key(who)), stored_only=stored_only)

    def _merged(self, who: Subscriber, records: dict[str, Any], *, stored_only: bool) -> tuple[Subscription, ...]:
        """The config file's subscriptions of ``who`` (unless ``stored_only``) and its stored ``records``."""
        found: dict[str, Subscription] = {}
        if not stored_only:
            found.update({s.field: s for s in self._configured.get(who, ())})
        for field, value in records.items():
            try:
                sub = Subscription.model_validate(value)
            except ValidationError as exc:
                log.error("subscription %s of %s is unreadable, skipped: %s", field, who.key, exc)
                continue
            found.setdefault(sub.field, sub)
        return tuple(sorted(found.values(), key=Subscription.sort_key))

    async def all(self) -> dict[Subscriber, tuple[Subscription, ...]]:
        """Every subscriber with its subscriptions (subscribers in key order); the stored ones read in one
        round trip (:meth:`bot.store.Store.records_many`), not one per subscriber."""
        members = sorted({Subscriber.parse(m) for m in await self._store.index_members(INDEX_KEY)}
                         | set(self._configured))
        stored = await self._store.records_many([_hash_key(who) for who in members])
        out: dict[Subscriber, tuple[Subscription, ...]] = {}
        for who, records in zip(members, stored, strict=True):
            subs = self._merged(who, records, stored_only=False)
            if subs:
                out[who] = subs
        return out

    async def changes(self, *, limit: int | None = None) -> list[Change]:
        """The change log, oldest first (the last ``limit`` entries when given)."""
        entries: list[Change] = []
        for raw in await self._store.read_log(CHANGE_LOG_KEY, limit=limit):
            try:
                entries.append(Change.model_validate(raw))
            except ValidationError as exc:
                log.error("a change log entry is unreadable, skipped: %s", exc)
        return entries

    async def _log(self, change: Change) -> None:
        await self._store.append_log(CHANGE_LOG_KEY, change.model_dump(mode="json"), max_len=CHANGE_LOG_ENTRIES)

    # -- upgrades ---------------------------------------------------------------------------------------------

    async def migrate(self) -> int:
        """Move subscriptions of the earlier layouts into filter records (see the module docstring);
        returns how many were moved."""
        return await self.migrate_legacy() + await self._migrate_label_records()

    async def migrate_legacy(self) -> int:
        """Move the first layout's JSON lists into records; returns how many were moved.

        Each old list is deleted after its records are written, then the old index, so a crash
        midway leaves the rest for the next start, and nothing is added twice.
        """
        members = await self._store.get_json(LEGACY_INDEX_KEY)
        if not isinstance(members, list):
            return 0
        moved = 0
        for member in members:
            who = Subscriber.parse(str(member))
            old = _legacy_key(who.platform, who.id)
            pairs = await self._store.get_json(old)
            for pair in pairs if isinstance(pairs, list) else []:
                if isinstance(pair, list) and len(pair) == 2 and str(pair[1]).strip():
                    record = Subscription(repo=str(pair[0]).strip(), filter=label_filter(str(pair[1])))
                    await self._store.put_record(_hash_key(who), record.field, record.model_dump(mode="json"),
                                                 index=INDEX_KEY, member=who.key)
                    moved += 1
            await self._store.delete(old)
        await self._store.delete(LEGACY_INDEX_KEY)
        if moved:
            log.info("moved %d subscriptions of %d subscribers from the first layout (prhub:sub:*)", moved,
                     len(members))
        return moved

    async def _migrate_label_records(self) -> int:
        """Rewrite the second layout's one-label records (field ``{repo}|{label}``) as filter records."""
        moved = 0
        for member in await self._store.index_members(INDEX_KEY):
            who = Subscriber.parse(member)
            for field, value in (await self._store.records(_hash_key(who))).items():
                if not isinstance(value, dict) or "filter" in value:
                    continue
                try:
                    record = Subscription.model_validate(value)
                except ValidationError as exc:
                    log.error("subscription %s of %s is unreadable, left as it is: %s", field, who.key, exc)
                    continue
                if record.field != field:  # write the new record first: a crash leaves the old one to redo
                    await self._store.put_record(_hash_key(who), record.field, record.model_dump(mode="json"),
                                                 index=INDEX_KEY, member=who.key)
                    await self._store.delete_record(_hash_key(who), field, index=INDEX_KEY, member=who.key)
                else:
                    await self._store.put_record(_hash_key(who), field, record.model_dump(mode="json"),
                                                 index=INDEX_KEY, member=who.key, replace=True)
                moved += 1
        if moved:
            log.info("rewrote %d one-label subscriptions as filters", moved)
        return moved

    # -- export and import ------------------------------------------------------------------------------------

    async def import_records(self, entries: Sequence[tuple[Subscriber, Subscription]], *, replace: bool = False,
                             by: str = "cli", now: datetime | None = None) -> tuple[int, int]:
        """Store ``entries`` (an export read back: each keeps its ``created_at`` and ``created_by``, whose
        GitHub handle ``@me`` means); with ``replace``, also remove the stored subscriptions of the
        subscribers named there that the entries do not hold. Each change is logged as made ``by``.
        Returns ``(added, removed)``."""
        at = now or datetime.now(UTC)
        added = removed = 0
        wanted: dict[Subscriber, set[str]] = {}
        for who, sub in entries:
            wanted.setdefault(who, set()).add(sub.field)
            record = sub.model_copy(update={"from_config": False, "created_at": sub.created_at or at})
            if await self._put(who, record, by=by, at=at, via="import"):
                added += 1
        if replace:
            for who, fields in wanted.items():
                for sub in await self.of(who, stored_only=True):
                    if sub.field not in fields and await self.remove(who, sub.repo, sub.filter, by=by, now=at,
                                                                     via="import"):
                        removed += 1
        return added, removed


def _configured(settings: Settings) -> dict[Subscriber, tuple[Subscription, ...]]:
    out: dict[Subscriber, list[Subscription]] = {}
    for entry in settings.subscriptions:
        repo = entry.repo or settings.channel(entry.subscriber).repo or ""
        flt = parse_filter(entry.filter, aliases=settings.repo(repo).aliases)
        sub = Subscription(repo=repo, filter=flt, created_by="config", from_config=True)
        out.setdefault(Subscriber.parse(entry.subscriber), []).append(sub)
    return {who: tuple(subs) for who, subs in out.items()}


def known_labels(prs: Iterable[PullRequest], settings: Settings, repo: str) -> list[str]:
    """The labels ``repo`` has used on ``prs`` plus those its label rules and aliases can give, sorted —
    what a subscription may name."""
    config = settings.repo(repo)
    labeler = Labeler(config)
    found = {label.lower() for pr in prs for label in labeler.labels(pr)}
    found |= {rule.label.lower() for rule in config.label_rules}
    found |= {target.lower() for target in config.aliases.values()}
    return sorted(found)


PREVIEW_WEEKS = 4
"""How far back a subscription preview looks (:func:`preview_alerts`): the last four weeks."""
PREVIEW_EXAMPLES = 3
"""How many PR numbers a preview names as examples (the newest that would have alerted)."""


@dataclass(frozen=True, slots=True)
class AlertPreview:
    """What a subscription would have sent over a past span (:func:`preview_alerts`).

    ``first`` / ``last``: the span's days (inclusive, in the zone the caller chose); ``read``: PRs of
    ``repo`` merged in it; ``matched``: the numbers of the PRs that would have alerted (one alert per
    PR; batching groups them into fewer messages), newest first; ``from_bots``: how many of them are
    bots' PRs (the filter names the bot); ``bots_left_out``: bots' PRs the filter would take but
    leaves out because it does not name the bot; ``unusable``: why the filter matches nothing now
    (``@me`` without a handle, no CODEOWNERS), else ``""``.
    """

    repo: str
    filter: Filter
    first: date
    last: date
    read: int
    matched: tuple[int, ...]
    from_bots: int = 0
    bots_left_out: int = 0
    unusable: str = ""

    @property
    def count(self) -> int:
        """Alerts it would have sent (one per matched PR)."""
        return len(self.matched)

    def text(self, language: Language) -> str:
        """One sentence: "过去四周（03-23 至 04-19）这个订阅会发出 5 条提醒（其中 1 条来自机器人），例如 #6046、…"."""
        span = f"{self.first:%m-%d}" + (" 至 " if language == "zh" else " to ") + f"{self.last:%m-%d}"
        examples = ("、" if language == "zh" else ", ").join(f"#{n}" for n in self.matched[:PREVIEW_EXAMPLES])
        if language == "zh":
            head = f"过去四周（{span}，合并 {self.read} 个 PR）这个订阅会发出 {self.count} 条提醒"
            head += f"（其中 {self.from_bots} 条来自机器人）" if self.count else ""
            head += f"，例如 {examples}" if examples else ""
            head += "。"
            if self.bots_left_out:
                head += f"另有 {self.bots_left_out} 个机器人的 PR 符合条件但不会提醒（要收到请写 author:机器人名）。"
            if self.unusable:
                head += f"注意：{self.unusable}"
            return head
        head = (f"In the last four weeks ({span}, {self.read} PRs merged) this subscription would have sent "
                f"{self.count} alert{'' if self.count == 1 else 's'}")
        head += f" ({self.from_bots} from bots)" if self.count else ""
        head += f", e.g. {examples}" if examples else ""
        head += "."
        if self.bots_left_out:
            head += (f" {self.bots_left_out} more from bots would match but are left out (name the bot, "
                     "author:NAME, to get them).")
        if self.unusable:
            head += f" Note: {self.unusable}"
        return head


Analyse = Callable[[PullRequest], Awaitable[DigestPR]]
"""How a preview gets one PR's analysis (verdicts and score bounds need it): the digest service's ``pr``."""


async def preview_alerts(prs: Sequence[PullRequest], flt: Filter, *, settings: Settings, repo: str, first: date,
                         last: date, analyse: Analyse | None = None, me: str | None = None,
                         codeowners: OwnerMap | None = None, language: Language = "zh") -> AlertPreview:
    """What ``flt`` would have alerted on among ``prs`` (the PRs of ``repo`` merged from ``first`` to ``last``):
    the alerts' own rules (:mod:`bot.scheduler.alerts`): the digest's labels, the filter's terms that need
    no analysis first, then ``analyse`` for those that pass when the filter has verdicts or score bounds,
    bots left out unless named (``bots`` of the config and the repository). ``me`` and ``codeowners`` as
    :func:`bot.filters.match` takes them; a filter they leave unusable matches nothing, and says why.

    Never raises for the filter: a :class:`~bot.errors.FilterError` becomes :attr:`AlertPreview.unusable`.
    """
    labeler = Labeler(settings.repo(repo))
    bots = settings.bots_of(repo)
    relaxed = Filter(include=tuple(t for t in flt.include if t.key != "verdict"),
                     exclude=tuple(t for t in flt.exclude if t.key != "verdict"))
    needs_analysis = relaxed != flt
    matched: list[PullRequest] = []
    from_bots = left_out = 0
    unusable = ""
    for pr in sorted(prs, key=lambda p: p.merged_at, reverse=True):
        base = dataclasses.replace(Candidate.of(pr), labels=tuple(dict.fromkeys(
            label.lower() for label in labeler.labels(pr))))
        try:
            first_pass = match(relaxed, base, bots=bots, me=me, codeowners=codeowners)
            if not first_pass:
                if first_pass.bot and match(relaxed, base, bots=(), me=me, codeowners=codeowners) \
                        and not needs_analysis:
                    left_out += 1
                continue
            if needs_analysis:
                if analyse is None:
                    continue
                item = await analyse(pr)
                if not match(flt, dataclasses.replace(base, analysis=item.analysis), bots=bots, me=me,
                             codeowners=codeowners):
                    continue
        except FilterError as exc:
            unusable = exc.message(language)
            matched = []
            break
        matched.append(pr)
        from_bots += is_bot(pr.author, bots)
    return AlertPreview(repo=repo, filter=flt, first=first, last=last, read=len(prs),
                        matched=tuple(pr.number for pr in matched), from_bots=from_bots, bots_left_out=left_out,
                        unusable=unusable)
