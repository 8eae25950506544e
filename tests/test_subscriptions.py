"""Subscriptions on a real Redis (DB 15, a unique key prefix): one record per filter (equal filters are one
subscription), atomic changes, the change log, and both earlier layouts — the first bots' JSON lists and
the one-label records — migrated when the bot starts, so an upgrade loses nothing and repeats nothing."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime

import redis.asyncio as aioredis
from redis_support import REDIS_URL, redis_client, redis_store

from bot.app import open_services
from bot.config import Settings
from bot.filters import Filter, parse_filter
from bot.store import MemoryStore, RedisStore
from bot.subscriptions import (
    CHANGE_LOG_KEY,
    INDEX_KEY,
    LEGACY_INDEX_KEY,
    Subscriber,
    Subscription,
    Subscriptions,
    label_filter,
)

REPO = "verl-project/verl"
ALICE = Subscriber("slack", "D0ALICE")
TEAM = Subscriber("feishu", "oc_team")
CAROL = Subscriber("slack", "C0CAROL")
WHEN = datetime(2026, 4, 2, 9, 30, tzinfo=UTC)


def _texts(subs: tuple[Subscription, ...]) -> list[tuple[str, str]]:
    return [(s.repo, s.filter.text()) for s in subs]


async def _write_first_layout(store: RedisStore) -> None:
    """What the first bots wrote (they used ``set_json`` on these keys)."""
    await store.set_json(LEGACY_INDEX_KEY, ["feishu:oc_team", "slack:D0ALICE"])
    await store.set_json("prhub:sub:slack:D0ALICE", [[REPO, "npu"], [REPO, "trainer"], ["other/repo", "ci"]])
    await store.set_json("prhub:sub:feishu:oc_team", [[REPO, "NPU"]])


async def _write_second_layout(client: aioredis.Redis, prefix: str) -> None:
    """What the one-label bots wrote: a hash per subscriber with ``{repo}|{label}`` fields, and the index set."""
    await client.hset(f"{prefix}prhub:subscriptions:slack:C0CAROL", mapping={
        f"{REPO}|megatron": json.dumps({"repo": REPO, "label": "megatron", "created_at": WHEN.isoformat(),
                                        "created_by": "U0CAROL"}),
        f"{REPO}|all": json.dumps({"repo": REPO, "label": "all", "created_at": None, "created_by": None}),
    })
    await client.sadd(f"{prefix}prhub:subscribers", "slack:C0CAROL")


async def test_both_earlier_layouts_are_migrated_when_the_bot_starts(verl_settings: Settings) -> None:
    prefix = f"test-subs-{uuid.uuid4().hex[:12]}:"
    async with redis_store(prefix) as store:
        client = await redis_client()
        try:
            await _write_first_layout(store)
            await _write_second_layout(client, prefix)
            settings = verl_settings.model_copy(update={"redis_url": REDIS_URL, "redis_key_prefix": prefix})
            async with open_services(settings, store="redis") as services:  # what prhub serve / alerts / push open
                found = await services.subscriptions.all()
            assert {who: _texts(subs) for who, subs in found.items()} == {
                TEAM: [(REPO, "label:npu")],
                CAROL: [(REPO, "label:all"), (REPO, "label:megatron")],  # a label named "all" stays a label
                ALICE: [("other/repo", "label:ci"), (REPO, "label:npu"), (REPO, "label:trainer")],
            }
            megatron = next(s for s in found[CAROL] if s.filter == label_filter("megatron"))
            assert (megatron.created_by, megatron.created_at) == ("U0CAROL", WHEN)  # who and when are kept
            assert await store.get_json(LEGACY_INDEX_KEY) is None
            assert await store.get_json("prhub:sub:slack:D0ALICE") is None
            fields = sorted(k.decode() for k in await client.hkeys(f"{prefix}prhub:subscriptions:slack:C0CAROL"))
            assert fields == [f"{REPO.lower()}|label:all", f"{REPO.lower()}|label:megatron"]  # rewritten, not copied
            assert await store.index_members(INDEX_KEY) == ["feishu:oc_team", "slack:C0CAROL", "slack:D0ALICE"]

            await Subscriptions(store).remove(ALICE, REPO, parse_filter("trainer"))  # unsubscribed after upgrading
            async with open_services(settings, store="redis") as services:  # … stays so after the next start
                assert _texts(await services.subscriptions.of(ALICE)) == [("other/repo", "label:ci"),
                                                                           (REPO, "label:npu")]
                assert await services.subscriptions.migrate() == 0
        finally:
            await client.aclose()


async def test_migrating_twice_or_on_two_replicas_adds_nothing_twice() -> None:
    async with redis_store() as store:
        await _write_first_layout(store)
        client = await redis_client()
        try:
            await _write_second_layout(client, store.key_prefix)
            other = RedisStore(client, key_prefix=store.key_prefix)
            moved = await asyncio.gather(Subscriptions(store).migrate(), Subscriptions(other).migrate())
        finally:
            await client.aclose()
        assert sum(moved) >= 6
        assert len(await Subscriptions(store).of(ALICE)) == 3
        assert len(await Subscriptions(store).of(TEAM)) == 1
        assert len(await Subscriptions(store).of(CAROL)) == 2


async def test_changes_at_the_same_instant_lose_nothing() -> None:
    """Two replicas subscribe and unsubscribe 40 filters at once: every change lands (no read-modify-write)."""
    filters = [parse_filter(f"label-{n} -ci") for n in range(40)]
    async with redis_store() as store:
        client = aioredis.Redis.from_url(REDIS_URL)
        try:
            replicas = [Subscriptions(store), Subscriptions(RedisStore(client, key_prefix=store.key_prefix))]
            added = await asyncio.gather(*(replicas[n % 2].add(ALICE, REPO, flt, by="U0ALICE")
                                           for n, flt in enumerate(filters)))
            assert all(added)
            assert {s.filter for s in await replicas[0].of(ALICE)} == set(filters)
            assert await store.index_members(INDEX_KEY) == [ALICE.key]
            again = await asyncio.gather(*(replicas[n % 2].add(ALICE, REPO, flt) for n, flt in enumerate(filters)))
            assert not any(again)
            removed = await asyncio.gather(*(replicas[n % 2].remove(ALICE, REPO, flt)
                                             for n, flt in enumerate(filters)))
            assert all(removed)
            assert await replicas[1].of(ALICE) == ()
            assert await store.index_members(INDEX_KEY) == []  # the last one out leaves the index
            log = await replicas[0].changes()
            assert len(log) == 80  # 40 in, 40 out; the repeated adds changed nothing and logged nothing
            assert sorted(c.action for c in log) == ["subscribe"] * 40 + ["unsubscribe"] * 40
        finally:
            await client.aclose()


async def test_equal_filters_are_one_subscription_and_records_read_fields_they_do_not_know() -> None:
    async with redis_store() as store:
        subs = Subscriptions(store)
        assert await subs.add(ALICE, "Verl-Project/Verl", parse_filter("npu rollout -ci"), by="U0ALICE")
        assert not await subs.add(ALICE, REPO, parse_filter("rollout 和 NPU 排除 ci"))  # the same, spelled otherwise
        [record] = await subs.of(ALICE)
        assert (record.repo, record.created_by) == ("Verl-Project/Verl", "U0ALICE")
        assert record.filter == Filter.model_validate(record.filter.model_dump(mode="json"))
        later = {**record.model_dump(mode="json"), "muted_until": "2027-01-01"}  # a later version's field
        await store.put_record(f"prhub:subscriptions:{ALICE.platform}:{ALICE.id}", record.field, later,
                               index=INDEX_KEY, member=ALICE.key, replace=True)
        [read] = await subs.of(ALICE)
        assert read.filter == parse_filter("npu rollout -ci")
        assert await subs.remove(ALICE, REPO, parse_filter("-label:ci label:rollout,npu"))


async def test_the_change_log_keeps_who_when_and_what_and_is_capped() -> None:
    async with redis_store() as store:
        subs = Subscriptions(store)
        await subs.add(TEAM, REPO, parse_filter("npu"), by="ou_alice", now=WHEN)
        await subs.remove_all(TEAM, by="ou_bob", now=WHEN)
        [first, second] = await subs.changes()
        assert (first.at, first.by, first.action, first.subscriber, first.filter) == (
            WHEN, "ou_alice", "subscribe", "feishu:oc_team", "label:npu")
        assert (second.by, second.action, second.via) == ("ou_bob", "unsubscribe", "unsubscribe all")
        for n in range(5):
            await store.append_log(CHANGE_LOG_KEY, {"n": n}, max_len=3)
        assert await store.read_log(CHANGE_LOG_KEY) == [{"n": 2}, {"n": 3}, {"n": 4}]
        assert await store.read_log(CHANGE_LOG_KEY, limit=2) == [{"n": 3}, {"n": 4}]


async def test_the_memory_store_keeps_them_the_same_way() -> None:
    subs = Subscriptions(MemoryStore())
    assert await subs.add(TEAM, REPO, parse_filter("npu"))
    assert not await subs.add(TEAM, REPO, parse_filter("label:NPU"))
    assert [w.key for w in await subs.all()] == ["feishu:oc_team"]
    assert await subs.remove(TEAM, REPO, parse_filter("npu"))
    assert not await subs.remove(TEAM, REPO, parse_filter("npu"))
    assert await subs.all() == {}
    assert [c.action for c in await subs.changes()] == ["subscribe", "unsubscribe"]


async def test_every_subscriber_is_read_in_one_round_trip() -> None:
    from redis_support import redis_store

    from bot.filters import parse_filter
    from bot.subscriptions import Subscriber, Subscriptions

    async with redis_store() as store:
        subs = Subscriptions(store)
        for n in range(30):
            await subs.add(Subscriber("slack", f"C{n:03d}"), "o/r", parse_filter("npu"), by="U1")
        calls: list[str] = []
        original = store._client.hgetall

        async def counted(*args: object, **kwargs: object) -> object:  # a lone HGETALL is one round trip
            calls.append(str(args[0]))
            return await original(*args, **kwargs)

        store._client.hgetall = counted  # type: ignore[method-assign]
        every = await subs.all()
        assert len(every) == 30
        assert calls == []  # read in a pipeline, not one HGETALL per subscriber
