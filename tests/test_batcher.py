"""The alert batcher: injected time, state kept between steps as JSON (here also in the real Redis)."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from pydantic import ValidationError
from redis_support import redis_store

from bot.batcher import RECENT_KEYS, Batch, Item, Policy, Queue, QuietHours, add, due_at, failed, sent, take
from bot.filters import Candidate, match, parse_filter
from bot.models import FileChange, PullRequest

WHO = "slack:U0ALICE"
T0 = datetime(2026, 4, 15, 2, 0, tzinfo=UTC)  # 10:00 in Shanghai
TEN = Policy(window=timedelta(minutes=10))


def item(n: int, at: datetime) -> Item:
    return Item(key=f"acme/rocket#{n}", arrived_at=at, payload={"number": n})


def restart(queue: Queue) -> Queue:
    """What a restart does to the state: it is read back from its JSON."""
    return Queue.model_validate_json(queue.model_dump_json())


def record(n: int, *, npu: bool) -> PullRequest:
    path = "verl/npu/ops.py" if npu else "docs/readme.md"
    return PullRequest(repo="acme/rocket", number=n, title=f"fix: change {n}", author=f"dev-{n % 7}",
                       merged_at=T0 + timedelta(seconds=n), files=(FileChange(path=path, status="modified"),))


def test_thirty_prs_in_a_minute_are_one_message_listing_all_that_match() -> None:
    flt = parse_filter("path:verl/npu/** -label:ci")
    queue = Queue(subscriber=WHO)
    arrivals = [record(n, npu=n % 4 != 0) for n in range(1, 41)]  # 30 match, 10 do not
    matching = [pr.number for pr in arrivals if match(flt, Candidate.of(pr))]
    assert len(matching) == 30
    for pr in arrivals:  # one poll after another within the first minute, with a restart after each
        at = T0 + timedelta(seconds=pr.number * 1.5)
        if match(flt, Candidate.of(pr)):
            queue = restart(add(queue, [item(pr.number, at)]))
        queue, batch = take(queue, TEN, at)
        assert batch is None
    assert due_at(queue, TEN) == T0 + timedelta(seconds=1.5) + timedelta(minutes=10)
    queue, batch = take(queue, TEN, T0 + timedelta(minutes=9, seconds=59))
    assert batch is None
    queue, batch = take(restart(queue), TEN, T0 + timedelta(minutes=10, seconds=5))
    assert batch is not None
    assert [i.payload["number"] for i in batch.items] == matching
    assert batch.key == f"{WHO}#1"
    queue = restart(sent(queue, batch.key, T0 + timedelta(minutes=10, seconds=6)))
    assert take(queue, TEN, T0 + timedelta(hours=5)) == (queue, None)  # nothing is left, nothing repeats
    assert queue.pending == ()
    assert queue.in_flight is None


def test_at_most_one_message_per_window() -> None:
    queue = add(Queue(subscriber=WHO), [item(1, T0)])
    queue, batch = take(queue, TEN, T0 + timedelta(minutes=10))
    assert batch is not None
    queue = sent(queue, batch.key, T0 + timedelta(minutes=10))
    queue = add(queue, [item(2, T0 + timedelta(minutes=11)), item(3, T0 + timedelta(minutes=25))])
    assert due_at(queue, TEN) == T0 + timedelta(minutes=21)
    queue, batch = take(queue, TEN, T0 + timedelta(minutes=30))
    assert batch is not None
    assert [i.key for i in batch.items] == ["acme/rocket#2", "acme/rocket#3"]
    queue = sent(queue, batch.key, T0 + timedelta(minutes=30))
    late = add(queue, [item(4, T0 + timedelta(minutes=31))])
    assert due_at(late, TEN) == T0 + timedelta(minutes=41)  # window after the arrival, and after the last message


def test_a_pr_read_again_is_not_alerted_again() -> None:
    queue = add(Queue(subscriber=WHO), [item(1, T0), item(1, T0), item(2, T0)])
    assert [i.key for i in queue.pending] == ["acme/rocket#1", "acme/rocket#2"]
    queue, batch = take(queue, TEN, T0 + timedelta(minutes=10))
    assert batch is not None
    assert add(queue, [item(1, T0 + timedelta(minutes=11))]) == queue  # in flight
    queue = sent(queue, batch.key, T0 + timedelta(minutes=10))
    assert add(queue, [item(2, T0 + timedelta(hours=1))]) == queue  # recently sent
    assert sent(queue, batch.key, T0 + timedelta(hours=2)) == queue  # confirming twice changes nothing


def test_a_crash_between_take_and_sent_resends_the_same_batch() -> None:
    queue = add(Queue(subscriber=WHO), [item(1, T0), item(2, T0)])
    queue, batch = take(queue, TEN, T0 + timedelta(minutes=10))
    assert batch is not None
    # the process dies here; on restart the same batch, with the same key, is given again
    again, retried = take(restart(queue), TEN, T0 + timedelta(minutes=15))
    assert retried == batch
    queue = add(again, [item(3, T0 + timedelta(minutes=16))])  # arrivals meanwhile wait for the next batch
    queue = sent(queue, batch.key, T0 + timedelta(minutes=16))
    queue, nxt = take(queue, TEN, T0 + timedelta(minutes=26))
    assert nxt is not None
    assert [i.key for i in nxt.items] == ["acme/rocket#3"]
    assert nxt.key == f"{WHO}#2"


def test_a_refused_batch_goes_back_and_loses_nothing() -> None:
    queue = add(Queue(subscriber=WHO), [item(1, T0), item(2, T0)])
    queue, batch = take(queue, TEN, T0 + timedelta(minutes=10))
    assert batch is not None
    queue = add(queue, [item(3, T0 + timedelta(minutes=11))])
    queue = failed(queue, batch.key)
    assert [i.key for i in queue.pending] == ["acme/rocket#1", "acme/rocket#2", "acme/rocket#3"]
    queue, retry = take(queue, TEN, T0 + timedelta(minutes=12))
    assert retry is not None
    assert len(retry.items) == 3
    assert retry.key != batch.key


SHANGHAI_NIGHT = QuietHours(start=time(22, 0), end=time(8, 0), timezone="Asia/Shanghai")


def test_quiet_hours_hold_until_morning_in_the_persons_zone() -> None:
    policy = Policy(window=timedelta(minutes=10), quiet=SHANGHAI_NIGHT)
    evening = datetime(2026, 4, 15, 13, 55, tzinfo=UTC)  # 21:55 in Shanghai
    queue = add(Queue(subscriber=WHO), [item(1, evening)])
    morning = datetime(2026, 4, 16, 0, 0, tzinfo=UTC)  # 08:00 in Shanghai
    assert due_at(queue, policy) == morning
    for hour in range(14, 24):  # polls all night: nothing is sent
        queue = add(queue, [item(hour, datetime(2026, 4, 15, hour, 30, tzinfo=UTC))])
        queue, batch = take(queue, policy, datetime(2026, 4, 15, hour, 31, tzinfo=UTC))
        assert batch is None
    queue, batch = take(queue, policy, morning - timedelta(seconds=1))
    assert batch is None
    queue, batch = take(queue, policy, morning)
    assert batch is not None
    assert len(batch.items) == 11  # everything held overnight, in one message


def test_quiet_hours_follow_the_zone_and_daylight_saving() -> None:
    berlin = QuietHours.parse("22:00-07:00", "Europe/Berlin")
    assert berlin.is_quiet(datetime(2026, 3, 28, 21, 30, tzinfo=UTC))  # 22:30 CET
    assert not berlin.is_quiet(datetime(2026, 3, 29, 6, 30, tzinfo=UTC))  # 08:30 CEST, after the clocks moved
    assert berlin.end_after(datetime(2026, 3, 28, 21, 30, tzinfo=UTC)) == datetime(2026, 3, 29, 5, 0, tzinfo=UTC)
    lunch = QuietHours.parse("12-13", "Asia/Shanghai")  # within one day
    assert lunch.is_quiet(datetime(2026, 4, 15, 4, 30, tzinfo=UTC))
    assert not lunch.is_quiet(datetime(2026, 4, 15, 5, 0, tzinfo=UTC))
    assert lunch.end_after(datetime(2026, 4, 15, 5, 30, tzinfo=UTC)) == datetime(2026, 4, 16, 5, 0, tzinfo=UTC)


def test_bad_quiet_hours_are_refused() -> None:
    with pytest.raises(ValueError, match="HH:MM-HH:MM"):
        QuietHours.parse("late", "Asia/Shanghai")
    with pytest.raises(ValueError, match="HH:MM-HH:MM"):
        QuietHours.parse("25:00-08:00", "Asia/Shanghai")
    with pytest.raises(ValidationError, match="different times"):
        QuietHours.parse("08:00-08:00", "Asia/Shanghai")
    with pytest.raises(ValidationError, match="unknown time zone"):
        QuietHours.parse("22:00-08:00", "Mars/Olympus")


def test_window_zero_sends_at_the_next_take_and_recent_keys_are_bounded() -> None:
    now = Policy(window=timedelta(0))
    queue = Queue(subscriber=WHO)
    for n in range(RECENT_KEYS + 5):
        queue = add(queue, [item(n, T0 + timedelta(seconds=n))])
        queue, batch = take(queue, now, T0 + timedelta(seconds=n))
        assert batch is not None
        queue = sent(queue, batch.key, T0 + timedelta(seconds=n))
    assert len(queue.recent) == RECENT_KEYS
    assert queue.recent[-1] == f"acme/rocket#{RECENT_KEYS + 4}"


async def test_the_state_survives_in_the_real_redis() -> None:
    async with redis_store() as store:
        queue = add(Queue(subscriber=WHO), [item(n, T0 + timedelta(seconds=n)) for n in range(30)])
        queue, batch = take(queue, TEN, T0 + timedelta(minutes=11))
        assert batch is not None
        await store.set_json("batch:" + WHO, queue.model_dump(mode="json"))
        loaded = Queue.model_validate(await store.get_json("batch:" + WHO))
        assert loaded == queue
        assert take(loaded, TEN, T0 + timedelta(minutes=12))[1] == batch
        assert Batch.model_validate_json(batch.model_dump_json()) == batch
