"""MySQL-protocol store (MariaDB, MySQL, TiDB): a table per kind; VECTOR search on TiDB, numpy elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import pymysql

from ..errors import StoreError
from . import codec, text
from .base import Filter
from .mysql_server import Server
from .mysql_server import counted as _counted
from .mysql_sql import (
    bump_sql,
    count_sql,
    decode_vector,
    encode_vector,
    forget_filtered_postings_sql,
    forget_postings_sql,
    generation_sql,
    index_vectors,
    insert_postings_statements,
    knn_sql,
    parse_url,
    postings_sql,
    quote,
    select_sql,
    upsert_sql,
    where_sql,
)
from .records import RECORD_TYPES, Record, Vector
from .sql_store import MAX_IDS, SQLStore, vector_matrix

_MAX_POSTINGS = 200_000  # a query of very common words ranks from this many postings at most



class MySQLStore(SQLStore):
    """Store on a MySQL-protocol server; see storage/base.py for the contract."""

    MARK = "%s"

    def __init__(self, server: Server, kb: str):
        self._server = server
        self.kb = kb
        self.url = server.target.safe_url

    @classmethod
    async def connect(cls, url: str, kb: str = "default") -> MySQLStore:
        server = Server(parse_url(url))
        await asyncio.to_thread(server.run, "prepare tables", server.setup, False)
        return cls(server, kb)

    def for_kb(self, kb: str) -> MySQLStore:
        return MySQLStore(self._server, kb)

    def _where(self, kind: type[Record], where: Filter | None) -> tuple[str, list[Any]] | None:
        return where_sql(kind, self.kb, where)

    def _table(self, kind: type[Record]) -> str:
        return quote(self._server.target.prefix + kind.KIND)

    def _in_tx(self) -> bool:
        return self._server.transactions.inside()

    async def _call(self, doing: str, work: Callable[[Any], Any], *, retry: bool = True) -> Any:
        async with self._server.call_lock:
            return await asyncio.to_thread(
                self._server.run, doing, work, retry and not self._in_tx()
            )

    async def _read(self, doing: str, work: Callable[[Any], Any]) -> Any:
        # outside a transaction, wait for another task's one: never read its partial writes
        if self._in_tx() or not self._server.tx_lock.locked():
            return await self._call(doing, work)
        async with self._server.tx_lock:
            return await self._call(doing, work)

    async def _write(self, doing: str, work: Callable[[Any], int]) -> int:
        if self._in_tx():
            return await self._call(doing, work)

        def atomic(cursor: Any) -> int:
            cursor.execute("BEGIN")
            try:
                result = work(cursor)
                cursor.execute("COMMIT")
                return result
            except BaseException:
                cursor.execute("ROLLBACK")
                raise

        async with self._server.tx_lock:
            try:
                return await self._call(doing, atomic)
            finally:
                self._server.matrices.clear()
                self._server.counts.clear()

    @asynccontextmanager
    async def transaction(self, *, serialized: bool = False) -> AsyncIterator[None]:
        if self._in_tx():
            yield
            return
        server = self._server
        async with server.tx_lock:
            locked = serialized and server.named_locks
            if locked:  # taken before BEGIN: the transaction's first read then sees the last holder's commit
                await self._call("wait for the serialized-transaction lock", server.take_lock, retry=False)
            try:
                async with self._transaction():
                    yield
            finally:
                if locked:  # a lost connection has released it already
                    with contextlib.suppress(StoreError):
                        await self._call("release the serialized-transaction lock", server.release_lock, retry=False)

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[None]:
        """One transaction on the shared connection; the caller holds tx_lock."""
        server = self._server
        await self._call("begin a transaction", lambda c: c.execute("BEGIN"), retry=False)
        try:
            with server.transactions.held():
                yield
        except BaseException:
            server.matrices.clear()
            server.counts.clear()
            await self._call("roll back", lambda c: c.execute("ROLLBACK"), retry=False)
            raise
        else:
            server.matrices.clear()
            server.counts.clear()
            await self._call("commit", lambda c: c.execute("COMMIT"), retry=False)

    def _bump(self, cursor: Any, kind: type[Record]) -> None:
        # other processes learn from this counter that their cached vectors and counts are stale
        if _counted(kind):
            cursor.execute(bump_sql(self._server.target.prefix), (self.kb, kind.KIND))

    def _records(self, kind: type[Record], rows: Iterable[tuple]) -> list[Record]:
        try:
            return [
                codec.decode(kind, row[1], self._vector_of(row[2]) if kind.VECTOR else None)
                for row in rows
            ]
        except (ValueError, TypeError) as exc:
            raise StoreError(f"MySQL store: a {kind.KIND} row is corrupt: {exc}") from exc

    def _vector_of(self, value: Any) -> Vector | None:
        return decode_vector(value, self._server.native_vectors)

    def _select(self, kind: type[Record]) -> str:
        return select_sql(kind, self._server.target.prefix)

    async def _index_vectors(self, kind: type[Record], dim: int) -> None:
        """TiDB: fix the vector column to VECTOR(dim) and add an HNSW index, on the first write.

        DDL commits any open transaction, so this only runs outside one. The cache kind keeps
        an untyped column: it holds vectors of several embedding models.
        """
        server = self._server
        if kind.KIND in server.vector_index or kind.KIND == "cache" or self._in_tx():
            return
        prefix = server.target.prefix
        async with server.tx_lock:
            server.vector_index[kind.KIND] = await self._call(
                f"index {kind.KIND} vectors", lambda c: index_vectors(c, prefix, kind, dim)
            )

    async def upsert(self, records: Iterable[Record]) -> int:
        groups = codec.group_by_kind(records)
        if self._server.native_vectors:
            for kind, items in groups.items():
                first = next((v for r in items if (v := codec.vector_of(r)) is not None), None)
                if first is not None:
                    await self._index_vectors(kind, first.shape[0])
        prefix = self._server.target.prefix
        batches = []
        for kind, items in groups.items():
            rows = []
            for record in items:
                row = [self.kb, record.id]
                row += [codec.filter_value(record, name) for name in kind.FILTERS]
                row.append(codec.encode_data(record))
                if kind.VECTOR:
                    row.append(encode_vector(codec.vector_of(record), self._server.native_vectors))
                # the words as search reads them (the server's parser keeps `_` inside words)
                row += [" ".join(text.words(text.field_text(record, name))) for name, _ in kind.TEXT]
                rows.append(row)
            batches.append((kind, upsert_sql(kind, prefix), rows, items))
        if not batches:
            return 0

        def work(cursor: Any) -> int:
            for kind, sql, rows, items in batches:
                cursor.executemany(sql, rows)
                if kind.TEXT:
                    ids = [r.id for r in items]
                    for start in range(0, len(ids), MAX_IDS):
                        part = ids[start : start + MAX_IDS]
                        cursor.execute(
                            forget_postings_sql(prefix, len(part)), [self.kb, kind.KIND, *part]
                        )
                    literal = cursor.connection.escape
                    for statement in insert_postings_statements(
                        prefix, self.kb, kind, items, literal
                    ):
                        cursor.execute(statement)
                self._bump(cursor, kind)
            return sum(len(b[2]) for b in batches)

        return await self._write("upsert records", work)

    def _delete_rows(self, cursor: Any, kind: type[Record], sql: str, params: list[Any]) -> int:
        if kind.TEXT:
            cursor.execute(
                forget_filtered_postings_sql(kind, self._server.target.prefix, sql),
                [self.kb, kind.KIND, *params],
            )
        count = cursor.execute(f"DELETE FROM {self._table(kind)} WHERE {sql}", params)
        self._bump(cursor, kind)
        return count

    async def _ranked_vectors(
        self, kind: type[Record], query: Vector, k: int, condition: tuple[str, list[Any]],
        where: Filter | None,
    ) -> list[tuple[Record, float]]:
        sql, params = condition
        if self._server.native_vectors:
            text = knn_sql(kind, self._server.target.prefix, sql, k)

            def native(cursor: Any) -> list[tuple]:
                cursor.execute(text, [encode_vector(query, True), *params])
                return list(cursor.fetchall())

            rows = await self._read(f"search {kind.KIND} vectors", native)
            records = self._records(kind, rows)
            return [(r, 1.0 - float(row[3])) for r, row in zip(records, rows, strict=True)]
        ids, matrix = await self._read(
            f"search {kind.KIND} vectors", self._matrix_loader(kind, sql, params, where)
        )
        return await self._nearest(kind, ids, matrix, query, k)

    def _matrix_loader(
        self, kind: type[Record], sql: str, params: list[Any], where: Filter | None
    ) -> Callable[[Any], tuple[list[str], np.ndarray]]:
        """Vectors of the filtered rows, from the cache while the kind's generation is unchanged."""
        server = self._server
        key = (self.kb, kind.KIND, repr(sorted((where or {}).items())))
        in_tx = self._in_tx()

        def work(cursor: Any) -> tuple[list[str], np.ndarray]:
            generation = 0
            if _counted(kind):
                cursor.execute(generation_sql(server.target.prefix), (self.kb, kind.KIND))
                row = cursor.fetchone()
                generation = row[0] if row else 0
                cached = server.matrices.get(key)
                if cached is not None and cached[0] == generation:
                    return cached[1], cached[2]
            cursor.execute(
                f"SELECT id, vector FROM {self._table(kind)} WHERE {sql} AND vector IS NOT NULL",
                params,
            )
            ids, matrix = vector_matrix(
                cursor.fetchall(), f"{kind.KIND} vectors in {server.where()}"
            )
            if not in_tx and _counted(kind):  # a transaction's view may still roll back: never cache it
                if len(server.matrices) >= 16:
                    server.matrices.pop(next(iter(server.matrices)))
                server.matrices[key] = (generation, ids, matrix)
            return ids, matrix

        return work

    async def _ranked_text(
        self, search: text.TextSearch, condition: tuple[str, list[Any]], where: Filter | None,
        fields: Sequence[str] | None,
    ) -> list[tuple[Record, float]]:
        kind, chosen, terms, k = search
        sql, params = condition
        if self._server.full_text == "scan":
            scorer = text.ScanScorer(chosen, terms, k)
            batch: list[Record] = []
            async for record in self.scan(kind, where):
                batch.append(record)
                if len(batch) >= 1000:
                    scorer.add(batch)
                    batch = []
            scorer.add(batch)
            return scorer.best()
        return await self._ranked_from_index(kind, sql, params, where, chosen, terms, k)

    async def _ranked_from_index(
        self, kind: type[Record], sql: str, params: list[Any], where: Filter | None,
        chosen: dict[str, float], terms: list[str], k: int,
    ) -> list[tuple[Record, float]]:
        """BM25 over this knowledge base, from the postings of the query's words."""
        prefix, fields = self._server.target.prefix, list(chosen)
        filtered = sql if where else None  # without a filter every record of the kb counts

        def work(cursor: Any) -> tuple[int, list[tuple]]:
            statement = postings_sql(kind, prefix, filtered, len(terms), len(fields), _MAX_POSTINGS)
            cursor.execute(
                statement, [self.kb, kind.KIND, *terms, *fields, *(params if filtered else [])]
            )
            rows = list(cursor.fetchall())
            return (self._count(cursor, kind, sql, params) if rows else 0), rows

        searched, rows = await self._read(f"search {kind.KIND} text", work)
        best = text.rank_postings(rows, chosen, k, searched)
        by_id = {r.id: r for r in await self.get(kind, [key for key, _ in best])}
        return [(by_id[key], score) for key, score in best if key in by_id]

    def _count(self, cursor: Any, kind: type[Record], sql: str, params: list[Any]) -> int:
        """How many records a filter selects, remembered while the kind's generation holds."""
        server = self._server
        cursor.execute(generation_sql(server.target.prefix), (self.kb, kind.KIND))
        row = cursor.fetchone()
        generation = row[0] if row else 0
        key = (self.kb, kind.KIND, sql, repr(params))
        cached = server.counts.get(key)
        if cached is not None and cached[0] == generation:
            return cached[1]
        cursor.execute(count_sql(kind, server.target.prefix, sql), params)
        count = int(cursor.fetchone()[0])
        if not self._in_tx():  # a transaction's view may still roll back: never cache it
            if len(server.counts) >= 256:
                server.counts.pop(next(iter(server.counts)))
            server.counts[key] = (generation, count)
        return count

    async def knowledge_bases(self) -> list[str]:
        tables = [self._table(kind) for kind in RECORD_TYPES.values()]

        def work(cursor: Any) -> list[str]:
            cursor.execute(" UNION ".join(f"SELECT DISTINCT kb FROM {t}" for t in tables))
            return sorted(row[0] for row in cursor.fetchall())

        return await self._read("list knowledge bases", work)

    async def info(self) -> dict[str, Any]:
        server = self._server
        return {
            "backend": "tidb" if "tidb" in server.version.lower() else "mysql",
            "url": self.url,
            "kb": self.kb,
            "server_version": server.version,
            "serialized_transactions": server.named_locks,
            "vector_search": "tidb-vector" if server.native_vectors else "numpy",
            "vector_index": dict(server.vector_index),
            "full_text": {
                "index": "word index (BM25 per knowledge base)",
                "scan": "scan (BM25 over every record)",
            }[server.full_text],
        }

    async def close(self) -> None:
        server = self._server
        conn, server.conn = server.conn, None
        if conn is not None:
            async with server.call_lock:
                try:
                    await asyncio.to_thread(conn.close)
                except pymysql.err.Error:
                    pass  # already closed by the server: nothing left to release
