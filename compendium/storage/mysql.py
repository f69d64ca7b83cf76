"""MySQL-protocol store (MariaDB, MySQL, TiDB): a table per kind; VECTOR search on TiDB, numpy elsewhere."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np
import pymysql
from tidb_vector.utils import decode_vector as decode_tidb_vector
from tidb_vector.utils import encode_vector as encode_tidb_vector

from ..errors import StoreError
from . import codec
from .base import Filter
from .records import RECORD_TYPES, Record, Vector

SCHEMA_VERSION = 1
_MAX_IDS = 500
_RETRYABLE = {1205, 1213}  # lock wait timeout, deadlock: the whole statement can be retried
_GONE = {2006, 2013}  # server has gone away / lost connection: reconnect once

_current_tx: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "compendium_mysql_tx", default=None
)


# -- pure builders (unit-tested in tests/storage) -------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where a mysql:// or tidb:// URL points; `safe_url` has no password."""

    host: str
    port: int
    user: str
    password: str = field(repr=False)
    database: str
    prefix: str
    tidb: bool
    ssl: dict[str, Any] | None
    safe_url: str


def parse_url(url: str) -> Target:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    database = unquote(parts.path.lstrip("/"))
    try:
        port = parts.port
    except ValueError as exc:
        raise StoreError(f"bad port in store URL {url.split('@')[-1]!r}") from exc
    if not parts.hostname or not database or "/" in database:
        raise StoreError(
            f"bad {scheme} store URL {url.split('@')[-1]!r}",
            hint=f"write {scheme}://user:password@host:port/database",
        )
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    prefix = query.get("prefix", "compendium_")
    if not prefix.replace("_", "").isalnum() and prefix:
        raise StoreError(f"bad table prefix {prefix!r}: letters, digits and _ only")
    ssl = None
    if query.get("ssl_ca"):
        ssl = {"ca": query["ssl_ca"]}
    elif query.get("ssl", "").lower() in ("1", "true", "yes"):
        ssl = {"check_hostname": True}
    tidb = scheme == "tidb"
    port = port or (4000 if tidb else 3306)
    user = unquote(parts.username or "root")
    safe = f"{scheme}://{user}@{parts.hostname}:{port}/{database}"
    return Target(
        host=parts.hostname,
        port=port,
        user=user,
        password=unquote(parts.password or ""),
        database=database,
        prefix=prefix,
        tidb=tidb,
        ssl=ssl,
        safe_url=safe + (f"?prefix={prefix}" if "prefix" in query else ""),
    )


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def table_ddl(kind: type[Record], prefix: str, vector_type: str = "MEDIUMBLOB") -> str:
    """CREATE TABLE for a kind: kb, id, its FILTERS (indexed), data JSON text, the vector."""
    table = _q(prefix + kind.KIND)
    filters = "".join(f"  {_q(f)} VARCHAR(1024) NULL,\n" for f in kind.FILTERS)
    indexes = "".join(f",\n  KEY {_q('ix_' + f)} (kb, {_q(f)}(191), id)" for f in kind.FILTERS)
    vector = f"  vector {vector_type} NULL,\n" if kind.VECTOR else ""
    return (
        f"CREATE TABLE IF NOT EXISTS {table} (\n"
        "  kb VARCHAR(191) NOT NULL,\n"
        "  id VARCHAR(255) NOT NULL,\n"
        f"{filters}"
        "  data LONGTEXT NOT NULL,\n"
        f"{vector}"
        f"  PRIMARY KEY (kb, id){indexes}\n"
        ") DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
    )


def columns_of(kind: type[Record]) -> list[str]:
    return ["kb", "id", *kind.FILTERS, "data", *(["vector"] if kind.VECTOR else [])]


def upsert_sql(kind: type[Record], prefix: str) -> str:
    columns = columns_of(kind)
    updates = ", ".join(f"{_q(c)} = VALUES({_q(c)})" for c in columns[2:])
    return (
        f"INSERT INTO {_q(prefix + kind.KIND)} ({', '.join(map(_q, columns))}) "
        f"VALUES ({', '.join(['%s'] * len(columns))}) ON DUPLICATE KEY UPDATE {updates}"
    )


def where_sql(kind: type[Record], kb: str, where: Filter | None) -> tuple[str, list[Any]] | None:
    """WHERE text and parameters, or None when the filter matches nothing (an empty list)."""
    return codec.sql_where(kind, kb, where, mark="%s", quote=_q)


