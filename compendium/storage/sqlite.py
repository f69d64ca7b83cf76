"""The embedded store: one SQLite file per workspace, a table per record kind, KNN by numpy."""

from __future__ import annotations

import asyncio
import contextvars
import operator
import sqlite3
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StoreError
from . import codec, sqlite_text, text
from .base import Filter
from .records import RECORD_TYPES, Record, Vector

# 2: record tables keep their rowids (a schema 1 file's WITHOUT ROWID tables are rebuilt on
# opening). A row of a few KB spilled to overflow pages in a WITHOUT ROWID table's B-tree, and
# rows inserted in random id order rewrote whole leaf pages: 11k extracts cost 0.46 s of CPU and
# 322 MB of WAL that way, 0.25 s and 194 MB appended to a rowid table with a unique (kb, id) index.
SCHEMA_VERSION = 2
_PAGE_SIZE = 16_384  # a new file's pages: most JSON rows fit one page (no effect on a file made)
_MAX_PARAMS = 500  # ids per IN (...) query, well under SQLite's variable limit
_MATRIX_CACHE_SIZE = 16
_CACHE_KIB = 64 * 1024  # the connection's page cache; SQLite fills it only as pages are used

# The transaction the current task (and tasks it spawned) is inside, if any.
_current_tx: contextvars.ContextVar[object | None] = contextvars.ContextVar(
    "compendium_sqlite_tx", default=None
)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class _Errors:
    """Context manager turning sqlite3 errors into StoreError naming what was being done."""

    def __init__(self, db: _Database, doing: str):
        self.db, self.doing = db, doing

    def __enter__(self) -> None:
        if self.db.closed:
            raise StoreError(f"the SQLite store {self.db.path} is closed")

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"SQLite store {self.db.path}: cannot {self.doing}: {exc}") from exc


