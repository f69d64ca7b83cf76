"""Answers kept in the response cache are written with the records made of them, and never lost."""

from __future__ import annotations

import pytest

from compendium.storage.factory import open_store
from compendium.storage.records import CacheEntry, Extract
from compendium.storage.response_cache import StoreResponseCache, answers_with_records


@pytest.fixture
async def store(tmp_path):
    store = await open_store(f"sqlite:///{tmp_path / 'store.db'}", "kb")
    yield store
    await store.close()


async def test_an_answer_is_written_in_the_transaction_of_what_was_made_of_it(store):
    cache = StoreResponseCache(store)
    async with answers_with_records(store) as held:
        await cache.put("llm", {"k1": {"content": "reply"}})
        assert await cache.get(["k1"]) == {}  # not on its own: with the records, below
        async with store.transaction():
            await store.upsert([Extract(id="c1", chunk_id="c1"), *held])
        held.clear()
    assert await cache.get(["k1"]) == {"k1": {"content": "reply"}}
    assert [e.id for e in await store.get(Extract, ["c1"])] == ["c1"]


async def test_an_answer_not_yet_written_when_the_block_fails_is_written_then(store):
    cache = StoreResponseCache(store)
    with pytest.raises(RuntimeError):
        async with answers_with_records(store):
            await cache.put("llm", {"k2": {"content": "paid for"}})
            raise RuntimeError("splitting the reply failed")
    assert await cache.get(["k2"]) == {"k2": {"content": "paid for"}}


async def test_outside_a_block_an_answer_is_written_at_once(store):
    cache = StoreResponseCache(store)
    await cache.put("llm", {"k3": {"content": "now"}})
    assert (await store.get_one(CacheEntry, "k3")).value == {"content": "now"}
