"""Label subscriptions: one record per subscription, written by the chat bots and read by the label alerts.

A :class:`Subscriber` is where alerts go: ``platform`` (``slack``, ``feishu``) and the id of a
conversation (a channel, a person's direct-message conversation) or, on Slack, of a person
(``U…``/``W…``: sent as a direct message). A :class:`Subscription` is one record of it: the
repository and the label (canonical, lower case), when and by whom it was made. Fields added
later (filters) get defaults, so records written before them still read; fields this version
does not know are ignored on read.

Layout in the store (the README's "Redis keys" table)::

    prhub:subscriptions:{platform}:{id}   hash: field "{repo, lower case}|{label}" -> the record as JSON
    prhub:subscribers                     set: "{platform}:{id}" of every subscriber with a subscription

Subscribing and unsubscribing change the record and the index in one atomic step
(:meth:`bot.store.Store.put_record`, :meth:`~bot.store.Store.delete_record`): two changes at the
same instant lose nothing, and nothing is read, modified and written back.

Before this layout the bots kept ``prhub:sub:{platform}:{id}`` (a JSON list of ``[repo, label]``)
and ``prhub:sub-index`` (a JSON list of ``platform:id``). :meth:`Subscriptions.migrate_legacy`
moves those into records at start (``prhub serve``, ``prhub alerts``, ``prhub subscriptions``),
one subscriber at a time, deleting each old list once its records are written; running it again,
or on several replicas at once, adds nothing twice.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, ValidationError

from bot.config import Settings
from bot.digest.labels import Labeler
from bot.models import PullRequest
from bot.store import Store, cache_key

__all__ = ["INDEX_KEY", "KNOWN_LABEL_WEEKS", "LEGACY_INDEX_KEY", "Subscriber", "Subscription", "Subscriptions",
           "known_labels"]

log = logging.getLogger(__name__)

INDEX_KEY = cache_key("subscribers")
"""The set of ``platform:id`` with at least one subscription."""
LEGACY_INDEX_KEY = "prhub:sub-index"
"""The old layout's JSON list of subscribers (migrated at start, then deleted)."""
KNOWN_LABEL_WEEKS = 4
"""A subscription to a label not seen in this many weeks (nor given by a rule) gets a warning."""


@dataclass(frozen=True, slots=True, order=True)
class Subscriber:
    """Who gets alerts: ``platform`` (``slack``, ``feishu``) and the conversation or user ``id``."""

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


class Subscription(BaseModel):
    """Alerts for merged PRs of ``repo`` (``owner/name``) carrying ``label`` (canonical, lower case).

    ``created_at`` (aware) and ``created_by`` (the platform's user id) say who made it; both are
    ``None`` for subscriptions migrated from the old layout.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    repo: str
    label: str
    created_at: datetime | None = None
    created_by: str | None = None

    @property
    def field(self) -> str:
        """The record's field in its subscriber's hash: ``{repo, lower case}|{label}``."""
        return record_field(self.repo, self.label)

    def sort_key(self) -> tuple[str, str]:
        return self.repo.lower(), self.label


def record_field(repo: str, label: str) -> str:
    """The hash field of the subscription to ``label`` in ``repo``."""
    return f"{repo.strip().lower()}|{label.strip().lower()}"


def _hash_key(who: Subscriber) -> str:
    return cache_key("subscriptions", who.platform, who.id)


def _legacy_key(platform: str, ident: str) -> str:
    return f"prhub:sub:{platform}:{ident}"  # spelled as the old bots wrote it


class Subscriptions:
    """The subscriptions in ``store`` (Redis in the bot; a :class:`~bot.store.MemoryStore` in tests).

    Store failures propagate (:class:`redis.exceptions.RedisError`): a subscription is state the
    person asked for, never silently dropped.
    """

    def __init__(self, store: Store) -> None:
        self._store = store

    async def add(self, who: Subscriber, repo: str, label: str, *, by: str | None = None,
                  now: datetime | None = None) -> bool:
        """Subscribe ``who`` to ``label`` in ``repo``; ``False`` when it already was (the record is kept)."""
        record = Subscription(repo=repo.strip(), label=label.strip().lower(), created_by=by or None,
                              created_at=now or datetime.now(UTC))
        return await self._store.put_record(_hash_key(who), record.field, record.model_dump(mode="json"),
                                            index=INDEX_KEY, member=who.key)

    async def remove(self, who: Subscriber, repo: str, label: str) -> bool:
        """Unsubscribe ``who`` from ``label`` in ``repo``; ``False`` when there was no such subscription."""
        return await self._store.delete_record(_hash_key(who), record_field(repo, label), index=INDEX_KEY,
                                               member=who.key)

    async def of(self, who: Subscriber) -> tuple[Subscription, ...]:
        """The subscriptions of ``who``, sorted by repository and label."""
        found: list[Subscription] = []
        for field, value in (await self._store.records(_hash_key(who))).items():
            try:
                found.append(Subscription.model_validate(value))
            except ValidationError as exc:
                log.error("subscription %s of %s is unreadable, skipped: %s", field, who.key, exc)
        return tuple(sorted(found, key=Subscription.sort_key))

    async def all(self) -> dict[Subscriber, tuple[Subscription, ...]]:
        """Every subscriber with its subscriptions (subscribers in key order)."""
        out: dict[Subscriber, tuple[Subscription, ...]] = {}
        for member in await self._store.index_members(INDEX_KEY):
            who = Subscriber.parse(member)
            subs = await self.of(who)
            if subs:
                out[who] = subs
        return out

    async def migrate_legacy(self) -> int:
        """Move subscriptions of the old layout (JSON lists) into records; returns how many were moved.

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
                if isinstance(pair, list) and len(pair) == 2:
                    record = Subscription(repo=str(pair[0]).strip(), label=str(pair[1]).strip().lower())
                    await self._store.put_record(_hash_key(who), record.field, record.model_dump(mode="json"),
                                                 index=INDEX_KEY, member=who.key)
                    moved += 1
            await self._store.delete(old)
        await self._store.delete(LEGACY_INDEX_KEY)
        if moved:
            log.info("moved %d subscriptions of %d subscribers from the old layout (prhub:sub:*)", moved,
                     len(members))
        return moved


def known_labels(prs: Iterable[PullRequest], settings: Settings, repo: str) -> list[str]:
    """The labels ``repo`` has used on ``prs`` plus those its label rules and aliases can give, sorted —
    what a subscription to an unknown label is warned against."""
    config = settings.repo(repo)
    labeler = Labeler(config)
    found = {label.lower() for pr in prs for label in labeler.labels(pr)}
    found |= {rule.label.lower() for rule in config.label_rules}
    found |= {target.lower() for target in config.aliases.values()}
    return sorted(found)
