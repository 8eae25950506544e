"""Alert batching: at most one message per window to a subscriber, quiet hours held until morning.

A pure component: the time is passed in, the state is a frozen, JSON-serialisable value
(:class:`Queue`, one per subscriber), and every step returns the next state. The caller (the
alert poller) keeps the queue where it survives restarts (Redis) and sends what :func:`take`
gives it::

    queue = add(queue, [Item(key="owner/name#6046", arrived_at=now, payload=…)])   # new matches
    queue, batch = take(queue, policy, now)         # a Batch when one is due, else None
    ... send batch.items as ONE message, with batch.key as the idempotency key ...
    queue = sent(queue, batch.key, now)             # or failed(queue, batch.key): items go back

Rules (:class:`Policy`):

- a batch is due ``window`` after the first item still pending arrived, and never sooner than
  ``window`` after the previous message: so a burst of 30 PRs within a minute is one message,
  and a subscriber gets at most one message per window;
- a due time inside the quiet hours (in the person's time zone) moves to the end of them; a
  batch already due is not sent while it is quiet. Everything held overnight goes out as one
  message in the morning;
- every item is sent once: an item whose ``key`` is pending, in flight or among the last
  :data:`RECENT_KEYS` sent is not added again (a poll's overlap re-reads PRs);
- a batch taken and not confirmed (the process died, or is sending now) stays *in flight*:
  :func:`take` gives the same batch, with the same key, again — nothing is lost; a platform
  that honours the key (Feishu's ``uuid``) does not show it twice, others can repeat it once.

Concurrency: the functions are pure; two replicas sharing one queue must serialise their
``take`` (a Redis lock or ``WATCH``/``MULTI`` around read–take–write).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, time, timedelta
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from bot.digest.window import zone
from bot.errors import WindowError

__all__ = ["RECENT_KEYS", "Batch", "Item", "Policy", "Queue", "QuietHours", "add", "due_at", "failed", "sent", "take"]

RECENT_KEYS = 2000
"""How many sent item keys a queue remembers to refuse re-arrivals (a few weeks of alerts)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QuietHours(_Frozen):
    """Local hours ``[start, end)`` in ``timezone`` when nothing is sent (``22:00``–``08:00`` crosses
    midnight). ``timezone`` is the person's (Slack ``users.info`` ``tz``), else the channel's.

    Raises:
        pydantic.ValidationError: ``start == end``, or an unknown time zone.
    """

    start: time
    end: time
    timezone: str

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            zone(value)
        except WindowError as exc:
            raise ValueError(str(exc)) from exc
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> QuietHours:
        if self.start == self.end:
            raise ValueError("quiet hours must start and end at different times")
        return self

    @classmethod
    def parse(cls, text: str, timezone: str) -> QuietHours:
        """``"22:00-08:00"`` (also ``22-8``, ``22:00–08:00``, ``22:00~08:00``) in ``timezone``.

        Raises:
            ValueError: not two ``HH[:MM]`` times (the message shows the form).
        """
        parts = [p.strip() for p in text.replace("–", "-").replace("~", "-").replace("到", "-").split("-")]
        if len(parts) != 2:
            raise ValueError(f"quiet hours {text!r}: expected HH:MM-HH:MM, e.g. 22:00-08:00")
        times: list[time] = []
        for part in parts:
            hour, _, minute = part.partition(":")
            if not hour.isdigit() or (minute and not minute.isdigit()) or int(hour) > 23 or int(minute or 0) > 59:
                raise ValueError(f"quiet hours {text!r}: expected HH:MM-HH:MM, e.g. 22:00-08:00")
            times.append(time(int(hour), int(minute or 0)))
        return cls(start=times[0], end=times[1], timezone=timezone)

    def is_quiet(self, at: datetime) -> bool:
        """Whether the instant ``at`` (aware) falls in the quiet hours."""
        local = at.astimezone(zone(self.timezone)).time().replace(tzinfo=None)
        if self.start < self.end:
            return self.start <= local < self.end
        return local >= self.start or local < self.end

    def end_after(self, at: datetime) -> datetime:
        """The first end of the quiet hours after the instant ``at`` (aware, in ``timezone``)."""
        tz = zone(self.timezone)
        day = at.astimezone(tz).date()
        for offset in range(3):
            moment = datetime.combine(day + timedelta(days=offset), self.end, tzinfo=tz)
            if moment > at:
                return moment
        raise AssertionError("unreachable: an end time comes within two days")  # pragma: no cover


