"""The SQLite file under a store: its one shared connection, its tables and their upgrades."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import StoreError
from . import sqlite_text
from .records import RECORD_TYPES, Record
from .transaction_owner import TransactionOwner

# 2: record tables keep their rowids (a schema 1 file's WITHOUT ROWID tables are rebuilt on
# opening). A row of a few KB spilled to overflow pages in a WITHOUT ROWID table's B-tree, and
# rows inserted in random id order rewrote whole leaf pages: 11k extracts cost 0.46 s of CPU and
# 322 MB of WAL that way, 0.25 s and 194 MB appended to a rowid table with a unique (kb, id) index.
SCHEMA_VERSION = 2
_PAGE_SIZE = 16_384  # a new file's pages: most JSON rows fit one page (no effect on a file made)
_CACHE_KIB = 64 * 1024  # the connection's page cache; SQLite fills it only as pages are used


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Errors:
    """Context manager turning sqlite3 errors into StoreError naming what was being done."""

    def __init__(self, db: Database, doing: str):
        self.db, self.doing = db, doing

    def __enter__(self) -> None:
        if self.db.closed:
            raise StoreError(f"the SQLite store {self.db.path} is closed")

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"SQLite store {self.db.path}: cannot {self.doing}: {exc}") from exc


class Database:
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
        self.transactions = TransactionOwner("compendium_sqlite_tx")
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

    def errors(self, doing: str) -> Errors:
        return Errors(self, doing)

    def ensure_table(self, kind: type[Record]) -> str:
        table = kind.KIND
        if table in self.tables:
            return table
        self.conn.execute(_table_sql(kind, table))
        # A FILTERS field added after the table was made: add its column, fill it from data.
        have = {row[1] for row in self.conn.execute(f"PRAGMA table_info({quote(table)})")}
        for name in kind.FILTERS:
            if name not in have:
                self.conn.execute(f"ALTER TABLE {quote(table)} ADD COLUMN {quote(name)}")
                self.conn.execute(
                    f"UPDATE {quote(table)} SET {quote(name)} = json_extract(data, ?)", (f"$.{name}",)
                )
            self.conn.execute(
                f"CREATE INDEX IF NOT EXISTS {quote(f'{table}_{name}')} "
                f"ON {quote(table)} (kb, {quote(name)}, id)"
            )
        for name in have - {"kb", "id", "data", "vector", "ft", *kind.FILTERS}:  # a field no longer a filter
            self.conn.execute(f"DROP INDEX IF EXISTS {quote(f'{table}_{name}')}")  # its column stays, unused
        if kind.TEXT:
            sqlite_text.ensure_index(self.conn, kind, have, quote)
        elif "ft" in have:
            sqlite_text.drop_index(self.conn, kind, quote)
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
        self.conn.execute(f"DROP TABLE IF EXISTS {quote(staging)}")
        self.conn.execute(_table_sql(kind, staging))
        wanted = [row[1] for row in self.conn.execute(f"PRAGMA table_info({quote(staging)})")]
        columns = ", ".join(map(quote, wanted))  # ensure_table gave the old table every one of them
        self.conn.execute(
            f"INSERT INTO {quote(staging)} ({columns}) SELECT {columns} FROM {quote(table)} ORDER BY kb, id"
        )
        self.conn.execute(f"DROP VIEW IF EXISTS {quote(table + '__text')}")
        self.conn.execute(f"DROP TABLE {quote(table)}")  # and its indexes, made again below
        self.conn.execute(f"ALTER TABLE {quote(staging)} RENAME TO {quote(table)}")
        self.tables.discard(table)
        self.ensure_table(kind)
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'").fetchone():
            self.conn.execute("PRAGMA analysis_limit=400")  # the table's statistics went with it
            self.conn.execute(f"ANALYZE {quote(table)}")

    def abandon(self) -> None:
        """After a failed write: roll back what is still open (SQLite may have rolled back
        already, on a full disk) and forget the vectors read meanwhile."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
        self.forget_vectors()

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
    filters = "".join(f", {quote(f)}" for f in kind.FILTERS)
    ft = ", ft INTEGER" if kind.TEXT else ""
    return (
        f"CREATE TABLE IF NOT EXISTS {quote(table)} (kb TEXT NOT NULL, id TEXT NOT NULL{filters}, "
        f"data TEXT NOT NULL, vector BLOB{ft}, UNIQUE (kb, id))"
    )



def keep_statistics(conn: sqlite3.Connection) -> None:
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
