"""The Store contract on the embedded SQLite backend, plus what only a file store can show."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys

import pytest

from compendium.errors import StoreError
from compendium.storage.factory import open_store
from compendium.storage.records import Chunk, Claim, Entity, Extract, Relation

from .store_contract import StoreContract, unit_vectors


@pytest.fixture
async def store(tmp_path):
    store = await open_store(f"sqlite:///{tmp_path / 'store.db'}", kb="main")
    yield store
    await store.close()


@pytest.fixture
def other_kb() -> str:
    return "second"


def _as_schema_1(path) -> list[str]:
    """Turn a store file's record tables back into what schema 1 made (WITHOUT ROWID)."""
    with sqlite3.connect(path) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                 "AND sql LIKE '%UNIQUE (kb, id))'")]
        for table in tables:
            columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
            conn.execute(f"CREATE TABLE {table}_v1 ({', '.join(columns)}, PRIMARY KEY (kb, id)) WITHOUT ROWID")
            conn.execute(f"INSERT INTO {table}_v1 SELECT {', '.join(columns)} FROM {table}")
            conn.execute(f"DROP VIEW IF EXISTS {table}__text")
            conn.execute(f"DROP TABLE {table}")
            conn.execute(f"ALTER TABLE {table}_v1 RENAME TO {table}")
        conn.execute("PRAGMA user_version=1")
        conn.execute("ANALYZE")
    return tables


_OPEN_AND_COUNT = """
import asyncio, os, sys, time
from compendium.storage.factory import open_store
from compendium.storage.records import Chunk
async def main():
    print("ready", flush=True)
    while not os.path.exists(sys.argv[2]):  # all three open at once
        time.sleep(0.001)
    store = await open_store(sys.argv[1], kb="kb")
    print(await store.count(Chunk), len(await store.search_text(Chunk, "buffers", 500)))
    await store.close()
asyncio.run(main())
"""


