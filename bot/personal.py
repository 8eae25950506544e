""""My area this week" for one person: their subscriptions, the week's digest of each repository they
follow, and :func:`bot.digest.personal.personal_digest` over it.

A person's subscriptions are those of their direct-message conversation with the bot (where they
asked) and, on Slack, those made to their user id. With none, the digest of the conversation's
repository holds every PR (the reply says how to narrow it). The week's digest and its PR records
come from the same :class:`~bot.digest.service.DigestService` as the team digest (so verdicts,
minutes and LLM analyses are the same ones, from the cache); one weekly run builds each
(repository, window, language) digest once for everybody (:class:`WeekCache`).

``path:@me`` and ``author:@me`` resolve through the person's linked GitHub handle, CODEOWNERS
through :func:`bot.codeowners.cached_codeowners`; a filter that cannot be evaluated (no handle
yet, no CODEOWNERS) is left out of that week's digest and named in :attr:`Built.skipped`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from bot.channels import Channels
from bot.codeowners import CodeOwners, cached_codeowners
from bot.config import Settings
from bot.digest.personal import PersonalDigest, personal_digest
from bot.digest.service import DigestService
from bot.errors import CodeownersError, PrhubError
from bot.filters import Filter
from bot.models import Digest, Language, PullRequest, Window
from bot.people import People, Person
from bot.sources.reads import read_source
from bot.store import Store
from bot.subscriptions import Subscriber, Subscription, Subscriptions

__all__ = ["Built", "PersonalDigests", "WeekCache"]

log = logging.getLogger(__name__)


@dataclass
class WeekCache:
    """The digests and records of one run, by (repository, window name, language)."""

    weeks: dict[tuple[str, str, Language], tuple[Digest, list[PullRequest]]] = field(default_factory=dict)


@dataclass(frozen=True)
class Built:
    """The person's digests (one per repository, in order), the subscriptions they were built from, and the
    ones left out with the reason (in the person's language)."""

    digests: tuple[PersonalDigest, ...]
    subscriptions: tuple[Subscription, ...]
    skipped: tuple[tuple[Subscription, str], ...] = ()


class PersonalDigests:
    """Builds personal digests (see the module docstring); built once by :mod:`bot.app`."""

    def __init__(self, *, settings: Settings, channels: Channels, digests: DigestService,
                 subscriptions: Subscriptions, people: People, store: Store) -> None:
        self.settings = settings
        self._channels = channels
        self._digests = digests
        self._subscriptions = subscriptions
        self._people = people
        self._store = store

    async def subscriptions_of(self, person: Person, conversation: str | None) -> tuple[Subscription, ...]:
        """The person's subscriptions: their DM ``conversation``'s and (Slack) their user id's."""
        found: dict[str, Subscription] = {}
        keys = [conversation] if conversation else []
        if person.platform == "slack":
            keys.append(person.user)
        for key in dict.fromkeys(keys):
            for sub in await self._subscriptions.of(Subscriber(person.platform, key)):
                found.setdefault(sub.field, sub)
        return tuple(found.values())

    async def build(self, person: Person, conversation: str | None, window: Window, language: Language, *,
                    now: datetime, cache: WeekCache | None = None, binding: str | None = None) -> Built:
        """The person's digests of ``window`` in ``language`` (``binding``: the channel key whose repository
        is shown when they follow nothing; default their DM's).

        Raises:
            PrhubError: a repository's source could not be read, or no repository to show (no
                subscription and none bound to the conversation).
        """
        cache = cache if cache is not None else WeekCache()
        subs = await self.subscriptions_of(person, conversation)
        by_repo: dict[str, list[Subscription]] = {}
        for sub in subs:
            by_repo.setdefault(sub.repo.lower(), []).append(sub)
        if not by_repo:  # nothing followed: the conversation's repository, every PR
            key = binding or (f"{person.platform}:{conversation}" if conversation else "")
            _, repo = self._channels.resolve(key)
            by_repo[repo.lower()] = [Subscription(repo=repo, filter=Filter())]
        me = await self._people.github(person)
        out: list[PersonalDigest] = []
        skipped: list[tuple[Subscription, str]] = []
        for group in by_repo.values():
            repo = group[0].repo
            owners: CodeOwners | None = None
            usable: list[Subscription] = []
            for sub in group:
                reason = None
                if sub.filter.uses_me and not me:
                    reason = ("需要先告诉我你的 GitHub 账号：发送“我的 GitHub 是 NAME”" if language == "zh" else
                              'tell me your GitHub handle first: say "my GitHub is NAME"')
                elif sub.filter.uses_codeowners and owners is None:
                    try:
                        owners = await cached_codeowners(self._store, self._channels.source_for_repo(repo), repo,
                                                         ttl_s=self.settings.codeowners_ttl_s)
                    except CodeownersError as exc:
                        reason = exc.message(language)
                if reason is None:
                    usable.append(sub)
                else:
                    skipped.append((sub, reason))
            if not usable:
                continue
            digest, prs = await self._week(repo, window, language, now, cache)
            out.append(personal_digest(digest, prs, [s.filter for s in usable], bots=self.settings.bots_of(repo),
                                       me=me, codeowners=owners, now=now))
        return Built(tuple(out), subs, tuple(skipped))

    async def _week(self, repo: str, window: Window, language: Language, now: datetime,
                    cache: WeekCache) -> tuple[Digest, list[PullRequest]]:
        key = (repo.lower(), window.name, language)
        if key not in cache.weeks:
            source = self._channels.source_for_repo(repo)
            try:
                prs = await read_source(source, source.merged_prs, repo, window)
            except PrhubError:
                log.warning("personal digest: %s %s could not be read", repo, window.name)
                raise
            history = await self._digests.earlier_records(source, repo, window)  # core files, as in the digest
            digest = await self._digests.digest(prs, repo=repo, window=window, language=language, now=now,
                                                history=history)
            cache.weeks[key] = (digest, prs)
        return cache.weeks[key]
