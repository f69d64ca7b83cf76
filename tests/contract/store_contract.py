"""The Store contract as mixin test classes; each backend module subclasses them with a `store` fixture."""

from __future__ import annotations

import asyncio
import dataclasses
import random

import numpy as np
import pytest

from compendium.errors import NotFound, StoreError
from compendium.storage.base import Store
from compendium.storage.records import (
    RECORD_TYPES,
    CacheEntry,
    Chunk,
    Document,
    Entity,
    Page,
    Record,
)

DIM = 16  # one dimension for every test: servers fix a vector field's dimension on first write


def unit_vectors(n: int, seed: int, dim: int = DIM) -> np.ndarray:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _sample_value(name: str, annotation: str, kind: str):
    if annotation == "str":
        return f"{kind}-{name}-ü “quoted” \\ 'x'"
    if annotation == "int":
        return 7
    if annotation == "float":
        return 2.5
    if annotation == "bool":
        return True
    if annotation.startswith("list[dict"):
        return [{"name": "Ada", "tags": ["a", "b"], "score": 0.25, "nested": {"n": None}}]
    if annotation.startswith("list"):
        return ["one", "two", "ü"]
    if annotation.startswith("dict"):
        return {"a": 1, "b": [1, 2.5, "x", None, True], "c": {"d": {"e": []}}}
    if annotation == "Any":
        return {"reply": {"text": "t", "tokens": [1, 2, 3]}, "ok": False, "ratio": 0.1}
    raise AssertionError(f"no sample value for {kind}.{name}: {annotation}")


def sample(kind: type[Record], id: str = "sample-1") -> Record:
    """A record of `kind` with every field set away from its default, JSON fields nested."""
    values = {}
    for f in dataclasses.fields(kind):
        if f.name == "id":
            continue
        if f.name == kind.VECTOR:
            values[f.name] = unit_vectors(1, seed=len(kind.KIND))[0]
        else:
            values[f.name] = _sample_value(f.name, str(f.type), kind.KIND)
    return kind(id=id, **values)


def same_record(a: Record, b: Record) -> bool:
    left, right = a.to_dict(), b.to_dict()
    if type(a).VECTOR:
        va, vb = left.pop(type(a).VECTOR), right.pop(type(b).VECTOR)
        if (va is None) != (vb is None):
            return False
        if va is not None and not np.array_equal(va, vb):
            return False
    return type(a) is type(b) and left == right


async def ids_of(store: Store, kind: type[Record], where=None, **kw) -> list[str]:
    return [r.id async for r in store.scan(kind, where, **kw)]


class RoundTripContract:
    async def test_every_kind_round_trips_exactly(self, store: Store):
        records = [sample(kind) for kind in RECORD_TYPES.values()]
        assert await store.upsert(records) == len(records)
        for record in records:
            got = await store.get_one(type(record), record.id)
            assert same_record(got, record), type(record).KIND

    async def test_vectors_come_back_as_float32_arrays(self, store: Store):
        vector = unit_vectors(1, seed=3)[0]
        await store.upsert([Entity(id="e", name="n", embedding=vector), Page(id="p")])
        entity = await store.get_one(Entity, "e")
        assert isinstance(entity.embedding, np.ndarray)
        assert entity.embedding.dtype == np.float32
        np.testing.assert_array_equal(entity.embedding, vector)
        assert (await store.get_one(Page, "p")).embedding is None

    async def test_upsert_is_idempotent_and_replaces_whole_records(self, store: Store):
        chunks = [Chunk(id=f"c{i}", document_id="d", text=f"t{i}") for i in range(50)]
        await store.upsert(chunks)
        await store.upsert(chunks)
        assert await store.count(Chunk) == 50
        await store.upsert([Chunk(id="c3", document_id="other")])
        replaced = await store.get_one(Chunk, "c3")
        assert (replaced.document_id, replaced.text) == ("other", "")
        assert await ids_of(store, Chunk, {"document_id": "other"}) == ["c3"]

    async def test_upsert_of_mixed_kinds(self, store: Store):
        written = await store.upsert([Document(id="d"), Chunk(id="c"), Document(id="d2")])
        assert written == 3
        assert await store.count(Document) == 2 and await store.count(Chunk) == 1

    async def test_get_keeps_the_order_asked_and_skips_missing(self, store: Store):
        await store.upsert([Chunk(id=f"c{i}") for i in range(5)])
        got = await store.get(Chunk, ["c3", "nope", "c0", "c4"])
        assert [r.id for r in got] == ["c3", "c0", "c4"]
        assert await store.get(Chunk, []) == []

    async def test_get_one_of_a_missing_id_raises_not_found(self, store: Store):
        with pytest.raises(NotFound):
            await store.get_one(Chunk, "missing")

    async def test_values_outside_the_fast_json_path_round_trip(self, store: Store):
        # 64-bit-plus integers, lone surrogates' neighbours, every control character, non-BMP
        # text and numeric dict keys (written as strings, as JSON has them) read back as written.
        text = "".join(map(chr, range(32))) + "\"quote\" back\\slash é 中 😀 \u2028"
        value = {"big": 2**70, "negative": -(2**65), "text": text, "keys": {1: "one", 2: "two"}, "set": {3, 1}}
        await store.upsert([CacheEntry(id="v", value=value)])
        got = (await store.get_one(CacheEntry, "v")).value
        assert got == {"big": 2**70, "negative": -(2**65), "text": text, "keys": {"1": "one", "2": "two"}, "set": [1, 3]}

    async def test_a_record_that_is_not_json_is_refused(self, store: Store):
        with pytest.raises(StoreError):
            await store.upsert([CacheEntry(id="x", value=object())])
        assert await store.count(CacheEntry) == 0