def knn_sql(kind: type[Record], prefix: str, condition: str, k: int) -> str:
    """TiDB: cosine distance computed (and HNSW-indexed when present) by the server."""
    return (
        f"SELECT id, data, vector, VEC_COSINE_DISTANCE(vector, %s) AS distance "
        f"FROM {_q(prefix + kind.KIND)} WHERE {condition} AND vector IS NOT NULL "
        f"ORDER BY distance LIMIT {int(k)}"
    )


# -- the store ------------------------------------------------------------------------------------


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
        self.vector_index: dict[str, str] = {}  # TiDB: kind -> "hnsw(d)" or why there is none

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
        t = self.target
        cursor.execute("SELECT VERSION()")
        self.version = cursor.fetchone()[0]
        if "tidb" in self.version.lower():
            try:
                cursor.execute("SELECT VEC_COSINE_DISTANCE('[1,0]', '[0,1]')")
                cursor.fetchall()
                self.native_vectors = True
            except pymysql.err.MySQLError:
                self.native_vectors = False
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {_q(t.prefix + 'schema')} "
            "(name VARCHAR(64) PRIMARY KEY, version INT NOT NULL)"
        )
        cursor.execute(f"SELECT version FROM {_q(t.prefix + 'schema')} WHERE name = 'store'")
        row = cursor.fetchone()
        if row and row[0] > SCHEMA_VERSION:
            raise StoreError(
                f"MySQL store {self.where()} has schema version {row[0]}; "
                f"this Compendium knows up to {SCHEMA_VERSION}",
                hint="upgrade Compendium",
            )
        cursor.execute(
            f"CREATE TABLE IF NOT EXISTS {_q(t.prefix + 'generation')} (kb VARCHAR(191) NOT NULL, "
            "kind VARCHAR(64) NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (kb, kind))"
        )
        vector_type = "VECTOR" if self.native_vectors else "MEDIUMBLOB"
        for kind in RECORD_TYPES.values():
            cursor.execute(table_ddl(kind, t.prefix, vector_type))
            self._add_new_filter_columns(cursor, kind)
        cursor.execute(
            f"INSERT INTO {_q(t.prefix + 'schema')} (name, version) VALUES ('store', %s) "
            "ON DUPLICATE KEY UPDATE version = VALUES(version)",
            (SCHEMA_VERSION,),
        )

    def _add_new_filter_columns(self, cursor: Any, kind: type[Record]) -> None:
        # A FILTERS field added after the table was made: add its column, fill it from data.
        table = self.target.prefix + kind.KIND
        cursor.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = DATABASE() AND table_name = %s",
            (table,),
        )
        have = {row[0].lower() for row in cursor.fetchall()}
        for name in kind.FILTERS:
            if name.lower() not in have:
                cursor.execute(f"ALTER TABLE {_q(table)} ADD COLUMN {_q(name)} VARCHAR(1024) NULL")
                cursor.execute(
                    f"UPDATE {_q(table)} SET {_q(name)} = JSON_UNQUOTE(JSON_EXTRACT(data, %s))",
                    (f"$.{name}",),
                )
                cursor.execute(
                    f"ALTER TABLE {_q(table)} ADD KEY {_q('ix_' + name)} (kb, {_q(name)}(191), id)"
                )


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
        return _q(self._server.target.prefix + kind.KIND)

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

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        if self._in_tx():
            yield
            return
        server = self._server
        async with server.tx_lock:
            await self._call("begin a transaction", lambda c: c.execute("BEGIN"), retry=False)
            tx = object()
            server.active_tx = tx
            token = _current_tx.set(tx)
            try:
                yield
            except BaseException:
                server.active_tx = None
                server.matrices.clear()
                await self._call("roll back", lambda c: c.execute("ROLLBACK"), retry=False)
                raise
            else:
                server.active_tx = None
                server.matrices.clear()
                await self._call("commit", lambda c: c.execute("COMMIT"), retry=False)
            finally:
                server.active_tx = None
                _current_tx.reset(token)

    def _bump(self, cursor: Any, kind: type[Record]) -> None:
        # other processes learn from this counter that their cached vectors are stale
        if kind.VECTOR and not self._server.native_vectors:
            cursor.execute(
                f"INSERT INTO {_q(self._server.target.prefix + 'generation')} (kb, kind, n) "
                "VALUES (%s, %s, 1) ON DUPLICATE KEY UPDATE n = n + 1",
                (self.kb, kind.KIND),
            )

    def _encode_vector(self, vector: Vector | None) -> Any:
        if vector is None:
            return None
        return encode_tidb_vector(vector) if self._server.native_vectors else vector.tobytes()

    def _decode_vector(self, value: Any) -> Vector | None:
        if value is None:
            return None
        if self._server.native_vectors:
            return decode_tidb_vector(value.decode() if isinstance(value, bytes) else value)
        return codec.decode_vector(value)

    def _records(self, kind: type[Record], rows: Iterable[tuple]) -> list[Record]:
        try:
            return [
                codec.decode(kind, row[1], self._decode_vector(row[2]) if kind.VECTOR else None)
                for row in rows
            ]
        except (ValueError, TypeError) as exc:
            raise StoreError(f"MySQL store: a {kind.KIND} row is corrupt: {exc}") from exc

    def _select(self, kind: type[Record]) -> str:
        vector = "vector" if kind.VECTOR else "NULL"
        return f"SELECT id, data, {vector} FROM {self._table(kind)}"

    async def _index_vectors(self, kind: type[Record], dim: int) -> None:
        """TiDB: fix the vector column to VECTOR(dim) and add an HNSW index, on the first write.

        DDL commits any open transaction, so this only runs outside one. The cache kind keeps
        an untyped column: it holds vectors of several embedding models.
        """
        server = self._server
        if kind.KIND in server.vector_index or kind.KIND == "cache" or self._in_tx():
            return
        table = self._table(kind)

        def work(cursor: Any) -> str:
            cursor.execute(
                "SELECT column_type FROM information_schema.columns WHERE table_schema = "
                "DATABASE() AND table_name = %s AND column_name = 'vector'",
                (server.target.prefix + kind.KIND,),
            )
            column = str(cursor.fetchone()[0]).lower()
            if column == "vector":
                cursor.execute(f"SELECT 1 FROM {table} WHERE vector IS NOT NULL LIMIT 1")
                if cursor.fetchone():
                    return "none: untyped vector column already holds data"
                cursor.execute(f"ALTER TABLE {table} MODIFY COLUMN vector VECTOR({dim}) NULL")
            try:
                cursor.execute(f"ALTER TABLE {table} SET TIFLASH REPLICA 1")
                cursor.execute(
                    f"ALTER TABLE {table} ADD VECTOR INDEX ix_vector "
                    "((VEC_COSINE_DISTANCE(vector))) USING HNSW"
                )
            except pymysql.err.MySQLError as exc:
                if "duplicate" not in str(exc).lower():
                    return f"none: {exc.args[-1]}"
            return f"hnsw({dim})"

        async with server.tx_lock:
            server.vector_index[kind.KIND] = await self._call(f"index {kind.KIND} vectors", work)

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
                    row.append(self._encode_vector(codec.vector_of(record)))
                rows.append(row)
            batches.append((kind, upsert_sql(kind, prefix), rows))
        if not batches:
            return 0

        def work(cursor: Any) -> int:
            for kind, sql, rows in batches:
                cursor.executemany(sql, rows)
                self._bump(cursor, kind)
            return sum(len(rows) for _, _, rows in batches)

        return await self._write("upsert records", work)

    async def delete(self, kind: type[Record], where: Filter) -> int:
        kind = codec.record_kind(kind)
        condition = where_sql(kind, self.kb, where)
        if condition is None:
            return 0
        sql, params = condition

        def work(cursor: Any) -> int:
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
                cursor.execute(text, [encode_tidb_vector(query), *params])
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
            cursor.execute(
                f"SELECT n FROM {_q(server.target.prefix + 'generation')} WHERE kb = %s AND kind = %s",
                (self.kb, kind.KIND),
            )
            row = cursor.fetchone()
            generation = row[0] if row else 0
            cached = server.matrices.get(key)
            if cached is not None and cached[0] == generation:
                return cached[1], cached[2]
            cursor.execute(
                f"SELECT id, vector FROM {self._table(kind)} WHERE {sql} AND vector IS NOT NULL",
                params,
            )
            rows = cursor.fetchall()
            ids = [r[0] for r in rows]
            if rows and len({len(r[1]) for r in rows}) > 1:
                raise StoreError(f"{kind.KIND} vectors in {server.where()} differ in dimension")
            blob = b"".join(r[1] for r in rows)
            matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1) if rows else None
            if matrix is None:
                matrix = np.empty((0, 0), dtype=np.float32)
            if not in_tx:  # a transaction's view may still roll back: never cache it
                if len(server.matrices) >= 16:
                    server.matrices.pop(next(iter(server.matrices)))
                server.matrices[key] = (generation, ids, matrix)
            return ids, matrix

        return work

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
            "vector_search": "tidb-vector" if server.native_vectors else "numpy",
            "vector_index": dict(server.vector_index),
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