class Policy(_Frozen):
    """How one subscriber's alerts are batched: ``window`` (at most one message per window;
    ``0`` sends at the next :func:`take`) and the optional ``quiet`` hours."""

    window: timedelta = Field(default=timedelta(minutes=10), ge=timedelta(0))
    quiet: QuietHours | None = None


class Item(_Frozen):
    """One thing to tell the subscriber: ``key`` is unique per subscriber (``owner/name#6046``);
    ``payload`` is what the renderer needs (JSON values: the PR as the digest shows it, why it matched)."""

    key: str = Field(min_length=1)
    arrived_at: AwareDatetime
    payload: dict[str, Any] = Field(default_factory=dict)


class Batch(_Frozen):
    """One message: every item that was pending when it was taken, in arrival order.
    ``key`` (``subscriber#seq``) is stable across retries: the idempotency key of the send."""

    key: str
    subscriber: str
    seq: int = Field(ge=1)
    items: tuple[Item, ...]
    taken_at: AwareDatetime


class Queue(_Frozen):
    """One subscriber's batching state (``platform:id``); ``Queue.model_validate_json(q.model_dump_json()) == q``."""

    subscriber: str
    pending: tuple[Item, ...] = ()
    in_flight: Batch | None = None
    last_sent_at: AwareDatetime | None = None
    seq: int = Field(default=0, ge=0)
    recent: tuple[str, ...] = ()
    """Keys of the items sent last (oldest first, at most :data:`RECENT_KEYS`)."""


def add(queue: Queue, items: Iterable[Item]) -> Queue:
    """``queue`` with ``items`` pending, in arrival order; an item whose key is pending, in flight
    or recently sent is left out (so re-reading a PR never alerts it twice)."""
    known = {i.key for i in queue.pending} | set(queue.recent)
    if queue.in_flight is not None:
        known |= {i.key for i in queue.in_flight.items}
    fresh: list[Item] = []
    for item in items:
        if item.key not in known:
            known.add(item.key)
            fresh.append(item)
    if not fresh:
        return queue
    pending = sorted((*queue.pending, *fresh), key=lambda i: i.arrived_at)
    return queue.model_copy(update={"pending": tuple(pending)})


def due_at(queue: Queue, policy: Policy) -> datetime | None:
    """When the next message may be sent: the in-flight batch's ``taken_at`` (retry now), else
    ``window`` after the first pending arrival and after the last message, moved out of the quiet
    hours; ``None`` when nothing waits."""
    if queue.in_flight is not None:
        return queue.in_flight.taken_at
    if not queue.pending:
        return None
    due = min(i.arrived_at for i in queue.pending) + policy.window
    if queue.last_sent_at is not None:
        due = max(due, queue.last_sent_at + policy.window)
    if policy.quiet is not None and policy.quiet.is_quiet(due):
        due = policy.quiet.end_after(due)
    return due


def take(queue: Queue, policy: Policy, now: datetime) -> tuple[Queue, Batch | None]:
    """The batch to send at ``now``, if one is due (see the module docstring), and the queue after it.

    An unconfirmed in-flight batch is given again (same key). Otherwise a batch is due when
    ``now >= due_at`` and ``now`` is outside the quiet hours; it holds every pending item.
    """
    if queue.in_flight is not None:
        return queue, queue.in_flight
    due = due_at(queue, policy)
    if due is None or now < due or (policy.quiet is not None and policy.quiet.is_quiet(now)):
        return queue, None
    seq = queue.seq + 1
    batch = Batch(key=f"{queue.subscriber}#{seq}", subscriber=queue.subscriber, seq=seq, items=queue.pending,
                  taken_at=now)
    return queue.model_copy(update={"pending": (), "in_flight": batch, "seq": seq}), batch


def sent(queue: Queue, batch_key: str, now: datetime) -> Queue:
    """The queue after the batch ``batch_key`` was delivered at ``now``; a key that is not the
    in-flight batch (already confirmed) changes nothing."""
    batch = queue.in_flight
    if batch is None or batch.key != batch_key:
        return queue
    recent = (*queue.recent, *(i.key for i in batch.items))[-RECENT_KEYS:]
    return queue.model_copy(update={"in_flight": None, "last_sent_at": now, "recent": recent})


def failed(queue: Queue, batch_key: str) -> Queue:
    """The queue after the platform refused the batch ``batch_key``: its items are pending again
    (before anything that arrived since), to be sent at the next due time."""
    batch = queue.in_flight
    if batch is None or batch.key != batch_key:
        return queue
    pending = sorted((*batch.items, *queue.pending), key=lambda i: i.arrived_at)
    return queue.model_copy(update={"in_flight": None, "pending": tuple(pending)})
