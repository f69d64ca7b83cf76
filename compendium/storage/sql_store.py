"""What the SQL backends (SQLite, MySQL) do alike: reads by id, keyset scans, counts, deletes,
the vector ranking after a matrix is loaded, and the checks in front of a text search."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import StoreError
from . import codec, text
from .base import Filter
from .records import Record, Vector

MAX_IDS = 500  # ids per IN (...) query, well under every driver's parameter limit


class SQLStore(codec.GetOne):
    """The Store operations whose SQL is the same on every SQL backend. A backend supplies its
    dialect (the placeholder, how a kind's table is named and read) and runs `work(cursor)`
    through `_read` / `_write`, which hold its locks and translate its driver's errors."""

    kb: str
    MARK: str  # the driver's placeholder

    # -- what a backend supplies ----------------------------------------------------------------

    def _where(self, kind: type[Record], where: Filter | None) -> tuple[str, list[Any]] | None:
        """WHERE text and parameters in this knowledge base; None when nothing can match."""
        raise NotImplementedError

    def _text_where(self, kind: type[Record], where: Filter | None) -> tuple[str, list[Any]] | None:
        """The filter as a text search's statement names the record table's columns."""
        return self._where(kind, where)

    def _table(self, kind: type[Record]) -> str:
        """The kind's quoted table name; called inside `work`, so a backend may create it."""
        raise NotImplementedError

    def _select(self, kind: type[Record]) -> str:
        """`SELECT id, data, vector FROM table` (the row shape `_records` reads)."""
        raise NotImplementedError

    def _records(self, kind: type[Record], rows: Iterable[tuple]) -> list[Record]:
        raise NotImplementedError

    async def _read(self, doing: str, work: Callable[[Any], Any]) -> Any:
        raise NotImplementedError

    async def _write(self, doing: str, work: Callable[[Any], int]) -> int:
        raise NotImplementedError

    def _delete_rows(self, cursor: Any, kind: type[Record], sql: str, params: list[Any]) -> int:
        """Delete the rows a condition selects (and their words from the text index)."""
        raise NotImplementedError

    async def _ranked_text(
        self, search: text.TextSearch, condition: tuple[str, list[Any]], where: Filter | None,
        fields: Sequence[str] | None,
    ) -> list[tuple[Record, float]]:
        """The k best records for the search's terms among those `condition` selects, best first."""
        raise NotImplementedError

    async def _ranked_vectors(
        self, kind: type[Record], query: Vector, k: int, condition: tuple[str, list[Any]],
        where: Filter | None,
    ) -> list[tuple[Record, float]]:
        """The k records nearest the unit vector `query` among those `condition` selects."""
        raise NotImplementedError

    # -- the shared operations ----------------------------------------------------------------

    async def get(self, kind: type[Record], ids: Sequence[str]) -> list[Record]:
        kind = codec.record_kind(kind)
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        mark = self.MARK

        def work(cursor: Any) -> list[tuple]:
            rows: list[tuple] = []
            for start in range(0, len(wanted), MAX_IDS):
                part = wanted[start : start + MAX_IDS]
                cursor.execute(
                    f"{self._select(kind)} WHERE kb = {mark} AND id IN ({', '.join([mark] * len(part))})",
                    [self.kb, *part],
                )
                rows.extend(cursor.fetchall())
            return rows

        rows = await self._read(f"get {kind.KIND} records", work)
        found = {row[0]: record for row, record in zip(rows, self._records(kind, rows), strict=True)}
        return [found[i] for i in ids if i in found]

    async def scan(
        self, kind: type[Record], where: Filter | None = None, *, batch_size: int = 1000
    ) -> AsyncIterator[Record]:
        kind = codec.record_kind(kind)
        condition = self._where(kind, where)
        if condition is None:
            return
        sql, params = condition
        size = max(1, int(batch_size))
        last: str | None = None
        while True:
            # keyset paging: memory stays bounded by batch_size whatever the table holds
            after, page = ("", params) if last is None else (f" AND id > {self.MARK}", [*params, last])

            def work(cursor: Any, after: str = after, page: list[Any] = page) -> list[tuple]:
                cursor.execute(f"{self._select(kind)} WHERE {sql}{after} ORDER BY id LIMIT {size}", page)
                return list(cursor.fetchall())

            rows = await self._read(f"scan {kind.KIND} records", work)
            for record in self._records(kind, rows):
                yield record
            if len(rows) < size:
                return
            last = rows[-1][0]

    async def count(self, kind: type[Record], where: Filter | None = None) -> int:
        kind = codec.record_kind(kind)
        condition = self._where(kind, where)
        if condition is None:
            return 0
        sql, params = condition

        def work(cursor: Any) -> int:
            cursor.execute(f"SELECT COUNT(*) FROM {self._table(kind)} WHERE {sql}", params)
            return int(cursor.fetchone()[0])

        return await self._read(f"count {kind.KIND} records", work)

    async def delete(self, kind: type[Record], where: Filter) -> int:
        kind = codec.record_kind(kind)
        condition = self._where(kind, where)
        if condition is None:
            return 0
        sql, params = condition
        return await self._write(
            f"delete {kind.KIND} records", lambda cursor: self._delete_rows(cursor, kind, sql, params)
        )

    async def search_text(
        self,
        kind: type[Record],
        query: str,
        k: int,
        where: Filter | None = None,
        *,
        fields: Sequence[str] | None = None,
    ) -> list[tuple[Record, float]]:
        search = text.prepare_search(kind, query, k, fields)
        condition = self._text_where(search.kind, where)
        if condition is None or not search.terms or search.k == 0:
            return []
        return await self._ranked_text(search, condition, where, fields)

    async def knn(
        self, kind: type[Record], vector: Vector, k: int, where: Filter | None = None
    ) -> list[tuple[Record, float]]:
        kind = codec.record_kind(kind)
        query = codec.unit_query(kind, vector)
        condition = self._where(kind, where)
        if condition is None or k <= 0:
            return []
        return await self._ranked_vectors(kind, query, k, condition, where)

    async def _nearest(
        self, kind: type[Record], ids: list[str], matrix: np.ndarray, query: Vector, k: int
    ) -> list[tuple[Record, float]]:
        """The k records whose rows of `matrix` (one per id) are nearest `query`, with scores."""
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
            (by_id[ids[i]], float(s)) for i, s in zip(picked, scores, strict=True) if ids[i] in by_id
        ]


def vector_matrix(rows: Sequence[tuple], what: str) -> tuple[list[str], np.ndarray]:
    """Ids and a float32 matrix (one row each) from (id, vector bytes) rows."""
    ids = [r[0] for r in rows]
    if rows and len({len(r[1]) for r in rows}) > 1:
        raise StoreError(f"{what} differ in dimension")
    blob = b"".join(r[1] for r in rows)
    matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1) if rows else None
    if matrix is None:
        matrix = np.empty((0, 0), dtype=np.float32)
    return ids, matrix