class ScanContract:
    async def _documents(self, store: Store) -> None:
        await store.upsert(
            [Document(id=f"d{i:02}", path=f"p{i % 3}", content_hash=f"h{i % 2}") for i in range(12)]
        )

    async def test_scan_filters(self, store: Store):
        await self._documents(store)
        assert await ids_of(store, Document, {"path": "p1"}) == ["d01", "d04", "d07", "d10"]
        assert await ids_of(store, Document, {"path": ["p0", "p2"]}) == [
            f"d{i:02}" for i in range(12) if i % 3 != 1
        ]
        assert await ids_of(store, Document, {"path": []}) == []
        assert await ids_of(store, Document, {"path": "p0", "content_hash": "h1"}) == ["d03", "d09"]
        assert await ids_of(store, Document, {"id": ["d05", "d00"]}) == ["d00", "d05"]
        assert await ids_of(store, Document, {}) == await ids_of(store, Document)
        assert len(await ids_of(store, Document, None)) == 12

    async def test_unknown_filter_field_names_the_valid_ones(self, store: Store):
        with pytest.raises(StoreError) as caught:
            await ids_of(store, Document, {"title": "x"})
        assert "title" in str(caught.value) and "content_hash" in str(caught.value)
        with pytest.raises(StoreError):
            await store.count(Document, {"title": "x"})

    async def test_scan_pages_through_more_than_ten_thousand_records_in_id_order(
        self, store: Store
    ):
        ids = [f"c{i:06}" for i in range(10_500)]
        shuffled = ids[:]
        random.Random(1).shuffle(shuffled)
        for start in range(0, len(shuffled), 2000):
            await store.upsert(Chunk(id=i, document_id="d") for i in shuffled[start : start + 2000])
        assert await ids_of(store, Chunk) == ids
        assert await ids_of(store, Chunk, {"document_id": "d"}, batch_size=3000) == ids

    async def test_scan_with_small_pages(self, store: Store):
        await store.upsert([Chunk(id=f"c{i:03}") for i in range(25)])
        assert await ids_of(store, Chunk, batch_size=4) == [f"c{i:03}" for i in range(25)]

    async def test_count_and_delete_by_filter(self, store: Store):
        await self._documents(store)
        assert await store.count(Document) == 12
        assert await store.count(Document, {"content_hash": "h0"}) == 6
        assert await store.count(Document, {"path": []}) == 0
        assert await store.delete(Document, {"path": ["p0"]}) == 4
        assert await store.count(Document) == 8
        assert await store.delete(Document, {"path": []}) == 0
        assert await store.delete(Document, {"id": "d01"}) == 1
        assert await store.delete(Document, {}) == 7
        assert await store.count(Document) == 0