class TestSQLiteStore(StoreContract):
    async def test_records_persist_across_reopening_the_file(self, tmp_path):
        path = tmp_path / "ws" / "compendium.db"
        first = await open_store(str(path), kb="kb")
        await first.upsert(
            [Chunk(id="c", text="kept"), Entity(id="e", embedding=unit_vectors(1, 0)[0])]
        )
        await first.close()
        again = await open_store(f"sqlite:///{path}", kb="kb")
        assert (await again.get_one(Chunk, "c")).text == "kept"
        assert (await again.info())["backend"] == "sqlite"
        await again.close()

    async def test_file_is_in_wal_mode_with_one_table_per_kind(self, store, tmp_path):
        await store.upsert([Chunk(id="c")])
        with sqlite3.connect(tmp_path / "store.db") as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA page_size").fetchone()[0] == 16_384
            tables = {
                row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        assert {"chunk", "entity", "page", "cache", "job"} <= tables

    async def test_knn_sees_writes_made_by_another_connection(self, store, tmp_path):
        vectors = unit_vectors(3, seed=5)
        await store.upsert([Entity(id="a", embedding=vectors[0])])
        assert (await store.knn(Entity, vectors[1], 1))[0][0].id == "a"
        other = await open_store(str(tmp_path / "store.db"), kb="main")
        await other.upsert([Entity(id="b", embedding=vectors[1])])
        await other.close()
        assert (await store.knn(Entity, vectors[1], 1))[0][0].id == "b"

    async def test_a_closed_store_says_so(self, store):
        await store.close()
        with pytest.raises(StoreError, match="closed"):
            await store.count(Chunk)

    async def test_a_file_that_is_not_a_database_is_a_store_error(self, tmp_path):
        path = tmp_path / "junk.db"
        path.write_bytes(b"this is not sqlite" * 100)
        with pytest.raises(StoreError, match=r"junk\.db"):
            await open_store(str(path))

    async def test_a_file_from_a_newer_compendium_is_refused(self, tmp_path):
        path = tmp_path / "newer.db"
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA user_version=99")
        with pytest.raises(StoreError, match="schema version 99"):
            await open_store(str(path))

    async def test_a_schema_1_file_is_rebuilt_with_rowids_keeping_its_records_and_text_index(self, tmp_path):
        path = tmp_path / "old.db"
        first = await open_store(str(path), kb="kb")
        await first.upsert([
            *[Chunk(id=f"c{i:02}", document_id=f"d{i % 3}", text=f"checkpoint {i} flushes buffers") for i in range(30)],
            Entity(id="e", name="Autovacuum", embedding=unit_vectors(1, 0)[0]),
        ])
        await first.close()
        tables = _as_schema_1(path)
        again = await open_store(str(path), kb="kb")
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
            layouts = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
            assert len(tables) >= 10 and not [t for t in tables if "WITHOUT ROWID" in layouts[t]]
            analysed = {row[0] for row in conn.execute("SELECT tbl FROM sqlite_stat1")}
            assert {"chunk", "entity"} <= analysed
        assert [c.id async for c in again.scan(Chunk, {"document_id": "d1"})] == [f"c{i:02}" for i in range(1, 30, 3)]
        assert (await again.knn(Entity, unit_vectors(1, 0)[0], 1))[0][0].id == "e"
        assert [r.id for r, _ in await again.search_text(Chunk, "checkpoint 7", 1)] == ["c07"]
        await again.upsert([Chunk(id="c07", document_id="d1", text="vacuum freezes tuples")])
        await again.delete(Chunk, {"id": ["c08"]})
        assert [r.id for r, _ in await again.search_text(Chunk, "freezes", 5)] == ["c07"]
        await again.close()
        with sqlite3.connect(path) as conn:
            conn.execute("INSERT INTO chunk__fts (chunk__fts, rank) VALUES ('integrity-check', 1)")

    def test_processes_opening_a_schema_1_file_together_all_find_it_upgraded_once(self, tmp_path):
        path = tmp_path / "old.db"

        async def fill() -> None:
            first = await open_store(str(path), kb="kb")
            await first.upsert([Chunk(id=f"c{i:04}", text=f"checkpoint {i} flushes buffers") for i in range(3000)])
            await first.close()

        asyncio.run(fill())
        _as_schema_1(path)
        go = tmp_path / "go"
        openers = [subprocess.Popen([sys.executable, "-c", _OPEN_AND_COUNT, str(path), str(go)],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
        assert [opener.stdout.readline() for opener in openers] == ["ready\n"] * 3
        go.touch()
        results = [opener.communicate(timeout=120) for opener in openers]
        assert [(out.split(), err) for out, err in results] == [(["3000", "500"], "")] * 3
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
            assert "WITHOUT ROWID" not in conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunk'").fetchone()[0]
            assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE '%__rebuilt'").fetchone()[0] == 0

    async def test_a_file_written_before_full_text_search_is_indexed_on_opening(self, tmp_path):
        path = tmp_path / "old.db"
        first = await open_store(str(path), kb="kb")
        await first.upsert([Chunk(id="c", text="Checkpoints flush buffers")])
        await first.close()
        with sqlite3.connect(path) as conn:  # the schema as it was: no ft column, no index
            conn.execute("DROP TABLE chunk__fts")
            conn.execute("DROP VIEW chunk__text")
            conn.execute("DROP INDEX chunk_ft")
            conn.execute("ALTER TABLE chunk DROP COLUMN ft")
        again = await open_store(str(path), kb="kb")
        assert [r.id for r, _ in await again.search_text(Chunk, "checkpoints", 5)] == ["c"]
        await again.close()

    async def test_a_file_whose_claims_were_indexed_drops_that_index_and_keeps_its_claims(self, tmp_path):
        path = tmp_path / "old.db"
        first = await open_store(str(path), kb="kb")
        await first.upsert([Claim(id="a", text="Checkpoints flush buffers", chunk_id="c")])
        await first.close()
        with sqlite3.connect(path) as conn:  # claims as they were indexed before
            conn.execute("ALTER TABLE claim ADD COLUMN ft INTEGER")
            conn.execute("UPDATE claim SET ft = 1")
            conn.execute("CREATE INDEX claim_ft ON claim (ft)")
            conn.execute("CREATE VIEW claim__text AS SELECT ft, json_extract(data, '$.text') AS text FROM claim")
            conn.execute("CREATE VIRTUAL TABLE claim__fts USING fts5(text, content=claim__text, content_rowid='ft')")
            conn.execute("INSERT INTO claim__fts (claim__fts) VALUES ('rebuild')")
        again = await open_store(str(path), kb="kb")
        await again.upsert([Claim(id="b", text="Vacuum freezes tuples", chunk_id="c"),
                            Claim(id="a", text="Checkpoints write buffers", chunk_id="c")])
        await again.delete(Claim, {"id": ["b"]})
        assert [(c.id, c.text) async for c in again.scan(Claim)] == [("a", "Checkpoints write buffers")]
        with pytest.raises(StoreError, match="claim records have no text fields"):
            await again.search_text(Claim, "checkpoints", 5)
        await again.close()
        with sqlite3.connect(path) as conn:
            left = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'claim%'")}
        assert not {"claim__fts", "claim__text", "claim_ft"} & left

    async def test_a_file_whose_extracts_had_filter_indexes_drops_them_and_keeps_its_extracts(self, tmp_path):
        path = tmp_path / "old.db"
        first = await open_store(str(path), kb="kb")
        await first.upsert([Extract(id="a", document_id="d", status="done")])
        await first.close()
        with sqlite3.connect(path) as conn:  # extracts as they were stored when they had filters
            for name in ("document_id", "status"):
                conn.execute(f"ALTER TABLE extract ADD COLUMN {name}")
                conn.execute(f"UPDATE extract SET {name} = json_extract(data, '$.{name}')")
                conn.execute(f"CREATE INDEX extract_{name} ON extract (kb, {name}, id)")
        again = await open_store(str(path), kb="kb")
        await again.upsert([Extract(id="b", document_id="d", status="failed")])
        assert sorted([(e.id, e.status) async for e in again.scan(Extract)]) == [("a", "done"), ("b", "failed")]
        await again.close()
        with sqlite3.connect(path) as conn:
            left = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert not {"extract_document_id", "extract_status"} & left
        assert "cache_namespace" in left  # other kinds keep theirs

    async def test_on_a_large_index_the_commonest_words_are_left_out_of_the_ranking(
        self, store, monkeypatch
    ):
        from compendium.storage import sqlite_text

        monkeypatch.setattr(sqlite_text, "LARGE_TABLE", 20)
        monkeypatch.setattr(sqlite_text, "RANKED_MATCHES", 8)
        chunks = [Chunk(id=f"c{i:02}", text="common filler words") for i in range(40)]
        chunks[3].text = "common rare words"
        chunks[7].text = "common rare uncommon words"
        for i in (11, 12, 13, 14):
            chunks[i].text = "common uncommon words"
        await store.upsert(chunks)
        got = [r.id for r, _ in await store.search_text(Chunk, "common rare uncommon", 10)]
        assert got[0] == "c07" and set(got) == {"c03", "c07", "c11", "c12", "c13", "c14"}
        monkeypatch.setattr(sqlite_text, "LARGE_TABLE", 20_000)  # exact again: every word ranks
        assert len(await store.search_text(Chunk, "common rare uncommon", 50)) == 40

    async def test_the_full_text_index_matches_the_rows_after_writes_rewrites_and_deletes(
        self, store, tmp_path
    ):
        # The index is told the text being added; it must be exactly what is later read from
        # the row to forget it, whatever the text holds (else FTS5's index goes corrupt).
        odd = ['quote " and \\ backslash', "tab\there\nline", "émigré naïve 日本語", "nul\x00inside", ""]
        await store.upsert([
            Entity(id=f"e{i}", name=text, aliases=[text, "alias two"], description=None if i == 0 else text)
            for i, text in enumerate(odd)
        ])
        await store.upsert([Chunk(id="c", text="first words", heading_path=["Guide", 'say "hi"'])])
        await store.upsert([Entity(id="e1", name="renamed thing", aliases=[], description="newer text")])
        await store.upsert([Chunk(id="c", text="second words", heading_path=["Manual"])])
        await store.delete(Entity, {"id": ["e2"]})
        with sqlite3.connect(tmp_path / "store.db") as conn:
            for table in ("entity__fts", "chunk__fts"):  # rank 1: checks the index against the rows
                conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
        assert [r.id for r, _ in await store.search_text(Chunk, "second manual", 5)] == ["c"]
        assert await store.search_text(Chunk, "first guide", 5) == []
        assert [r.id for r, _ in await store.search_text(Entity, "renamed", 5)] == ["e1"]
        assert await store.search_text(Entity, "backslash", 5) != []
        assert await store.search_text(Entity, "tab", 5) == []  # e1's old text is forgotten
        assert [r.id for r, _ in await store.search_text(Entity, "naive", 5)] == []  # e2 deleted

    async def test_a_list_in_a_filter_field_is_refused_naming_the_field(self, store):
        with pytest.raises(StoreError, match=r"entity\.type is a filter field"):
            await store.upsert([Entity(id="e", name="ok", type=["person", "place"])])
        assert await store.count(Entity) == 0

    async def test_a_dict_in_the_second_filter_field_of_a_bulk_write_is_refused_naming_it(self, store):
        good = [Relation(id=f"r{i}", source="a", target="b") for i in range(50)]
        with pytest.raises(StoreError, match=r"relation\.target is a filter field"):
            await store.upsert([*good, Relation(id="bad", source="a", target={"id": "b"})])
        assert await store.count(Relation) == 0  # the write is refused whole

    async def test_a_bulk_write_holding_one_value_orjson_refuses_stores_every_record(self, store):
        huge = 2**70  # past 64 bits: orjson refuses it, the standard library writes it
        claims = [Claim(id=f"k{i}", text=f"claim {i}", chunk_id="c") for i in range(20)]
        odd = Extract(id="x", document_id="d", dropped=huge)
        await store.upsert([*claims, odd, Extract(id="y", document_id="d", dropped=3)])
        assert (await store.get_one(Extract, "x")).dropped == huge
        assert (await store.get_one(Extract, "y")).dropped == 3
        assert sorted(c.text for c in await store.get(Claim, [c.id for c in claims])) == sorted(c.text for c in claims)

    async def test_an_id_given_twice_in_one_write_is_stored_and_indexed_once_as_the_last(
        self, store, tmp_path
    ):
        written = await store.upsert([Chunk(id="c", text="older words"), Chunk(id="d"), Chunk(id="c", text="newer words")])
        assert written == 3 and (await store.get_one(Chunk, "c")).text == "newer words"
        with sqlite3.connect(tmp_path / "store.db") as conn:
            conn.execute("INSERT INTO chunk__fts (chunk__fts, rank) VALUES ('integrity-check', 1)")
        assert await store.search_text(Chunk, "older", 5) == []