class _Database:
    """One connection shared by every kb-scoped store opened on the same file."""

    def __init__(self, path: str, url: str):
        self.path, self.url = path, url
        self.conn: sqlite3.Connection | None = None
        try:
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
            self.conn.execute(f"PRAGMA page_size={_PAGE_SIZE}")
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA busy_timeout=30000")
            # A compile writes its KB in bulk (100k claims at once, with random ids and their
            # full-text index): with SQLite's 2 MiB default the B-tree pages are evicted and
            # read back between inserts (measured: 3.9 -> 3.3 s of CPU for 122k records).
            self.conn.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        except (sqlite3.Error, OSError) as exc:
            if self.conn is not None:
                self.conn.close()
            raise StoreError(f"cannot open SQLite store {path}: {exc}") from exc
        if version > SCHEMA_VERSION:
            self.conn.close()
            raise StoreError(
                f"SQLite store {path} has schema version {version}; "
                f"this Compendium knows up to {SCHEMA_VERSION}",
                hint="upgrade Compendium",
            )
        self.lock = asyncio.Lock()
        self.active_tx: object | None = None
        self.tables: set[str] = set()
        # (kb, kind, filter) -> (ids, matrix); dropped when that kind is written
        self.matrices: OrderedDict[tuple[str, str, str], tuple[list[str], np.ndarray]] = (
            OrderedDict()
        )
        self.data_version = -1
        self.text_sizes: dict[str, int] = {}  # kind -> records in its FTS index; dropped on writes
        self.closed = False
        if version == SCHEMA_VERSION:
            with self.errors("create tables"):
                for kind in RECORD_TYPES.values():
                    self.ensure_table(kind)
        else:
            try:
                self._upgrade()
            except BaseException:
                self.conn.close()
                raise

    def _upgrade(self) -> None:
        """Create a new file's tables, or bring an older file's up to this schema, in one
        transaction: another process opening the file meanwhile waits, then finds it done."""
        with self.errors("bring the tables up to date"):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for kind in RECORD_TYPES.values():
                    self.ensure_table(kind)
                    self._keep_rowids(kind)
                self.conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                    self.conn.execute("ROLLBACK")
                self.tables.clear()
                raise

    def errors(self, doing: str) -> _Errors:
        return _Errors(self, doing)

    def ensure_table(self, kind: type[Record]) -> str:
        table = kind.KIND
        if table in self.tables:
            return table
        self.conn.execute(_table_sql(kind, table))
        # A FILTERS field added after the table was made: add its column, fill it from data.
        have = {row[1] for row in self.conn.execute(f"PRAGMA table_info({_q(table)})")}
        for name in kind.FILTERS:
            if name not in have:
                self.conn.execute(f"ALTER TABLE {_q(table)} ADD COLUMN {_q(name)}")
                self.conn.execute(
                    f"UPDATE {_q(table)} SET {_q(name)} = json_extract(data, ?)", (f"$.{name}",)
                )
            self.conn.execute(
                f"CREATE INDEX IF NOT EXISTS {_q(f'{table}_{name}')} "
                f"ON {_q(table)} (kb, {_q(name)}, id)"
            )
        for name in have - {"kb", "id", "data", "vector", "ft", *kind.FILTERS}:  # a field no longer a filter
            self.conn.execute(f"DROP INDEX IF EXISTS {_q(f'{table}_{name}')}")  # its column stays, unused
        if kind.TEXT:
            sqlite_text.ensure_index(self.conn, kind, have, _q)
        elif "ft" in have:
            sqlite_text.drop_index(self.conn, kind, _q)
        self.tables.add(table)
        return table

    def _keep_rowids(self, kind: type[Record]) -> None:
        """Rebuild a schema 1 table (WITHOUT ROWID) as a rowid table holding the same rows.

        Its full-text index stays valid: it is keyed by the `ft` column, copied with the rows.
        """
        table = kind.KIND
        made = self.conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        if made is None or "WITHOUT ROWID" not in made[0].upper():
            return
        staging = f"{table}__rebuilt"
        self.conn.execute(f"DROP TABLE IF EXISTS {_q(staging)}")
        self.conn.execute(_table_sql(kind, staging))
        wanted = [row[1] for row in self.conn.execute(f"PRAGMA table_info({_q(staging)})")]
        columns = ", ".join(map(_q, wanted))  # ensure_table gave the old table every one of them
        self.conn.execute(
            f"INSERT INTO {_q(staging)} ({columns}) SELECT {columns} FROM {_q(table)} ORDER BY kb, id"
        )
        self.conn.execute(f"DROP VIEW IF EXISTS {_q(table + '__text')}")
        self.conn.execute(f"DROP TABLE {_q(table)}")  # and its indexes, made again below
        self.conn.execute(f"ALTER TABLE {_q(staging)} RENAME TO {_q(table)}")
        self.tables.discard(table)
        self.ensure_table(kind)
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone():
            self.conn.execute("PRAGMA analysis_limit=400")  # the table's statistics went with it
            self.conn.execute(f"ANALYZE {_q(table)}")

    def forget_vectors(self, kind: str | None = None) -> None:
        if kind is None:
            self.matrices.clear()
            self.text_sizes.clear()
            return
        self.text_sizes.pop(kind, None)
        for key in [key for key in self.matrices if key[1] == kind]:
            del self.matrices[key]

    def check_outside_writes(self) -> None:
        # data_version moves when another connection (another process) commits.
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self.data_version:
            self.matrices.clear()
            self.text_sizes.clear()
            self.data_version = version


def _table_sql(kind: type[Record], table: str) -> str:
    filters = "".join(f", {_q(f)}" for f in kind.FILTERS)
    ft = ", ft INTEGER" if kind.TEXT else ""
    return (
        f"CREATE TABLE IF NOT EXISTS {_q(table)} (kb TEXT NOT NULL, id TEXT NOT NULL{filters}, "
        f"data TEXT NOT NULL, vector BLOB{ft}, UNIQUE (kb, id))"
    )


_id_of = operator.attrgetter("id")
_FILTER_GETTERS: dict[type[Record], Callable[[Record], tuple[Any, ...]]] = {}


def filters(record: Record, kind: type[Record]) -> tuple[Any, ...]:
    """The record's FILTERS column values, checked as codec.filter_value checks them."""
    getter = _FILTER_GETTERS.get(kind)
    if getter is None:
        names = kind.FILTERS
        if not names:
            getter = lambda r: ()  # noqa: E731
        elif len(names) == 1:
            one = operator.attrgetter(names[0])
            getter = lambda r: (one(r),)  # noqa: E731
        else:
            getter = operator.attrgetter(*names)
        _FILTER_GETTERS[kind] = getter
    values = getter(record)
    for value in values:
        if isinstance(value, list | dict | tuple | set):
            codec.filter_value(record, kind.FILTERS[values.index(value)])  # raises, naming the field
    return values


