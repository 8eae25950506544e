"""What the bot remembers about a person: their GitHub handle, their direct-message conversation, and
whether they want "my area this week" every week.

A person is a platform user (``slack:U…``, ``feishu:ou_…``). Each fact is its own field of the
person's hash, written whole (never read, modified and written back)::

    prhub:people:{platform}:{user}   hash: "github" -> {"handle", "at"}
                                           "dm"     -> {"conversation", "at"}   (their DM with the bot)
                                           "weekly" -> {"conversation", "language", "at"}  (opted in)
    prhub:people                     set: "{platform}:{user}" of every person with a fact

Used by the chat core (``我的 GitHub 是 NAME``, ``每周给我发我的周报``), the alerts (``path:@me``
resolves through the handle of whoever made the subscription) and the personal-digest job.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import AwareDatetime, BaseModel, ConfigDict, ValidationError

from bot.models import Language
from bot.store import Store, cache_key

__all__ = ["INDEX_KEY", "People", "Person", "WeeklyOptIn"]

INDEX_KEY = cache_key("people")


@dataclass(frozen=True, slots=True, order=True)
class Person:
    """A platform user: ``platform`` (``slack``, ``feishu``) and the ``user`` id (``U…``, ``ou_…``)."""

    platform: str
    user: str

    @property
    def key(self) -> str:
        """``platform:user``."""
        return f"{self.platform}:{self.user}"


class WeeklyOptIn(BaseModel):
    """A person's "send me my weekly digest": where it goes (their DM ``conversation``; on Slack the user id
    opens one), in which ``language``, since ``at``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    conversation: str
    language: Language
    at: AwareDatetime


class _Handle(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    handle: str
    at: AwareDatetime


class _Direct(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    conversation: str
    at: AwareDatetime


def _key(person: Person) -> str:
    return cache_key("people", person.platform, person.user)


class People:
    """The people facts in ``store`` (see the module docstring). Store failures propagate."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def _put(self, person: Person, field: str, value: BaseModel) -> None:
        await self._store.put_record(_key(person), field, value.model_dump(mode="json"), index=INDEX_KEY,
                                     member=person.key, replace=True)

    async def _facts(self, person: Person) -> dict[str, object]:
        return await self._store.records(_key(person))

    async def link_github(self, person: Person, handle: str, *, now: datetime | None = None) -> None:
        """Remember ``person``'s GitHub login (``@`` dropped; the last one given wins)."""
        await self._put(person, "github", _Handle(handle=handle.strip().lstrip("@"), at=now or datetime.now(UTC)))

    async def github(self, person: Person) -> str | None:
        """``person``'s linked GitHub login, or ``None``."""
        raw = (await self._facts(person)).get("github")
        try:
            return _Handle.model_validate(raw).handle if raw is not None else None
        except ValidationError:
            return None

    async def remember_direct(self, person: Person, conversation: str, *, now: datetime | None = None) -> None:
        """Remember that ``conversation`` is ``person``'s direct-message conversation with the bot."""
        facts = await self._facts(person)
        old = facts.get("dm")
        if isinstance(old, dict) and old.get("conversation") == conversation:
            return  # known: no write
        await self._put(person, "dm", _Direct(conversation=conversation, at=now or datetime.now(UTC)))

    async def direct(self, person: Person) -> str | None:
        """``person``'s direct-message conversation with the bot, when it was seen."""
        raw = (await self._facts(person)).get("dm")
        try:
            return _Direct.model_validate(raw).conversation if raw is not None else None
        except ValidationError:
            return None

    async def opt_in(self, person: Person, conversation: str, language: Language, *,
                     now: datetime | None = None) -> bool:
        """Send ``person`` their weekly digest in ``conversation``; ``False`` when they had opted in already
        (the conversation and language are updated all the same)."""
        before = await self.weekly(person)
        await self._put(person, "weekly", WeeklyOptIn(conversation=conversation, language=language,
                                                      at=now or datetime.now(UTC)))
        return before is None

    async def opt_out(self, person: Person) -> bool:
        """Stop ``person``'s weekly digest; ``False`` when there was none."""
        return await self._store.delete_record(_key(person), "weekly", index=INDEX_KEY, member=person.key)

    async def weekly(self, person: Person) -> WeeklyOptIn | None:
        """``person``'s opt-in, or ``None``."""
        raw = (await self._facts(person)).get("weekly")
        try:
            return WeeklyOptIn.model_validate(raw) if raw is not None else None
        except ValidationError:
            return None

    async def opted_in(self) -> dict[Person, WeeklyOptIn]:
        """Every person who wants their weekly digest, in key order."""
        out: dict[Person, WeeklyOptIn] = {}
        for member in await self._store.index_members(INDEX_KEY):
            platform, _, user = member.partition(":")
            person = Person(platform, user)
            if (weekly := await self.weekly(person)) is not None:
                out[person] = weekly
        return out