class KnnContract:
    exact_knn = True  # approximate (ANN) backends set False and are held to a recall floor

    async def _entities(self, store: Store, n: int = 400) -> np.ndarray:
        vectors = unit_vectors(n, seed=42)
        await store.upsert(
            Entity(id=f"e{i:04}", name=f"n{i}", type=("person", "place")[i % 2], embedding=v)
            for i, v in enumerate(vectors)
        )
        return vectors

    def _check(self, got, vectors: np.ndarray, query: np.ndarray, rows: np.ndarray, k: int):
        scores = vectors[rows] @ query
        best = rows[np.argsort(-scores)[:k]]
        expected = [f"e{i:04}" for i in best]
        ids = [r.id for r, _ in got]
        if self.exact_knn:
            assert ids == expected
        else:
            assert len(set(ids) & set(expected)) >= 0.9 * len(expected)
        reference = {f"e{i:04}": float(vectors[i] @ query) for i in rows}
        for record, score in got:
            assert score == pytest.approx(reference[record.id], abs=1e-4)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)

    async def test_knn_matches_brute_force(self, store: Store):
        vectors = await self._entities(store)
        everyone = np.arange(len(vectors))
        for query in unit_vectors(5, seed=7):
            self._check(await store.knn(Entity, query, 10), vectors, query, everyone, 10)

    async def test_knn_with_a_filter(self, store: Store):
        vectors = await self._entities(store)
        places = np.arange(1, len(vectors), 2)
        for query in unit_vectors(3, seed=8):
            got = await store.knn(Entity, query, 10, {"type": "place"})
            assert all(r.type == "place" for r, _ in got)
            self._check(got, vectors, query, places, 10)
        assert await store.knn(Entity, vectors[0], 5, {"type": []}) == []

    async def test_knn_sees_writes_and_deletes(self, store: Store):
        vectors = await self._entities(store, n=20)
        top = (await store.knn(Entity, vectors[3], 1))[0]
        assert top[0].id == "e0003" and top[1] == pytest.approx(1.0, abs=1e-4)
        await store.delete(Entity, {"id": "e0003"})
        assert (await store.knn(Entity, vectors[3], 1))[0][0].id != "e0003"
        await store.upsert([Entity(id="new", embedding=vectors[3])])
        assert (await store.knn(Entity, vectors[3], 1))[0][0].id == "new"

    async def test_knn_with_k_beyond_the_records_returns_them_all(self, store: Store):
        vectors = await self._entities(store, n=6)
        await store.upsert([Entity(id="no-vector")])
        got = await store.knn(Entity, vectors[0], 50)
        assert sorted(r.id for r, _ in got) == [f"e{i:04}" for i in range(6)]
        assert await store.knn(Page, vectors[0], 3) == []


class TransactionContract:
    async def test_an_error_inside_rolls_back_everything_written_in_it(self, store: Store):
        await store.upsert([Chunk(id="before", text="kept")])
        with pytest.raises(RuntimeError):
            async with store.transaction():
                await store.upsert([Chunk(id="c1"), Document(id="d1")])
                await store.upsert([Chunk(id="before", text="changed")])
                await store.delete(Chunk, {"id": "before"})
                raise RuntimeError("boom")
        assert await ids_of(store, Chunk) == ["before"]
        assert (await store.get_one(Chunk, "before")).text == "kept"
        assert await store.count(Document) == 0

    async def test_a_commit_keeps_everything(self, store: Store):
        async with store.transaction():
            await store.upsert([Chunk(id="c1"), Document(id="d1")])
            assert await store.count(Chunk) == 1  # a transaction reads its own writes
        assert await store.count(Chunk) == 1 and await store.count(Document) == 1

    async def test_nested_transactions_join_the_outer_one(self, store: Store):
        with pytest.raises(RuntimeError):
            async with store.transaction():
                await store.upsert([Chunk(id="outer")])
                async with store.transaction():
                    await store.upsert([Chunk(id="inner")])
                raise RuntimeError("outer fails after the inner one finished")
        assert await store.count(Chunk) == 0
        async with store.transaction():
            async with store.transaction():
                await store.upsert([Chunk(id="inner")])
            await store.upsert([Chunk(id="outer")])
        assert await ids_of(store, Chunk) == ["inner", "outer"]

    async def test_concurrent_writers_lose_nothing(self, store: Store):
        async def writer(n: int) -> None:
            for batch in range(5):
                records = [Chunk(id=f"w{n:02}-{batch}-{i}", document_id=f"d{n}") for i in range(10)]
                if n % 2:
                    async with store.transaction():
                        await store.upsert(records[:5])
                        await asyncio.sleep(0)
                        await store.upsert(records[5:])
                else:
                    await store.upsert(records)
                await asyncio.sleep(0)

        async def failing_writer() -> None:
            with pytest.raises(ValueError):
                async with store.transaction():
                    await store.upsert([Chunk(id="doomed")])
                    await asyncio.sleep(0.01)
                    raise ValueError

        await asyncio.gather(*(writer(n) for n in range(16)), failing_writer())
        assert await store.count(Chunk) == 16 * 5 * 10
        assert await store.get(Chunk, ["doomed"]) == []


