"""The embedded store: one SQLite file per workspace, a table per record kind, KNN by numpy."""

from __future__ import annotations

import operator
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import numpy as np

from ..errors import StoreError
from . import codec, sqlite_text, text
from .base import Filter
from .records import Record, Vector
from .sql_store import SQLStore, vector_matrix
from .sqlite_database import Database, keep_statistics
from .sqlite_database import quote as _q

__all__ = ["SQLiteStore"]

_MATRIX_CACHE_SIZE = 16



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


class SQLiteStore(SQLStore):
    """Store over one SQLite file; see storage/base.py for the contract."""

    MARK = "?"

    def __init__(self, db: Database, kb: str):
        self._db = db
        self.kb = kb
        self.url = db.url

    @classmethod
    def open(cls, path: str, kb: str = "default", url: str | None = None) -> SQLiteStore:
        return cls(Database(path, url or f"sqlite:///{path}"), kb)

    def for_kb(self, kb: str) -> SQLiteStore:
        return SQLiteStore(self._db, kb)

    # -- the dialect the shared reads use -------------------------------------------------------

    def _where(self, kind: type[Record], where: Filter | None) -> tuple[str, list[Any]] | None:
        return codec.sql_where(kind, self.kb, where, mark="?", quote=_q)

    def _text_where(self, kind: type[Record], where: Filter | None) -> tuple[str, list[Any]] | None:
        return codec.sql_where(kind, self.kb, where, mark="?", quote=lambda n: f"m.{_q(n)}")

    def _table(self, kind: type[Record]) -> str:
        return _q(self._db.ensure_table(kind))

    def _select(self, kind: type[Record]) -> str:
        return f"SELECT id, data, vector FROM {self._table(kind)}"

    # -- transactions -------------------------------------------------------------------------

    def _in_tx(self) -> bool:
        return self._db.transactions.inside()

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
            try:
                with db.transactions.held():
                    yield
            except BaseException:
                with db.errors("roll back"):
                    db.conn.execute("ROLLBACK")
                db.forget_vectors()
                raise
            else:
                try:
                    with db.errors("commit"):
                        db.conn.execute("COMMIT")
                except StoreError:
                    db.abandon()
                    raise

    async def _write(self, doing: str, work: Callable[[Any], int]) -> int:
        """Run `work(cursor)` atomically: inside the caller's transaction, or in one of its own."""
        db = self._db
        if self._in_tx():
            with db.errors(doing):
                return work(db.conn.cursor())
        async with db.lock:
            with db.errors(doing):
                db.conn.execute("BEGIN IMMEDIATE")
                try:
                    result = work(db.conn.cursor())
                    db.conn.execute("COMMIT")
                except BaseException:
                    db.abandon()
                    raise
                return result

    async def _read(self, doing: str, work: Callable[[Any], Any]) -> Any:
        """Reads wait for another task's open transaction, so they never see its partial writes."""
        db = self._db
        if self._in_tx() or not db.lock.locked():
            with db.errors(doing):
                return work(db.conn.cursor())
        async with db.lock:
            with db.errors(doing):
                return work(db.conn.cursor())

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

        def work(conn: sqlite3.Cursor) -> int:
            total = 0
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

    def _delete_rows(self, cursor: Any, kind: type[Record], sql: str, params: list[Any]) -> int:
        table = self._table(kind)
        if kind.TEXT:
            cursor.execute(sqlite_text.forget_sql(kind, _q, sql), params)
        count = cursor.execute(f"DELETE FROM {table} WHERE {sql}", params).rowcount
        self._db.forget_vectors(kind.KIND)
        return count

    # -- reads --------------------------------------------------------------------------------

    def _records(self, kind: type[Record], rows: Iterable[tuple]) -> list[Record]:
        try:
            return [codec.decode(kind, data, codec.decode_vector(blob)) for _, data, blob in rows]
        except (ValueError, TypeError) as exc:
            raise StoreError(
                f"SQLite store {self._db.path}: a {kind.KIND} row is corrupt: {exc}"
            ) from exc

    async def _ranked_vectors(
        self, kind: type[Record], query: Vector, k: int, condition: tuple[str, list[Any]],
        where: Filter | None,
    ) -> list[tuple[Record, float]]:
        sql, params = condition
        key = (self.kb, kind.KIND, repr(sorted((where or {}).items(), key=lambda kv: kv[0])))

        def work(cursor: sqlite3.Cursor) -> tuple[list[str], np.ndarray]:
            db = self._db
            db.check_outside_writes()
            cached = db.matrices.get(key)
            if cached is not None:
                db.matrices.move_to_end(key)
                return cached
            rows = cursor.execute(
                f"SELECT id, vector FROM {self._table(kind)} WHERE {sql} AND vector IS NOT NULL", params
            ).fetchall()
            db.matrices[key] = vector_matrix(rows, f"{kind.KIND} vectors in {db.path}")
            if len(db.matrices) > _MATRIX_CACHE_SIZE:
                db.matrices.popitem(last=False)
            return db.matrices[key]

        ids, matrix = await self._read(f"search {kind.KIND} vectors", work)
        return await self._nearest(kind, ids, matrix, query, k)

    async def _ranked_text(
        self, search: text.TextSearch, condition: tuple[str, list[Any]], where: Filter | None,
        fields: Sequence[str] | None,
    ) -> list[tuple[Record, float]]:
        kind, chosen, terms, k = search
        sql, params = condition
        columns = None if fields is None else list(chosen)
        statement, counting = sqlite_text.search_sql(kind, _q, sql, k)

        def work(cursor: sqlite3.Cursor) -> list[tuple]:
            self._db.ensure_table(kind)
            db = self._db
            db.check_outside_writes()
            size = db.text_sizes.get(kind.KIND)
            if size is None:  # counting a large index takes tens of ms: once per change
                size = db.text_sizes[kind.KIND] = sqlite_text.indexed(db.conn, kind, _q)
            chosen_terms = sqlite_text.selective(db.conn, kind, terms, columns, size, _q)
            return sqlite_text.ranked(db.conn, statement, counting, kind, chosen_terms, columns, k, params)

        rows = await self._read(f"search {kind.KIND} text", work)
        records = self._records(kind, [row[:3] for row in rows])
        return [(r, float(row[3])) for r, row in zip(records, rows, strict=True)]

    async def knowledge_bases(self) -> list[str]:
        def work(cursor: sqlite3.Cursor) -> list[str]:
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
        keep_statistics(db.conn)
        try:
            db.conn.close()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot close SQLite store {db.path}: {exc}") from exc
