"""The SQLite store's full-text index: an FTS5 table per kind with text fields, and its SQL.

The index is external-content: FTS5 reads a record's text from the kind's own table through a
view, so no text is stored twice. Its rowid is a 63-bit hash of (kb, id) kept in the table's
`ft` column (the tables have no rowid). Every upsert and delete tells the index, in the same
transaction, which text it forgets and which it adds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

import xxhash

from . import text
from .records import Record

LARGE_TABLE = 20_000  # records of a kind above which full-text ranking skips the commonest words
RANKED_MATCHES = 6_000  # records BM25 ranks at most, above LARGE_TABLE (a few ms per thousand)
Quote = Callable[[str], str]


def key(kb: str, id: str) -> int:
    """The FTS5 rowid of a record."""
    return xxhash.xxh3_64_intdigest(f"{len(kb)}:{kb}:{id}".encode()) & 0x7FFF_FFFF_FFFF_FFFF


def table_of(kind: type[Record]) -> str:
    return f"{kind.KIND}__fts"


def _value(name: str) -> str:
    return f"json_extract(data, '$.{name}')"


def _values(kind: type[Record]) -> str:
    """The indexed values, read from a row's JSON: what FTS5 is told to add and to delete."""
    return ", ".join(_value(name) for name, _ in kind.TEXT)


def _columns(kind: type[Record], q: Quote) -> str:
    return ", ".join(q(name) for name, _ in kind.TEXT)


