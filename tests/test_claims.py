"""The one claim helper on a real Redis: which delivery is first, and how long each kind of claim lives."""

from __future__ import annotations

import asyncio

import pytest
from redis_support import redis_store

from bot.claims import (
    DONE_TTL_S,
    HANDLING_TTL_S,
    PUSH_LOCK_TTL_S,
    Claims,
    full_report_key,
    pr_answer_key,
    push_keys,
    seen_key,
)
from bot.config import Settings
from bot.store import RedisStore


async def _ttl(store: RedisStore, key: str) -> int:
    return int(await store._client.ttl(store.key_prefix + key))


async def test_a_delivery_is_first_only_when_its_event_and_message_are_new(default_settings: Settings) -> None:
    async with redis_store() as store:
        claims = Claims(store, seen_ttl_s=default_settings.dedup_ttl_s)
        event, message = seen_key("slack", "event", "Ev1"), seen_key("slack", "msg", "C1:1713.0001")
        assert await claims.first_delivery(event, message)
        assert not await claims.first_delivery(event, message)  # a redelivery
        assert not await claims.first_delivery(seen_key("slack", "event", "Ev2"), message)  # app_mention + message
        assert message == "prhub:seen:slack:msg:C1:1713.0001"
        assert await _ttl(store, message) <= HANDLING_TTL_S  # taken while the answer is made
        await claims.answered(event, message)
        assert 12 * 3600 - 60 <= await _ttl(store, message) <= 12 * 3600  # then remembered for the retries


async def test_a_failed_answer_gives_its_delivery_back(default_settings: Settings) -> None:
    async with redis_store() as store:
        claims = Claims(store, seen_ttl_s=default_settings.dedup_ttl_s)
        event = seen_key("slack", "event", "Ev9")
        assert await claims.first_delivery(event)
        await claims.release(event)  # the answer failed
        assert await claims.first_delivery(event)  # the platform's retry is served


async def test_once_only_work_lives_as_long_as_the_push_markers() -> None:
    async with redis_store() as store:
        claims = Claims(store)
        full = full_report_key("slack", "C1", "1713.0001", "2026-W16")
        answer = pr_answer_key("feishu", "oc_1", "om_card", "verl-project/verl", 6046)
        done, lock = push_keys("slack", "C1", "verl-project/verl", "2026-W16")
        for key in (full, answer, done):
            assert await claims.take(key)
            assert not await claims.take(key)
            assert await claims.is_done(key)
            assert DONE_TTL_S - 60 <= await _ttl(store, key) <= DONE_TTL_S
        assert await claims.lock(lock, PUSH_LOCK_TTL_S)
        assert not await claims.lock(lock, PUSH_LOCK_TTL_S)
        assert await _ttl(store, lock) <= PUSH_LOCK_TTL_S
        await claims.release(full, lock)  # a failed piece of work gives its claims back
        assert await claims.take(full)
        assert await claims.lock(lock, PUSH_LOCK_TTL_S)
        assert done == "prhub:push:done:slack:C1:verl-project/verl:2026-W16"  # the key pushes always had


async def test_a_held_lease_is_renewed_while_the_work_runs_and_freed_after() -> None:
    async with redis_store() as store:
        claims = Claims(store)
        async with claims.hold("prhub:push:lock:test", 0.6) as held:
            assert held is not None
            await asyncio.sleep(1.5)  # past two lifetimes: only the renewals keep it
            async with claims.hold("prhub:push:lock:test", 0.6) as other:
                assert other is None  # another replica does not get it
            assert not held.lost
        async with claims.hold("prhub:push:lock:test", 0.6) as again:
            assert again is not None  # released on exit: the next run may take it at once


async def test_a_lease_whose_holder_died_expires_by_itself() -> None:
    async with redis_store() as store:
        lease = await store.lease("prhub:push:lock:dead", 0.3)
        assert lease is not None  # taken, then never renewed (the process was killed)
        assert await store.lease("prhub:push:lock:dead", 0.3) is None
        await asyncio.sleep(0.5)
        assert await store.lease("prhub:push:lock:dead", 0.3) is not None
        assert not await lease.extend(0.3)  # the dead holder's token no longer counts


async def test_of_many_simultaneous_deliveries_with_overlapping_keys_exactly_one_is_first() -> None:
    async with redis_store() as store:
        claims = Claims(store)
        for n in range(20):
            event, message = seen_key("slack", "event", f"EvR{n}"), seen_key("slack", "msg", f"C1:{n}")
            other = seen_key("slack", "event", f"EvR{n}b")  # the message event of the same mention
            wins = await asyncio.gather(*(claims.first_delivery(*keys) for keys in
                                          [(event, message), (event, message), (other, message), (message, event)]))
            assert sum(wins) == 1, (n, wins)
            assert await store.get_json(other) is None  # a loser takes nothing


async def test_a_work_deadline_does_not_count_the_waits_for_pacing() -> None:
    from bot.deadline import WorkDeadline, not_counted

    async with WorkDeadline(0.2) as deadline:
        with not_counted():
            await asyncio.sleep(0.4)  # queued behind other replies: not work
        await asyncio.sleep(0.1)  # work, within the deadline
    assert deadline.waited_s >= 0.4
    with pytest.raises(TimeoutError):
        async with WorkDeadline(0.2):
            await asyncio.sleep(0.4)  # work past the deadline