class IsolationContract:
    async def test_knowledge_bases_are_isolated(self, store: Store, other_kb: str):
        other = store.for_kb(other_kb)
        assert other.kb == other_kb and store.kb != other_kb
        vector = unit_vectors(1, seed=1)[0]
        await store.upsert([Chunk(id="same", text="a"), Entity(id="e", embedding=vector)])
        await other.upsert([Chunk(id="same", text="b"), Chunk(id="only-b")])
        assert (await store.get_one(Chunk, "same")).text == "a"
        assert (await other.get_one(Chunk, "same")).text == "b"
        assert await store.count(Chunk) == 1 and await other.count(Chunk) == 2
        assert await other.knn(Entity, vector, 5) == []
        assert await store.get(Chunk, ["only-b"]) == []
        await other.delete(Chunk, {})
        assert await store.count(Chunk) == 1
        await other.upsert([Document(id="d")])
        assert {store.kb, other_kb} <= set(await store.knowledge_bases())

    async def test_info_names_the_backend_without_secrets(self, store: Store):
        info = await store.info()
        assert info["backend"] and info["url"] == store.url
        assert ":compendium@" not in info["url"] and "password" not in str(info).lower()




class FullTextContract:
    """search_text: ranked, filtered, limited, and in step with every write."""

    async def _chunks(self, store: Store) -> None:
        await store.upsert(
            [
                Chunk(id="both", document_id="d1", text="Vacuum reclaims storage; vacuum freezes tuples."),
                Chunk(id="one", document_id="d1", text="Autovacuum launches workers that vacuum tables."),
                Chunk(id="other", document_id="d2", text="Checkpoints flush dirty buffers to disk."),
                Chunk(id="heading", document_id="d2", text="Settings are read at startup.",
                      heading_path=["Server", "Freezes"]),
                Chunk(id="plain", document_id="d3", text="Replication streams records to standbys."),
            ]
        )

    async def test_words_rank_records_best_first(self, store: Store):
        await self._chunks(store)
        got = await store.search_text(Chunk, "vacuum freezes tuples", 10)
        ids = [r.id for r, _ in got]
        assert ids[0] == "both"  # every word, and vacuum twice
        assert set(ids) == {"both", "one", "heading"}
        scores = [s for _, s in got]
        assert all(s > 0 for s in scores) and scores == sorted(scores, reverse=True)
        assert [r.id for r, _ in await store.search_text(Chunk, "VACUUM", 1)] == ["both"]
        assert (await store.search_text(Chunk, "vacuum", 10))[0][0].text.startswith("Vacuum")

    async def test_filters_and_limit(self, store: Store):
        await self._chunks(store)
        got = await store.search_text(Chunk, "vacuum freezes", 10, {"document_id": "d2"})
        assert [r.id for r, _ in got] == ["heading"]
        assert await store.search_text(Chunk, "vacuum", 10, {"document_id": []}) == []
        assert len(await store.search_text(Chunk, "vacuum freezes checkpoints", 2)) == 2
        assert await store.search_text(Chunk, "vacuum", 0) == []
        assert await store.search_text(Chunk, "  ?! ", 5) == []
        assert await store.search_text(Chunk, "nonexistentword", 5) == []

    async def test_field_weights_and_a_chosen_field(self, store: Store):
        await store.upsert(
            [
                Entity(id="named", name="Checkpointer", description="A background process."),
                Entity(id="aliased", name="Background Writer", aliases=["Checkpointer helper"]),
                Entity(id="described", name="Buffer Pool",
                       description="Pages are written by the checkpointer process."),
                Entity(id="unrelated", name="Planner", description="Chooses plans."),
            ]
        )
        ranked = [r.id for r, _ in await store.search_text(Entity, "checkpointer", 10)]
        assert ranked[0] == "named" and set(ranked) == {"named", "aliased", "described"}
        by_name = await store.search_text(Entity, "checkpointer", 10, fields=["name", "aliases"])
        assert {r.id for r, _ in by_name} == {"named", "aliased"}
        with pytest.raises(StoreError, match="aliases"):
            await store.search_text(Entity, "x", 5, fields=["type"])
        with pytest.raises(StoreError):
            await store.search_text(Document, "x", 5)

    async def test_the_index_follows_upserts_and_deletes(self, store: Store):
        await self._chunks(store)
        await store.upsert([Chunk(id="both", document_id="d1", text="Rewritten about tablespaces.")])
        assert "both" not in {r.id for r, _ in await store.search_text(Chunk, "freezes", 10)}
        assert [r.id for r, _ in await store.search_text(Chunk, "tablespaces", 10)] == ["both"]
        await store.delete(Chunk, {"id": "both"})
        assert await store.search_text(Chunk, "tablespaces", 10) == []
        await store.delete(Chunk, {"document_id": "d1"})
        assert [r.id for r, _ in await store.search_text(Chunk, "vacuum freezes", 10)] == ["heading"]
        await store.delete(Chunk, {})
        assert await store.search_text(Chunk, "checkpoints", 10) == []

    async def test_a_rolled_back_write_leaves_the_index_as_it_was(self, store: Store):
        await self._chunks(store)
        with pytest.raises(RuntimeError):
            async with store.transaction():
                await store.upsert([Chunk(id="other", text="Tablespaces hold relations.")])
                await store.delete(Chunk, {"id": "plain"})
                raise RuntimeError("boom")
        assert await store.search_text(Chunk, "tablespaces", 10) == []
        assert [r.id for r, _ in await store.search_text(Chunk, "checkpoints", 10)] == ["other"]
        assert [r.id for r, _ in await store.search_text(Chunk, "replication", 10)] == ["plain"]

    async def test_ranking_does_not_depend_on_other_knowledge_bases(
        self, store: Store, other_kb: str
    ):
        other = store.for_kb(other_kb)
        await other.upsert(
            [Chunk(id=f"o{i}", text="Vacuum freezes vacuum freezes tuples.") for i in range(300)]
        )
        await self._chunks(store)
        got = [r.id for r, _ in await store.search_text(Chunk, "vacuum freezes tuples", 10)]
        assert got[0] == "both" and set(got) == {"both", "one", "heading"}
        await other.delete(Chunk, {})

    async def test_ids_with_quotes_and_backslashes_are_indexed_and_forgotten(self, store: Store):
        odd = "it's a \\ path'); --"
        await store.upsert([Chunk(id=odd, text="Quoted tablespaces.")])
        assert [r.id for r, _ in await store.search_text(Chunk, "tablespaces", 5)] == [odd]
        await store.delete(Chunk, {"id": odd})
        assert await store.search_text(Chunk, "tablespaces", 5) == []

    async def test_words_joined_by_underscores_are_found(self, store: Store):
        await store.upsert(
            [
                Chunk(id="setting", text="Raise max_wal_size when checkpoints come too often."),
                Chunk(id="prose", text="The maximum size of a file."),
            ]
        )
        got = [r.id for r, _ in await store.search_text(Chunk, "max_wal_size", 10)]
        assert got[0] == "setting"

    async def test_knowledge_bases_do_not_see_each_others_text(self, store: Store, other_kb: str):
        await self._chunks(store)
        other = store.for_kb(other_kb)
        await other.upsert([Chunk(id="both", text="Tablespaces only here.")])
        assert [r.id for r, _ in await other.search_text(Chunk, "vacuum tablespaces", 10)] == ["both"]
        assert "both" not in {r.id for r, _ in await store.search_text(Chunk, "tablespaces", 10)}
        await other.delete(Chunk, {})
        assert (await store.search_text(Chunk, "vacuum", 10))[0][0].id == "both"


class StoreContract(
    RoundTripContract,
    ScanContract,
    KnnContract,
    TransactionContract,
    IsolationContract,
    FullTextContract,
):
    """Everything a Store must do; a backend module subclasses this with `store`/`other_kb`."""