def ensure_index(conn: sqlite3.Connection, kind: type[Record], have: set[str], q: Quote) -> None:
    """Create the kind's index (and its `ft` column, view) if missing; fill it from the rows
    already there, so a file written before full-text search is indexed on opening."""
    table, fts = q(kind.KIND), table_of(kind)
    if "ft" not in have:
        conn.execute(f"ALTER TABLE {table} ADD COLUMN ft INTEGER")
        rows = conn.execute(f"SELECT kb, id FROM {table}").fetchall()
        conn.executemany(
            f"UPDATE {table} SET ft = ? WHERE kb = ? AND id = ?", [(key(kb, id), kb, id) for kb, id in rows]
        )
    conn.execute(f"CREATE INDEX IF NOT EXISTS {q(kind.KIND + '_ft')} ON {table} (ft)")
    names = [name for name, _ in kind.TEXT]
    columns = ", ".join(f"{_value(n)} AS {q(n)}" for n in names)
    conn.execute(f"CREATE VIEW IF NOT EXISTS {q(kind.KIND + '__text')} AS SELECT ft, {columns} FROM {table}")
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (fts,)).fetchone()
    if exists:
        return
    conn.execute(
        f"CREATE VIRTUAL TABLE {q(fts)} USING fts5({', '.join(map(q, names))}, "
        f"content={q(kind.KIND + '__text')}, content_rowid='ft', "
        "tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute(f"INSERT INTO {q(fts)} ({q(fts)}) VALUES ('rebuild')")


def drop_index(conn: sqlite3.Connection, kind: type[Record], q: Quote) -> None:
    """Drop the index of a kind that no longer has text fields (a file written when it had):
    nothing would keep it in step with the rows. Their `ft` column stays, unused."""
    conn.execute(f"DROP TABLE IF EXISTS {q(table_of(kind))}")
    conn.execute(f"DROP VIEW IF EXISTS {q(kind.KIND + '__text')}")
    conn.execute(f"DROP INDEX IF EXISTS {q(kind.KIND + '_ft')}")


def forget_sql(kind: type[Record], q: Quote, condition: str) -> str:
    """Remove the indexed text of the rows matching `condition`, before they change or go."""
    fts = q(table_of(kind))
    return (
        f"INSERT INTO {fts} ({fts}, rowid, {_columns(kind, q)}) "
        f"SELECT 'delete', ft, {_values(kind)} FROM {q(kind.KIND)} WHERE {condition}"
    )


def add_sql(kind: type[Record], q: Quote) -> str:
    """Index the text of a record being written; parameters from `add_params`.

    The values are bound, not read back from the row (reading them back through the `ft`
    index and parsing the JSON was 45% of indexing): a string is what json_extract gives of
    it; any other value is json_extract of the record's JSON, bound too, so the index holds
    exactly what `forget_sql` later reads from the row.
    """
    fts = q(table_of(kind))
    values = ", ".join(f"ifnull(?, json_extract(?, '$.{name}'))" for name, _ in kind.TEXT)
    return f"INSERT INTO {fts} (rowid, {_columns(kind, q)}) VALUES (?, {values})"


def add_params(kind: type[Record], record: Record, data: str, ft: int) -> tuple[Any, ...]:
    """The parameters of `add_sql` for one record and its JSON text."""
    params: list[Any] = [ft]
    for name, _ in kind.TEXT:
        value = getattr(record, name)
        if value is None:
            params += (None, None)
        elif type(value) is str and "\x00" not in value:
            params += (value, None)
        else:  # lists, numbers, anything the JSON encoder turns into something else
            params += (None, data)
    return tuple(params)


def search_sql(kind: type[Record], q: Quote, condition: str, k: int) -> tuple[str, str]:
    """The ranked search and the match count it falls back on.

    The best matches come first from the index alone; only those are joined to the table and
    filtered (joining every match first cost a row lookup per matching record). Parameters:
    MATCH expression, rank function, window size, then the condition's (it starts "kb = ?").
    """
    fts = q(table_of(kind))
    statement = (
        f"SELECT m.id, m.data, m.vector, -f.rank AS score FROM "
        f"(SELECT rowid, rank FROM {fts} WHERE {fts} MATCH ? AND rank MATCH ? "
        f"ORDER BY rank LIMIT ?) f JOIN {q(kind.KIND)} m ON m.ft = f.rowid "
        f"WHERE m.{condition} ORDER BY score DESC, m.id LIMIT {int(k)}"
    )
    counting = f"SELECT COUNT(*) FROM (SELECT rowid FROM {fts} WHERE {fts} MATCH ? LIMIT ?)"
    return statement, counting


def ranked(
    conn: sqlite3.Connection, statement: str, counting: str, kind: type[Record], terms: list[str],
    columns: Sequence[str] | None, k: int, params: list[Any],
) -> list[tuple]:
    """Rows of the search: a window of the index's best matches, widened only while the
    filter (another knowledge base's records) leaves fewer than k and the index holds more."""
    match = text.fts5_query(terms, columns)
    # bm25() weighs every column: the fields not searched cannot match, so their weight is moot
    rank = "bm25(" + ", ".join(repr(float(w)) for _, w in kind.TEXT) + ")"
    window = max(4 * k, 64)
    while True:
        rows = conn.execute(statement, [match, rank, window, *params]).fetchall()
        if len(rows) >= k or conn.execute(counting, [match, window + 1]).fetchone()[0] <= window:
            return rows
        window *= 8


def indexed(conn: sqlite3.Connection, kind: type[Record], q: Quote) -> int:
    """How many records the kind's index holds (every knowledge base)."""
    return int(conn.execute(f"SELECT count(*) FROM {q(table_of(kind) + '_docsize')}").fetchone()[0])


def selective(
    conn: sqlite3.Connection, kind: type[Record], terms: list[str], columns: Sequence[str] | None,
    size: int, q: Quote,
) -> list[str]:
    """The query's words that BM25 ranking can afford on a large index.

    Ranking costs a few microseconds per matching record, and a word found in a large share of
    the records adds little to BM25 (its IDF is low) while matching most of them. Up to
    LARGE_TABLE records every word is kept (exact BM25); above, words are taken rarest first
    while the records they match stay under RANKED_MATCHES (at least two words).
    """
    if size <= LARGE_TABLE or len(terms) <= 2:
        return terms
    fts = q(table_of(kind))
    counted = []
    for term in terms:
        found = conn.execute(
            f"SELECT count(*) FROM {fts} WHERE {fts} MATCH ?", (text.fts5_query([term], columns),)
        ).fetchone()[0]
        if found:
            counted.append((found, term))
    counted.sort()
    kept: list[str] = []
    total = 0
    for found, term in counted:
        if len(kept) >= 2 and total + found > RANKED_MATCHES:
            break
        kept.append(term)
        total += found
    return kept or terms
