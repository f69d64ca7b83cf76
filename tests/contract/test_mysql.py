"""The Store contract on MySQL/MariaDB (COMPENDIUM_TEST_MYSQL_URL) and TiDB (COMPENDIUM_TEST_TIDB_URL)."""

from __future__ import annotations

import asyncio

import pytest

from compendium.storage.factory import open_store
from compendium.storage.records import CacheEntry, Entity

from .conftest import drop_kbs, fresh_kb, server_url
from .store_contract import FullTextContract, StoreContract, unit_vectors


@pytest.fixture
def kb_names():
    return [fresh_kb(), fresh_kb()]


@pytest.fixture
def other_kb(kb_names) -> str:
    return kb_names[1]


class TestMySQLStore(StoreContract):
    url_variable = "COMPENDIUM_TEST_MYSQL_URL"

    @pytest.fixture
    async def store(self, kb_names):
        store = await open_store(server_url(self.url_variable), kb=kb_names[0])
        yield store
        await drop_kbs(store, kb_names)
        await store.close()

    async def test_info_reports_how_vectors_are_searched(self, store):
        info = await store.info()
        assert info["backend"] in ("mysql", "tidb")
        assert info["vector_search"] in ("numpy", "tidb-vector")

    async def test_knn_cache_notices_writes_by_another_connection(self, store):
        vectors = unit_vectors(2, seed=11)
        await store.upsert([Entity(id="a", embedding=vectors[0])])
        assert (await store.knn(Entity, vectors[1], 1))[0][0].id == "a"
        other = await open_store(server_url(self.url_variable), kb=store.kb)
        await other.upsert([Entity(id="b", embedding=vectors[1])])
        await other.close()
        assert (await store.knn(Entity, vectors[1], 1))[0][0].id == "b"

    async def test_text_search_counts_notice_writes_by_another_connection(self, store):
        # BM25 weighs a word by how many records hold it among how many there are: an API
        # server's count must follow what a compile in another process writes.
        from compendium.storage.records import Chunk

        await store.upsert([Chunk(id="a", text="tablespace layout"), Chunk(id="b", text="vacuum")])
        before = (await store.search_text(Chunk, "tablespace", 1))[0][1]
        other = await open_store(server_url(self.url_variable), kb=store.kb)
        try:
            await other.upsert([Chunk(id=f"n{i}", text=f"unrelated words {i}") for i in range(40)])
        finally:
            await other.close()
        after = (await store.search_text(Chunk, "tablespace", 1))[0][1]
        assert after > before  # a rarer word among more records

    async def test_cache_writes_do_not_wait_for_another_connections_open_transaction(self, store):
        # A distributed compile's workers store every answer while the compile holds a long
        # transaction that wrote cache entries (REDUCE's ledger): they must not queue behind it.
        other = await open_store(server_url(self.url_variable), kb=store.kb)
        try:
            async with store.transaction():
                await store.upsert([CacheEntry(id="ledger", namespace="reduce", value=1, vector=unit_vectors(1, 0)[0])])
                await asyncio.wait_for(
                    other.upsert([CacheEntry(id="answer", namespace="llm", value=2, vector=unit_vectors(1, 1)[0])]), 5.0
                )
            assert {e.id for e in await store.get(CacheEntry, ["ledger", "answer"])} == {"ledger", "answer"}
        finally:
            await other.close()

    async def test_serialized_transactions_do_not_overlap_across_connections(self, store):
        # How compile leases are taken without a settling pause: the second claim waits for the
        # first to commit, then reads what it wrote.
        assert (await store.info())["serialized_transactions"] is True
        other = await open_store(server_url(self.url_variable), kb=store.kb)
        order: list[str] = []

        async def second() -> list:
            async with other.transaction(serialized=True):
                order.append("second begins")
                return await other.get(CacheEntry, ["first"])

        try:
            async with store.transaction(serialized=True):
                await store.upsert([CacheEntry(id="first", namespace="lease", value=1)])
                waiting = asyncio.create_task(second())
                await asyncio.sleep(0.5)
                order.append("first commits")
            seen = await asyncio.wait_for(waiting, 10)
        finally:
            await other.close()
        assert order == ["first commits", "second begins"] and [e.id for e in seen] == ["first"]

    async def test_a_store_from_before_the_word_index_is_indexed_on_opening(self, store):
        from compendium.storage.records import Chunk

        await store.upsert([Chunk(id="old", text="Tablespaces hold relations.")])
        prefix = store._server.target.prefix

        def as_schema_one(cursor):  # what a store written by the previous schema holds
            cursor.execute(f"DELETE FROM `{prefix}postings` WHERE kb = %s", (store.kb,))
            cursor.execute(f"UPDATE `{prefix}schema` SET version = 1 WHERE name = 'store'")

        await store._write("downgrade", as_schema_one)
        assert await store.search_text(Chunk, "tablespaces", 5) == []
        reopened = await open_store(server_url(self.url_variable), kb=store.kb)
        try:
            assert [r.id for r, _ in await reopened.search_text(Chunk, "tablespaces", 5)] == ["old"]
        finally:
            await reopened.close()

    async def test_a_store_whose_extracts_had_filter_indexes_drops_them_on_opening(self, store):
        from compendium.storage.records import Extract

        await store.upsert([Extract(id="a", document_id="d", status="done")])
        table = f"{store._server.target.prefix}extract"

        def with_old_filter(cursor):  # the extract table as it was when extracts had a status filter
            cursor.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() "
                           "AND table_name = %s", (table,))
            if "status" not in {row[0].lower() for row in cursor.fetchall()}:
                cursor.execute(f"ALTER TABLE `{table}` ADD COLUMN `status` VARCHAR(1024) NULL")
            cursor.execute(f"ALTER TABLE `{table}` ADD KEY `ix_status` (kb, `status`(191), id)")

        def indexes(cursor):
            cursor.execute("SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = "
                           "DATABASE() AND table_name = %s", (table,))
            return {row[0].lower() for row in cursor.fetchall()}

        await store._write("add an old index", with_old_filter)
        assert "ix_status" in await store._read("list indexes", indexes)
        reopened = await open_store(server_url(self.url_variable), kb=store.kb)
        try:
            assert "ix_status" not in await reopened._read("list indexes", indexes)
            await reopened.upsert([Extract(id="b", document_id="d", status="failed")])
            assert sorted([(e.id, e.status) async for e in reopened.scan(Extract)]) == [("a", "done"), ("b", "failed")]
        finally:
            await reopened.close()


class TestTiDBStore(TestMySQLStore):
    url_variable = "COMPENDIUM_TEST_TIDB_URL"
    exact_knn = False  # an HNSW index answers approximately


class TestMySQLTextByScan(FullTextContract):
    """What a server without full-text indexes (TiDB without FTS) answers: BM25 over a scan."""

    @pytest.fixture
    async def store(self, kb_names):
        store = await open_store(server_url("COMPENDIUM_TEST_MYSQL_URL"), kb=kb_names[0])
        store._server.full_text = "scan"  # BM25 over every record, the other mode
        yield store
        await drop_kbs(store, kb_names)
        await store.close()
