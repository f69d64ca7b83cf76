"""The connection under a MySQL-protocol store: one per server, its locks, retries and schema setup."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import numpy as np
import pymysql

from ..errors import StoreError
from ..fingerprint import text_hash
from . import codec
from .mysql_sql import (
    Target,
    create_tables,
    drop_fulltext_indexes,
    insert_postings_sql,
    mark_schema,
    postings_of,
    quote,
)
from .records import RECORD_TYPES, CacheEntry, Record
from .transaction_owner import TransactionOwner

_RETRYABLE = {1205, 1213}  # lock wait timeout, deadlock: the whole statement can be retried
_GONE = {2006, 2013}  # server has gone away / lost connection: reconnect once
SERIALIZED_WAIT_SECONDS = 30  # how long a serialized transaction waits for the one before it


def counted(kind: type[Record]) -> bool:
    """Whether a kind's writes bump its generation, so that other processes learn their cached
    vector matrix or text-search record count of it is stale. Not the response cache's: its
    vectors are read by id and it is never searched, and every worker of a distributed compile
    writes it, so each write would wait on the counter's row lock for any open transaction that
    wrote a cache entry (a REDUCE's ledger: ~1.5 s a round)."""
    return kind is not CacheEntry and bool(kind.VECTOR or kind.TEXT)


class Server:
    """One connection, shared by every kb-scoped store; calls run one at a time in a thread."""

    def __init__(self, target: Target):
        self.target = target
        self.conn: pymysql.connections.Connection | None = None
        self.tx_lock = asyncio.Lock()  # held by a transaction, or by one autocommit write
        self.call_lock = asyncio.Lock()  # one statement at a time on the connection
        self.transactions = TransactionOwner("compendium_mysql_tx")
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
