"""Subscriptions on a real Redis (DB 15, a unique key prefix): one record each, atomic changes, and the old
layout (a JSON list per subscriber) migrated when the bot starts, so an upgrade loses nothing."""

from __future__ import annotations

import asyncio
import uuid

import redis.asyncio as aioredis
from redis_support import REDIS_URL, redis_client, redis_store

from bot.app import open_services
from bot.config import Settings
from bot.store import MemoryStore, RedisStore
from bot.subscriptions import INDEX_KEY, LEGACY_INDEX_KEY, Subscriber, Subscription, Subscriptions

REPO = "verl-project/verl"
ALICE = Subscriber("slack", "D0ALICE")
TEAM = Subscriber("feishu", "oc_team")


async def _write_old_layout(store: RedisStore) -> None:
    """What the bots of the old layout wrote (they used ``set_json`` on these keys)."""
    await store.set_json(LEGACY_INDEX_KEY, ["feishu:oc_team", "slack:D0ALICE"])
    await store.set_json("prhub:sub:slack:D0ALICE", [[REPO, "npu"], [REPO, "trainer"], ["other/repo", "ci"]])
    await store.set_json("prhub:sub:feishu:oc_team", [[REPO, "NPU"]])


async def test_the_old_layout_is_migrated_when_the_bot_starts(verl_settings: Settings) -> None:
    prefix = f"test-subs-{uuid.uuid4().hex[:12]}:"
    async with redis_store(prefix) as store:
        await _write_old_layout(store)
        settings = verl_settings.model_copy(update={"redis_url": REDIS_URL, "redis_key_prefix": prefix})
        async with open_services(settings, store="redis") as services:  # what prhub serve / alerts / push open
            found = await services.subscriptions.all()
        assert {who: [(s.repo, s.label) for s in subs] for who, subs in found.items()} == {
            TEAM: [(REPO, "npu")],
            ALICE: [("other/repo", "ci"), (REPO, "npu"), (REPO, "trainer")],
        }
        assert await store.get_json(LEGACY_INDEX_KEY) is None
        assert await store.get_json("prhub:sub:slack:D0ALICE") is None
        assert await store.index_members(INDEX_KEY) == ["feishu:oc_team", "slack:D0ALICE"]

        await Subscriptions(store).remove(ALICE, REPO, "trainer")  # unsubscribed after the upgrade …
        async with open_services(settings, store="redis") as services:  # … stays so after the next start
            assert [s.label for s in await services.subscriptions.of(ALICE)] == ["ci", "npu"]
            assert await services.subscriptions.migrate_legacy() == 0


async def test_migrating_twice_or_on_two_replicas_adds_nothing_twice() -> None:
    async with redis_store() as store:
        await _write_old_layout(store)
        client = await redis_client()
        try:
            other = RedisStore(client, key_prefix=store.key_prefix)
            moved = await asyncio.gather(Subscriptions(store).migrate_legacy(), Subscriptions(other).migrate_legacy())
        finally:
            await client.aclose()
        assert sum(moved) >= 4
        assert len(await Subscriptions(store).of(ALICE)) == 3
        assert len(await Subscriptions(store).of(TEAM)) == 1


async def test_changes_at_the_same_instant_lose_nothing() -> None:
    """Two replicas subscribe and unsubscribe 40 labels at once: every change lands (no read-modify-write)."""
    labels = [f"label-{n}" for n in range(40)]
    async with redis_store() as store:
        client = aioredis.Redis.from_url(REDIS_URL)
        try:
            replicas = [Subscriptions(store), Subscriptions(RedisStore(client, key_prefix=store.key_prefix))]
            added = await asyncio.gather(*(replicas[n % 2].add(ALICE, REPO, label, by="U0ALICE")
                                           for n, label in enumerate(labels)))
            assert all(added)
            assert sorted(s.label for s in await replicas[0].of(ALICE)) == sorted(labels)
            assert await store.index_members(INDEX_KEY) == [ALICE.key]
            again = await asyncio.gather(*(replicas[n % 2].add(ALICE, REPO, label) for n, label in enumerate(labels)))
            assert not any(again)
            removed = await asyncio.gather(*(replicas[n % 2].remove(ALICE, REPO, label)
                                             for n, label in enumerate(labels)))
            assert all(removed)
            assert await replicas[1].of(ALICE) == ()
            assert await store.index_members(INDEX_KEY) == []  # the last one out leaves the index
        finally:
            await client.aclose()


async def test_a_record_keeps_who_and_when_and_reads_fields_it_does_not_know() -> None:
    async with redis_store() as store:
        subs = Subscriptions(store)
        assert await subs.add(ALICE, "Verl-Project/Verl", "NPU", by="U0ALICE")
        assert not await subs.add(ALICE, REPO, "npu")  # the same subscription, spelled otherwise
        [record] = await subs.of(ALICE)
        assert (record.repo, record.label, record.created_by) == ("Verl-Project/Verl", "npu", "U0ALICE")
        assert record.created_at is not None
        later = {**record.model_dump(mode="json"), "exclude_authors": ["dependabot"]}  # a later version's field
        await store.put_record(f"prhub:subscriptions:{ALICE.platform}:{ALICE.id}", record.field, later,
                               index=INDEX_KEY, member=ALICE.key, replace=True)
        [read] = await subs.of(ALICE)
        assert isinstance(read, Subscription)
        assert read.label == "npu"


async def test_the_memory_store_keeps_them_the_same_way() -> None:
    subs = Subscriptions(MemoryStore())
    assert await subs.add(TEAM, REPO, "npu")
    assert not await subs.add(TEAM, REPO, "npu")
    assert [w.key for w in await subs.all()] == ["feishu:oc_team"]
    assert await subs.remove(TEAM, REPO, "npu")
    assert not await subs.remove(TEAM, REPO, "npu")
    assert await subs.all() == {}