def _where(kind: type[Record], kb: str, where: Filter | None) -> tuple[str, list[Any]] | None:
    return codec.sql_where(kind, kb, where, mark="?", quote=_q)


class SQLiteStore(codec.GetOne):
    """Store over one SQLite file; see storage/base.py for the contract."""

    def __init__(self, db: _Database, kb: str):
        self._db = db
        self.kb = kb
        self.url = db.url

    @classmethod
    def open(cls, path: str, kb: str = "default", url: str | None = None) -> SQLiteStore:
        return cls(_Database(path, url or f"sqlite:///{path}"), kb)

    def for_kb(self, kb: str) -> SQLiteStore:
        return SQLiteStore(self._db, kb)

    # -- transactions -------------------------------------------------------------------------

    def _in_tx(self) -> bool:
        return self._db.active_tx is not None and _current_tx.get() is self._db.active_tx

    @asynccontextmanager
    async def transaction(self, *, serialized: bool = False) -> AsyncIterator[None]:
        # Every write transaction here is serialized: BEGIN IMMEDIATE takes the file's write lock.
        if self._in_tx():
            yield  # nested: joins the outer transaction
            return
        db = self._db
        async with db.lock:
            with db.errors("begin a transaction"):
                db.conn.execute("BEGIN IMMEDIATE")
            tx = object()
            db.active_tx = tx
            token = _current_tx.set(tx)
            try:
                yield
            except BaseException:
                db.active_tx = None
                with db.errors("roll back"):
                    db.conn.execute("ROLLBACK")
                db.forget_vectors()
                raise
            else:
                db.active_tx = None
                try:
                    with db.errors("commit"):
                        db.conn.execute("COMMIT")
                except StoreError:
                    if db.conn.in_transaction:
                        db.conn.execute("ROLLBACK")
                    db.forget_vectors()
                    raise
            finally:
                db.active_tx = None
                _current_tx.reset(token)

    async def _write(self, doing: str, work: Callable[[], int]) -> int:
        """Run `work` atomically: inside the caller's transaction, or in one of its own."""
        db = self._db
        if self._in_tx():
            with db.errors(doing):
                return work()
        async with db.lock:
            with db.errors(doing):
                db.conn.execute("BEGIN IMMEDIATE")
                try:
                    result = work()
                    db.conn.execute("COMMIT")
                except BaseException:
                    if db.conn.in_transaction:
                        db.conn.execute("ROLLBACK")
                    db.forget_vectors()
                    raise
                return result

    async def _read(self, doing: str, work: Callable[[], Any]) -> Any:
        """Reads wait for another task's open transaction, so they never see its partial writes."""
        db = self._db
        if self._in_tx() or not db.lock.locked():
            with db.errors(doing):
                return work()
        async with db.lock:
            with db.errors(doing):
                return work()

    # -- writes -------------------------------------------------------------------------------

    async def upsert(self, records: Iterable[Record]) -> int:
        groups = codec.group_by_kind(records)
        if not groups:
            return 0
        rows_by_kind = []
        for kind, items in groups.items():
            rows, texts = [], []
            # One row per id, the last given (the index must be told each row's text once),
            # in id order: the (kb, id) index is then filled page after page.
            ordered = sorted({record.id: record for record in items}.values(), key=_id_of)
            for record, data in zip(ordered, codec.encode_all(kind, ordered), strict=True):
                vector = codec.vector_of(record)
                row = (self.kb, record.id, *filters(record, kind), data, codec.encode_vector(vector))
                if kind.TEXT:
                    ft = sqlite_text.key(self.kb, record.id)
                    row = (*row, ft)
                    texts.append(sqlite_text.add_params(kind, record, data, ft))
                rows.append(row)
            rows_by_kind.append((kind, rows, texts, len(items)))

        def work() -> int:
            total = 0
            conn = self._db.conn
            for kind, rows, texts, given in rows_by_kind:
                table = self._db.ensure_table(kind)
                columns = ["kb", "id", *kind.FILTERS, "data", "vector", *(["ft"] if kind.TEXT else [])]
                updates = ", ".join(f"{_q(c)} = excluded.{_q(c)}" for c in columns[2:])
                if texts:  # the index forgets the old text before the row changes
                    conn.executemany(sqlite_text.forget_sql(kind, _q, "ft = ?"), [(row[-1],) for row in rows])
                conn.executemany(
                    f"INSERT INTO {_q(table)} ({', '.join(map(_q, columns))}) "
                    f"VALUES ({', '.join('?' * len(columns))}) "
                    f"ON CONFLICT (kb, id) DO UPDATE SET {updates}",
                    rows,
                )
                if texts:
                    conn.executemany(sqlite_text.add_sql(kind, _q), texts)
                self._db.forget_vectors(kind.KIND)
                total += given
            return total

        return await self._write("upsert records", work)

    async def delete(self, kind: type[Record], where: Filter) -> int:
        kind = codec.record_kind(kind)
        condition = _where(kind, self.kb, where)
        if condition is None:
            return 0
        sql, params = condition

        def work() -> int:
            table = self._db.ensure_table(kind)
            if kind.TEXT:
                self._db.conn.execute(sqlite_text.forget_sql(kind, _q, sql), params)
            cursor = self._db.conn.execute(f"DELETE FROM {_q(table)} WHERE {sql}", params)
            self._db.forget_vectors(kind.KIND)
            return cursor.rowcount

        return await self._write(f"delete {kind.KIND} records", work)

    # -- reads --------------------------------------------------------------------------------

    def _rows_to_records(self, kind: type[Record], rows: Iterable[tuple]) -> list[Record]:
        try:
            return [codec.decode(kind, data, codec.decode_vector(blob)) for _, data, blob in rows]
        except (ValueError, TypeError) as exc:
            raise StoreError(
                f"SQLite store {self._db.path}: a {kind.KIND} row is corrupt: {exc}"
            ) from exc

    async def get(self, kind: type[Record], ids: Sequence[str]) -> list[Record]:
        kind = codec.record_kind(kind)
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []

        def work() -> dict[str, Record]:
            table = self._db.ensure_table(kind)
            found: dict[str, Record] = {}
            for start in range(0, len(wanted), _MAX_PARAMS):
                part = wanted[start : start + _MAX_PARAMS]
                rows = self._db.conn.execute(
                    f"SELECT id, data, vector FROM {_q(table)} "
                    f"WHERE kb = ? AND id IN ({', '.join('?' * len(part))})",
                    [self.kb, *part],
                ).fetchall()
                for row, record in zip(rows, self._rows_to_records(kind, rows), strict=True):
                    found[row[0]] = record
            return found

        found = await self._read(f"get {kind.KIND} records", work)
        return [found[i] for i in ids if i in found]

    async def scan(
        self, kind: type[Record], where: Filter | None = None, *, batch_size: int = 1000
    ) -> AsyncIterator[Record]:
        kind = codec.record_kind(kind)
        condition = _where(kind, self.kb, where)
        if condition is None:
            return
        sql, params = condition
        batch_size = max(1, int(batch_size))
        last: str | None = None
        while True:
            # keyset paging: memory stays bounded by batch_size whatever the table holds
            after = "" if last is None else " AND id > ?"
            page_params = [*params] if last is None else [*params, last]

            def work(after: str = after, page_params: list[Any] = page_params) -> list[tuple]:
                table = self._db.ensure_table(kind)
                return self._db.conn.execute(
                    f"SELECT id, data, vector FROM {_q(table)} WHERE {sql}{after} "
                    f"ORDER BY id LIMIT {batch_size}",
                    page_params,
                ).fetchall()

            rows = await self._read(f"scan {kind.KIND} records", work)
            for record in self._rows_to_records(kind, rows):
                yield record
            if len(rows) < batch_size:
                return
            last = rows[-1][0]

    async def count(self, kind: type[Record], where: Filter | None = None) -> int:
        kind = codec.record_kind(kind)
        condition = _where(kind, self.kb, where)
        if condition is None:
            return 0
        sql, params = condition

        def work() -> int:
            table = self._db.ensure_table(kind)
            return self._db.conn.execute(
                f"SELECT COUNT(*) FROM {_q(table)} WHERE {sql}", params
            ).fetchone()[0]

        return await self._read(f"count {kind.KIND} records", work)

    async def knn(
        self, kind: type[Record], vector: Vector, k: int, where: Filter | None = None
    ) -> list[tuple[Record, float]]:
        kind = codec.record_kind(kind)
        query = codec.unit_query(kind, vector)
        condition = _where(kind, self.kb, where)
        if condition is None or k <= 0:
            return []
        sql, params = condition
        key = (self.kb, kind.KIND, repr(sorted((where or {}).items(), key=lambda kv: kv[0])))

        def work() -> tuple[list[str], np.ndarray]:
            db = self._db
            db.check_outside_writes()
            cached = db.matrices.get(key)
            if cached is not None:
                db.matrices.move_to_end(key)
                return cached
            table = db.ensure_table(kind)
            rows = db.conn.execute(
                f"SELECT id, vector FROM {_q(table)} WHERE {sql} AND vector IS NOT NULL", params
            ).fetchall()
            ids = [row[0] for row in rows]
            if rows:
                blob = b"".join(row[1] for row in rows)
                if len(blob) % (4 * len(rows)):
                    raise StoreError(f"{kind.KIND} vectors in {db.path} differ in dimension")
                matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1)
            else:
                matrix = np.empty((0, query.shape[0]), dtype=np.float32)
            db.matrices[key] = (ids, matrix)
            if len(db.matrices) > _MATRIX_CACHE_SIZE:
                db.matrices.popitem(last=False)
            return ids, matrix

        ids, matrix = await self._read(f"search {kind.KIND} vectors", work)
        if not ids:
            return []
        if matrix.shape[1] != query.shape[0]:
            raise StoreError(
                f"knn on {kind.KIND}: query has {query.shape[0]} dimensions, "
                f"stored vectors have {matrix.shape[1]}"
            )
        rows, scores = codec.top_k(matrix, query, k)
        records = await self.get(kind, [ids[i] for i in rows])
        by_id = {r.id: r for r in records}
        return [
            (by_id[ids[i]], float(s)) for i, s in zip(rows, scores, strict=True) if ids[i] in by_id
        ]

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
        condition = codec.sql_where(kind, self.kb, where, mark="?", quote=lambda n: f"m.{_q(n)}")
        if condition is None or not terms or k == 0:
            return []
        sql, params = condition
        columns = None if fields is None else list(chosen)
        statement, counting = sqlite_text.search_sql(kind, _q, sql, k)

        def work() -> list[tuple]:
            self._db.ensure_table(kind)
            db = self._db
            db.check_outside_writes()
            size = db.text_sizes.get(kind.KIND)
            if size is None:  # counting a large index takes tens of ms: once per change
                size = db.text_sizes[kind.KIND] = sqlite_text.indexed(db.conn, kind, _q)
            chosen_terms = sqlite_text.selective(db.conn, kind, terms, columns, size, _q)
            return sqlite_text.ranked(db.conn, statement, counting, kind, chosen_terms, columns, k, params)

        rows = await self._read(f"search {kind.KIND} text", work)
        records = self._rows_to_records(kind, [row[:3] for row in rows])
        return [(r, float(row[3])) for r, row in zip(records, rows, strict=True)]

    async def knowledge_bases(self) -> list[str]:
        def work() -> list[str]:
            union = " UNION ".join(
                f"SELECT DISTINCT kb FROM {_q(t)}" for t in sorted(self._db.tables)
            )
            return sorted(row[0] for row in self._db.conn.execute(union))

        return await self._read("list knowledge bases", work)

    async def info(self) -> dict[str, Any]:
        return {
            "backend": "sqlite",
            "serialized_transactions": True,
            "url": self.url,
            "kb": self.kb,
            "path": self._db.path,
            "vector_search": "numpy",
            "full_text": "fts5 bm25",
            "sqlite_version": sqlite3.sqlite_version,
        }

    async def close(self) -> None:
        db = self._db
        if db.closed:
            return
        db.closed = True
        db.matrices.clear()
        _keep_statistics(db.conn)
        try:
            db.conn.close()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot close SQLite store {db.path}: {exc}") from exc


def _keep_statistics(conn: sqlite3.Connection) -> None:
    """Table statistics for the query planner, made or refreshed when the store closes. Without
    them SQLite reads a filtered scan's whole table in id order rather than use the filter's
    index (a document's 4 chunks took 0.13 s at 100k chunks, 0.3 ms by the index)."""
    try:
        conn.execute("PRAGMA busy_timeout=0")  # another writer holds the file: next time, then
        conn.execute("PRAGMA analysis_limit=400")  # sampled: 0.14 s on a 1.7 GB store
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone() is None:
            conn.execute("ANALYZE")
        else:
            conn.execute("PRAGMA optimize")
    except sqlite3.Error:
        pass  # statistics only speed queries up
