"""MySQL-protocol store (MariaDB, MySQL, TiDB): a table per kind; VECTOR search on TiDB, numpy elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import pymysql

from ..errors import StoreError
from ..fingerprint import text_hash
from . import codec, text
from .base import Filter
from .mysql_sql import (
    Target,
    bump_sql,
    count_sql,
    create_tables,
    decode_vector,
    drop_fulltext_indexes,
    encode_vector,
    forget_filtered_postings_sql,
    forget_postings_sql,
    generation_sql,
    index_vectors,
    insert_postings_sql,
    insert_postings_statements,
    knn_sql,
    mark_schema,
    parse_url,
    postings_of,
    postings_sql,
    quote,
    select_sql,
    upsert_sql,
    vector_matrix,
    where_sql,
)
from .records import RECORD_TYPES, CacheEntry, Record, Vector

_MAX_IDS = 500
_MAX_POSTINGS = 200_000  # a query of very common words ranks from this many postings at most
_RETRYABLE = {1205, 1213}  # lock wait timeout, deadlock: the whole statement can be retried
_GONE = {2006, 2013}  # server has gone away / lost connection: reconnect once
SERIALIZED_WAIT_SECONDS = 30  # how long a serialized transaction waits for the one before it

_current_tx: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "compendium_mysql_tx", default=None
)


def _counted(kind: type[Record]) -> bool:
    """Whether a kind's writes bump its generation, so that other processes learn their cached
    vector matrix or text-search record count of it is stale. Not the response cache's: its
    vectors are read by id and it is never searched, and every worker of a distributed compile
    writes it, so each write would wait on the counter's row lock for any open transaction that
    wrote a cache entry (a REDUCE's ledger: ~1.5 s a round)."""
    return kind is not CacheEntry and bool(kind.VECTOR or kind.TEXT)


class _Server:
    """One connection, shared by every kb-scoped store; calls run one at a time in a thread."""

    def __init__(self, target: Target):
        self.target = target
        self.conn: pymysql.connections.Connection | None = None
        self.tx_lock = asyncio.Lock()  # held by a transaction, or by one autocommit write
        self.call_lock = asyncio.Lock()  # one statement at a time on the connection
        self.active_tx: object | None = None
        self.native_vectors = False
        self.version = ""
        self.matrices: dict[tuple[str, str, str], tuple[int, list[str], np.ndarray]] = {}
        self.counts: dict[tuple[str, str, str, str], tuple[int, int]] = {}
        self.vector_index: dict[str, str] = {}  # TiDB: kind -> "hnsw(d)" or why there is none
        self.full_text = "index"  # the word index (postings) | "scan": BM25 over every record
        self.named_locks = False  # GET_LOCK works: serialized transactions (TiDB before 5.3 lacks it)

    def where(self) -> str:
        return f"{self.target.host}:{self.target.port}/{self.target.database}"

    def connect(self) -> None:
        t = self.target
        try:
            self.conn = pymysql.connect(
                host=t.host,
                port=t.port,
                user=t.user,
                password=t.password,
                database=t.database,
                charset="utf8mb4",
                autocommit=True,
                connect_timeout=10,
                ssl=t.ssl,
            )
        except pymysql.err.MySQLError as exc:
            reason = exc.args[1] if len(exc.args) > 1 else str(exc)
            raise StoreError(f"cannot connect to MySQL store at {self.where()}: {reason}") from exc

    def lock_name(self) -> str:
        # One per database and table prefix (at most 64 characters): what its stores share.
        return "compendium-tx:" + text_hash(f"{self.target.database}/{self.target.prefix}")[:32]

    def take_lock(self, cursor: Any) -> None:
        cursor.execute("SELECT GET_LOCK(%s, %s)", (self.lock_name(), SERIALIZED_WAIT_SECONDS))
        if cursor.fetchone()[0] != 1:
            raise StoreError(
                f"MySQL store {self.where()}: another process held the serialized-transaction lock for "
                f"{SERIALIZED_WAIT_SECONDS} s; try again (a stuck process releases it when its connection ends)"
            )

    def release_lock(self, cursor: Any) -> None:
        cursor.execute("SELECT RELEASE_LOCK(%s)", (self.lock_name(),))
        cursor.fetchall()

    def run(self, doing: str, work: Callable[[Any], Any], retry: bool) -> Any:
        """Run `work(cursor)` in this thread, translating driver errors; retry what is safe."""
        for attempt in range(4):
            try:
                if self.conn is None:
                    self.connect()
                assert self.conn is not None
                with self.conn.cursor() as cursor:
                    return work(cursor)
            except pymysql.err.MySQLError as exc:
                code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else 0
                if retry and attempt < 3 and (code in _RETRYABLE or code in _GONE):
                    if code in _GONE:
                        self.conn = None
                    continue
                raise StoreError(f"MySQL store {self.where()}: cannot {doing}: {exc}") from exc
        raise AssertionError("unreachable")

    def setup(self, cursor: Any) -> None:
        cursor.execute("SELECT VERSION()")
        self.version = cursor.fetchone()[0]
        if "tidb" in self.version.lower():
            try:
                cursor.execute("SELECT VEC_COSINE_DISTANCE('[1,0]', '[0,1]')")
                cursor.fetchall()
                self.native_vectors = True
            except pymysql.err.MySQLError:
                self.native_vectors = False
        try:
            cursor.execute("SELECT RELEASE_LOCK(%s)", (self.lock_name(),))  # probes GET_LOCK's family
            cursor.fetchall()
            self.named_locks = True
        except pymysql.err.MySQLError:
            self.named_locks = False
        vector_type = "VECTOR" if self.native_vectors else "MEDIUMBLOB"
        before = create_tables(cursor, self.target.prefix, vector_type, self.where())
        if 0 < before < 2:
            drop_fulltext_indexes(cursor, self.target.prefix)
            index_stored_words(cursor, self.target.prefix)
        mark_schema(cursor, self.target.prefix)


def index_stored_words(cursor: Any, prefix: str) -> None:
    """Build the word index of the records a store held before it had one."""
    for kind in RECORD_TYPES.values():
        if not kind.TEXT:
            continue
        after: tuple[str, str] = ("", "")
        while True:
            cursor.execute(
                f"SELECT kb, id, data FROM {quote(prefix + kind.KIND)} WHERE (kb, id) > (%s, %s) "
                "ORDER BY kb, id LIMIT 1000",
                after,
            )
            rows = cursor.fetchall()
            if not rows:
                break
            postings = [
                p for kb, _, data in rows for p in postings_of(kb, kind, codec.decode(kind, data, None))
            ]
            if postings:  # IGNORE: another process opening the store may be doing the same
                cursor.executemany(insert_postings_sql(prefix, ignore=True), postings)
            after = (rows[-1][0], rows[-1][1])


class MySQLStore(codec.GetOne):
    """Store on a MySQL-protocol server; see storage/base.py for the contract."""

    def __init__(self, server: _Server, kb: str):
        self._server = server
        self.kb = kb
        self.url = server.target.safe_url

    @classmethod
    async def connect(cls, url: str, kb: str = "default") -> MySQLStore:
        server = _Server(parse_url(url))
        await asyncio.to_thread(server.run, "prepare tables", server.setup, False)
        return cls(server, kb)

    def for_kb(self, kb: str) -> MySQLStore:
        return MySQLStore(self._server, kb)

    def _table(self, kind: type[Record]) -> str:
        return quote(self._server.target.prefix + kind.KIND)

    def _in_tx(self) -> bool:
        return self._server.active_tx is not None and _current_tx.get() is self._server.active_tx

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
        tx = object()
        server.active_tx = tx
        token = _current_tx.set(tx)
        try:
            yield
        except BaseException:
            server.active_tx = None
            server.matrices.clear()
            server.counts.clear()
            await self._call("roll back", lambda c: c.execute("ROLLBACK"), retry=False)
            raise
        else:
            server.active_tx = None
            server.matrices.clear()
            server.counts.clear()
            await self._call("commit", lambda c: c.execute("COMMIT"), retry=False)
        finally:
            server.active_tx = None
            _current_tx.reset(token)

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
                    for start in range(0, len(ids), _MAX_IDS):
                        part = ids[start : start + _MAX_IDS]
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

    async def delete(self, kind: type[Record], where: Filter) -> int:
        kind = codec.record_kind(kind)
        condition = where_sql(kind, self.kb, where)
        if condition is None:
            return 0
        sql, params = condition

        prefix = self._server.target.prefix

        def work(cursor: Any) -> int:
            if kind.TEXT:
                cursor.execute(
                    forget_filtered_postings_sql(kind, prefix, sql), [self.kb, kind.KIND, *params]
                )
            count = cursor.execute(f"DELETE FROM {self._table(kind)} WHERE {sql}", params)
            self._bump(cursor, kind)
            return count

        return await self._write(f"delete {kind.KIND} records", work)

    async def get(self, kind: type[Record], ids: Sequence[str]) -> list[Record]:
        kind = codec.record_kind(kind)
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []

        def work(cursor: Any) -> list[tuple]:
            rows: list[tuple] = []
            for start in range(0, len(wanted), _MAX_IDS):
                part = wanted[start : start + _MAX_IDS]
                cursor.execute(
                    f"{self._select(kind)} WHERE kb = %s AND id IN ({', '.join(['%s'] * len(part))})",
                    [self.kb, *part],
                )
                rows.extend(cursor.fetchall())
            return rows

        rows = await self._read(f"get {kind.KIND} records", work)
        found = {
            row[0]: record for row, record in zip(rows, self._records(kind, rows), strict=True)
        }
        return [found[i] for i in ids if i in found]

    async def scan(
        self, kind: type[Record], where: Filter | None = None, *, batch_size: int = 1000
    ) -> AsyncIterator[Record]:
        kind = codec.record_kind(kind)
        condition = where_sql(kind, self.kb, where)
        if condition is None:
            return
        sql, params = condition
        size = max(1, int(batch_size))
        last: str | None = None
        while True:
            after, page = ("", params) if last is None else (" AND id > %s", [*params, last])

            def work(cursor: Any, after: str = after, page: list[Any] = page) -> list[tuple]:
                cursor.execute(
                    f"{self._select(kind)} WHERE {sql}{after} ORDER BY id LIMIT {size}", page
                )
                return list(cursor.fetchall())

            rows = await self._read(f"scan {kind.KIND} records", work)
            for record in self._records(kind, rows):
                yield record
            if len(rows) < size:
                return
            last = rows[-1][0]

    async def count(self, kind: type[Record], where: Filter | None = None) -> int:
        kind = codec.record_kind(kind)
        condition = where_sql(kind, self.kb, where)
        if condition is None:
            return 0
        sql, params = condition

        def work(cursor: Any) -> int:
            cursor.execute(f"SELECT COUNT(*) FROM {self._table(kind)} WHERE {sql}", params)
            return int(cursor.fetchone()[0])

        return await self._read(f"count {kind.KIND} records", work)

    async def knn(
        self, kind: type[Record], vector: Vector, k: int, where: Filter | None = None
    ) -> list[tuple[Record, float]]:
        kind = codec.record_kind(kind)
        query = codec.unit_query(kind, vector)
        condition = where_sql(kind, self.kb, where)
        if condition is None or k <= 0:
            return []
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
        if not ids:
            return []
        if matrix.shape[1] != query.shape[0]:
            raise StoreError(
                f"knn on {kind.KIND}: query has {query.shape[0]} dimensions, "
                f"stored vectors have {matrix.shape[1]}"
            )
        picked, scores = codec.top_k(matrix, query, k)
        by_id = {r.id: r for r in await self.get(kind, [ids[i] for i in picked])}
        return [
            (by_id[ids[i]], float(s))
            for i, s in zip(picked, scores, strict=True)
            if ids[i] in by_id
        ]

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

    async def search_text(
        self,
        kind: type[Record],
        query: str,
        k: int,
        where: Filter | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[tuple[Record, float]]:
        kind, chosen, terms, k = text.prepare_search(kind, query, k, fields)
        condition = where_sql(kind, self.kb, where)
        if condition is None or not terms or k == 0:
            return []
        sql, params = condition
        mode = self._server.full_text
        if mode == "scan":
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
