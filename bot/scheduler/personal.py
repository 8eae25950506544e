"""The weekly personal digest ("my area this week"): to every person who opted in, in their time zone.

A person opts in in chat (``每周给我发我的周报`` / ``send me my weekly digest``; :mod:`bot.people`).
:meth:`PersonalDigestJob.run` — the scheduler runs it every :data:`EVERY_S` seconds — looks at
each of them: the latest fire of ``personal_digest_at`` (default ``mon 09:00``) in the person's
time zone (Slack ``users.info``; Feishu gives none: the zone of their conversation's channel
section, else the global ``timezone``) within ``push_grace_s``; the week before that fire
(``mon 09:00`` of 2026-W17 sends 2026-W16) is built by :class:`bot.personal.PersonalDigests`
over the week's digest and records (built once per repository, window and language for every
person of the run) and sent to their DM.

Exactly once per (person, week), as the weekly push: ``prhub:personal:done:…`` after the post,
``prhub:personal:lock:…`` while building it (released when it fails, so the next run tries again;
the post carries the done key as its idempotency key).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from redis.exceptions import RedisError

from bot.claims import PUSH_LOCK_TTL_S, Claims, personal_digest_keys
from bot.config import Settings
from bot.delivery import Deliverers, Place, post_reply
from bot.errors import PrhubError
from bot.models import Window
from bot.people import People, Person, WeeklyOptIn
from bot.personal import PersonalDigests, WeekCache
from bot.replies import MyDigestReply
from bot.scheduler.schedule import cron_trigger, latest_fire, week_before

__all__ = ["EVERY_S", "PersonalDigestJob", "PersonalOutcome"]

log = logging.getLogger(__name__)

EVERY_S = 10 * 60
"""How often the job looks for people whose digest time has come (seconds)."""


@dataclass(frozen=True, slots=True)
class PersonalOutcome:
    """What the job did for one person: ``sent`` (``repos`` digests), ``already_done``, ``busy``, ``failed``."""

    person: str
    week: str
    status: str
    repos: int = 0


class PersonalDigestJob:
    """The weekly personal digests (see the module docstring); built by :mod:`bot.app`."""

    def __init__(self, *, settings: Settings, claims: Claims, people: People, personal: PersonalDigests,
                 deliverers: Deliverers, clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.settings = settings
        self._claims = claims
        self._people = people
        self._personal = personal
        self._deliverers = deliverers
        self._clock = clock

    async def timezone_of(self, person: Person, optin: WeeklyOptIn) -> str:
        """The person's IANA zone: the platform's (Slack), else their conversation's channel zone."""
        fallback = self.settings.channel(f"{person.platform}:{optin.conversation}").timezone or self.settings.timezone
        try:
            deliverer, _ = self._deliverers.for_channel(f"{person.platform}:{optin.conversation}")
        except PrhubError:
            return fallback
        return await deliverer.person_timezone(person.user) or fallback

    async def run(self) -> list[PersonalOutcome]:
        """Send every due personal digest once (one person's failure is logged; the others go on)."""
        now = self._clock()
        grace = timedelta(seconds=max(self.settings.push_grace_s, 60))
        cache = WeekCache()
        outcomes: list[PersonalOutcome] = []
        for person, optin in (await self._people.opted_in()).items():
            try:
                tz = await self.timezone_of(person, optin)
                fire = latest_fire(cron_trigger(self.settings.personal_digest_at, tz), now, grace)
                if fire is None:
                    continue
                outcomes.append(await self._send(person, optin, week_before(fire, tz), cache))
            except (PrhubError, RedisError) as exc:
                log.error("the personal digest of %s failed (tried again at the next run): %s", person.key, exc)
                outcomes.append(PersonalOutcome(person.key, "", "failed"))
        return outcomes

    async def _send(self, person: Person, optin: WeeklyOptIn, window: Window, cache: WeekCache) -> PersonalOutcome:
        week = window.name
        done, lock = personal_digest_keys(person.platform, person.user, week)
        if await self._claims.is_done(done):
            return PersonalOutcome(person.key, week, "already_done")
        if not await self._claims.lock(lock, PUSH_LOCK_TTL_S):
            return PersonalOutcome(person.key, week, "busy")
        try:
            built = await self._personal.build(person, optin.conversation, window, optin.language,
                                               now=self._clock(), cache=cache)
            deliverer, target = self._deliverers.for_channel(f"{person.platform}:{optin.conversation}")
            note = "\n".join(f"{s.filter.text()}: {why}" for s, why in built.skipped)
            await post_reply(deliverer, self._claims, Place(target), MyDigestReply(built.digests, optin.language,
                                                                                   message=note), key=done)
            await self._claims.take(done)
        except BaseException:
            await self._claims.release(lock)
            raise
        log.info("sent %s's personal digest of %s (%d repositories)", person.key, week, len(built.digests))
        return PersonalOutcome(person.key, week, "sent", len(built.digests))

