"""SQL for the MySQL store: URL parsing, pure statement builders, and the table DDL."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pymysql
from pymysql.converters import escape_string
from tidb_vector.utils import decode_vector as decode_tidb_vector
from tidb_vector.utils import encode_vector as encode_tidb_vector

from ..errors import StoreError
from . import codec, text
from .base import Filter
from .records import RECORD_TYPES, Record, Vector

SCHEMA_VERSION = 2  # 2: the word index (postings) replaced FULLTEXT indexes
MAX_TERM = 100  # longer words are indexed by their first MAX_TERM characters


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


def quote(name: str) -> str:
    """A backquoted identifier (table or column name)."""
    return "`" + name.replace("`", "``") + "`"


# Text columns compare case- and accent-insensitively, unlike the binary-collated rest.
TEXT_COLUMN = "LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL"


def text_column(name: str) -> str:
    """The column holding a TEXT field's words, as search reads them."""
    return "ft_" + name


def table_ddl(kind: type[Record], prefix: str, vector_type: str = "MEDIUMBLOB") -> str:
    """CREATE TABLE for a kind: kb, id, its FILTERS (indexed), data JSON text, the vector,
    and a column per TEXT field holding its words."""
    table = quote(prefix + kind.KIND)
    filters = "".join(f"  {quote(f)} VARCHAR(1024) NULL,\n" for f in kind.FILTERS)
    texts = "".join(f"  {quote(text_column(f))} {TEXT_COLUMN},\n" for f, _ in kind.TEXT)
    indexes = "".join(
        f",\n  KEY {quote('ix_' + f)} (kb, {quote(f)}(191), id)" for f in kind.FILTERS
    )
    vector = f"  vector {vector_type} NULL,\n" if kind.VECTOR else ""
    return (
        f"CREATE TABLE IF NOT EXISTS {table} (\n"
        "  kb VARCHAR(191) NOT NULL,\n"
        "  id VARCHAR(255) NOT NULL,\n"
        f"{filters}"
        "  data LONGTEXT NOT NULL,\n"
        f"{vector}"
        f"{texts}"
        f"  PRIMARY KEY (kb, id){indexes}\n"
        ") DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
    )


def columns_of(kind: type[Record]) -> list[str]:
    return [
        "kb", "id", *kind.FILTERS, "data", *(["vector"] if kind.VECTOR else []),
        *(text_column(f) for f, _ in kind.TEXT),
    ]


def upsert_sql(kind: type[Record], prefix: str) -> str:
    columns = columns_of(kind)
    updates = ", ".join(f"{quote(c)} = VALUES({quote(c)})" for c in columns[2:])
    return (
        f"INSERT INTO {quote(prefix + kind.KIND)} ({', '.join(map(quote, columns))}) "
        f"VALUES ({', '.join(['%s'] * len(columns))}) ON DUPLICATE KEY UPDATE {updates}"
    )


def where_sql(kind: type[Record], kb: str, where: Filter | None) -> tuple[str, list[Any]] | None:
    """WHERE text and parameters, or None when the filter matches nothing (an empty list)."""
    return codec.sql_where(kind, kb, where, mark="%s", quote=quote)


def knn_sql(kind: type[Record], prefix: str, condition: str, k: int) -> str:
    """TiDB: cosine distance computed (and HNSW-indexed when present) by the server."""
    return (
        f"SELECT id, data, vector, VEC_COSINE_DISTANCE(vector, %s) AS distance "
        f"FROM {quote(prefix + kind.KIND)} WHERE {condition} AND vector IS NOT NULL "
        f"ORDER BY distance LIMIT {int(k)}"
    )


def postings_ddl(prefix: str) -> str:
    """The word index: one row per (record, field, word) with the word's count and field length.

    Full-text search reads it with plain B-tree lookups, so ranking is BM25 over one knowledge
    base and never depends on a server's table statistics (InnoDB FULLTEXT relevance and even
    its boolean matches follow an estimated row count of the whole table).
    """
    return (
        f"CREATE TABLE IF NOT EXISTS {quote(prefix + 'postings')} (\n"
        "  kb VARCHAR(191) NOT NULL,\n"
        "  kind VARCHAR(64) NOT NULL,\n"
        f"  term VARCHAR({MAX_TERM}) NOT NULL,\n"
        "  field VARCHAR(64) NOT NULL,\n"
        "  id VARCHAR(255) NOT NULL,\n"
        "  tf INT NOT NULL,\n"
        "  length INT NOT NULL,\n"
        "  PRIMARY KEY (kb, kind, term, field, id),\n"
        "  KEY by_record (kb, kind, id)\n"
        ") DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin"
    )


def postings_of(kb: str, kind: type[Record], record: Record) -> list[tuple]:
    """The word index rows of one record."""
    rows = []
    for name, _ in kind.TEXT:
        tokens = text.words(text.field_text(record, name))
        for term, tf in Counter(t[:MAX_TERM] for t in tokens).items():
            rows.append((kb, kind.KIND, term, name, record.id, tf, len(tokens)))
    return rows


def insert_postings_sql(prefix: str, ignore: bool = False) -> str:
    return (
        f"INSERT {'IGNORE ' if ignore else ''}INTO {quote(prefix + 'postings')} "
        "(kb, kind, term, field, id, tf, length) VALUES (%s, %s, %s, %s, %s, %s, %s)"
    )


def insert_postings_statements(
    prefix: str, kb: str, kind: type[Record], records: Sequence[Record],
    literal: Callable[[str], str] = lambda value: f"'{escape_string(value)}'",
) -> list[str]:
    """INSERT statements (each under about 4 MB) of the word index rows of some records.

    Built as text, not through the driver's per-value escaping: the postings of a page or chunk
    are hundreds of rows, and words are letters and digits only, so only the kb and the ids
    need quoting (`literal`: the connection's, which knows the server's quoting mode).
    """
    head = f"INSERT INTO {quote(prefix + 'postings')} (kb, kind, term, field, id, tf, length) VALUES "
    statements, values, size = [], [], 0
    kb_sql = literal(kb)
    for record in records:
        id_sql = literal(record.id)
        for name, _ in kind.TEXT:
            tokens = text.words(text.field_text(record, name))
            if not tokens:
                continue
            tail = f"','{name}',{id_sql},"
            start = f"({kb_sql},'{kind.KIND}','"
            length = len(tokens)
            for term, tf in Counter(t[:MAX_TERM] for t in tokens).items():
                value = f"{start}{term}{tail}{tf},{length})"
                values.append(value)
                size += len(value) + 1
                if size > 4_000_000:
                    statements.append(head + ",".join(values))
                    values, size = [], 0
    if values:
        statements.append(head + ",".join(values))
    return statements


def forget_postings_sql(prefix: str, count: int) -> str:
    """Drop the word index rows of some records, by id."""
    marks = ", ".join(["%s"] * count)
    return (
        f"DELETE FROM {quote(prefix + 'postings')} WHERE kb = %s AND kind = %s AND id IN ({marks})"
    )


def forget_filtered_postings_sql(kind: type[Record], prefix: str, condition: str) -> str:
    """Drop the word index rows of the records a filter selects (before they are deleted)."""
    return (
        f"DELETE FROM {quote(prefix + 'postings')} WHERE kb = %s AND kind = %s AND id IN "
        f"(SELECT id FROM {quote(prefix + kind.KIND)} WHERE {condition})"
    )


def postings_sql(
    kind: type[Record], prefix: str, condition: str | None, terms: int, fields: int, cap: int
) -> str:
    """The postings of some words in some fields, of the records a filter selects (None: all)."""
    filtered = (
        f" AND id IN (SELECT id FROM {quote(prefix + kind.KIND)} WHERE {condition})"
        if condition
        else ""
    )
    return (
        f"SELECT id, field, term, tf, length FROM {quote(prefix + 'postings')} "
        f"WHERE kb = %s AND kind = %s AND term IN ({', '.join(['%s'] * terms)}) "
        f"AND field IN ({', '.join(['%s'] * fields)}){filtered} LIMIT {int(cap)}"
    )


def count_sql(kind: type[Record], prefix: str, condition: str) -> str:
    return f"SELECT COUNT(*) FROM {quote(prefix + kind.KIND)} WHERE {condition}"


def select_sql(kind: type[Record], prefix: str) -> str:
    vector = "vector" if kind.VECTOR else "NULL"
    return f"SELECT id, data, {vector} FROM {quote(prefix + kind.KIND)}"


def bump_sql(prefix: str) -> str:
    """Count a write to a kind, so other processes learn their cached vectors are stale."""
    return (
        f"INSERT INTO {quote(prefix + 'generation')} (kb, kind, n) "
        "VALUES (%s, %s, 1) ON DUPLICATE KEY UPDATE n = n + 1"
    )


def generation_sql(prefix: str) -> str:
    return f"SELECT n FROM {quote(prefix + 'generation')} WHERE kb = %s AND kind = %s"


def encode_vector(vector: Vector | None, native: bool) -> Any:
    """The column value: TiDB VECTOR text when the server has native vectors, else float32 bytes."""
    if vector is None:
        return None
    return encode_tidb_vector(vector) if native else vector.tobytes()


def decode_vector(value: Any, native: bool) -> Vector | None:
    if value is None:
        return None
    if native:
        return decode_tidb_vector(value.decode() if isinstance(value, bytes) else value)
    return codec.decode_vector(value)


# -- DDL run once per connection (a cursor in, no connection state kept) -------------------------


def create_tables(cursor: Any, prefix: str, vector_type: str, where: str) -> int:
    """Create (or bring up to date) the schema, generation, word index and per-kind tables.

    Returns the schema version the store had before (0 for a new store), so the caller can
    build what a newer version adds from the records already stored.
    """
    schema = quote(prefix + "schema")
    cursor.execute(
        f"CREATE TABLE IF NOT EXISTS {schema} (name VARCHAR(64) PRIMARY KEY, version INT NOT NULL)"
    )
    cursor.execute(f"SELECT version FROM {schema} WHERE name = 'store'")
    row = cursor.fetchone()
    if row and row[0] > SCHEMA_VERSION:
        raise StoreError(
            f"MySQL store {where} has schema version {row[0]}; "
            f"this Compendium knows up to {SCHEMA_VERSION}",
            hint="upgrade Compendium",
        )
    cursor.execute(
        f"CREATE TABLE IF NOT EXISTS {quote(prefix + 'generation')} (kb VARCHAR(191) NOT NULL, "
        "kind VARCHAR(64) NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (kb, kind))"
    )
    cursor.execute(postings_ddl(prefix))
    for kind in RECORD_TYPES.values():
        cursor.execute(table_ddl(kind, prefix, vector_type))
        add_new_filter_columns(cursor, prefix, kind)
    return row[0] if row else 0


def mark_schema(cursor: Any, prefix: str) -> None:
    cursor.execute(
        f"INSERT INTO {quote(prefix + 'schema')} (name, version) VALUES ('store', %s) "
        "ON DUPLICATE KEY UPDATE version = VALUES(version)",
        (SCHEMA_VERSION,),
    )


def drop_fulltext_indexes(cursor: Any, prefix: str) -> None:
    """Schema 1 kept InnoDB FULLTEXT indexes; the word index replaces them."""
    for kind in RECORD_TYPES.values():
        cursor.execute(
            "SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = "
            "DATABASE() AND table_name = %s AND index_type = 'FULLTEXT'",
            (prefix + kind.KIND,),
        )
        for (name,) in cursor.fetchall():
            cursor.execute(f"ALTER TABLE {quote(prefix + kind.KIND)} DROP INDEX {quote(name)}")


def add_new_filter_columns(cursor: Any, prefix: str, kind: type[Record]) -> None:
    """A FILTERS or TEXT field added after the table was made: add its column, fill it from
    data (a list field as its JSON text, whose words are the same), index it."""
    table = prefix + kind.KIND
    cursor.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = DATABASE() AND table_name = %s",
        (table,),
    )
    have = {row[0].lower() for row in cursor.fetchall()}
    for name in kind.FILTERS:
        if name.lower() not in have:
            cursor.execute(
                f"ALTER TABLE {quote(table)} ADD COLUMN {quote(name)} VARCHAR(1024) NULL"
            )
            cursor.execute(
                f"UPDATE {quote(table)} SET {quote(name)} = JSON_UNQUOTE(JSON_EXTRACT(data, %s))",
                (f"$.{name}",),
            )
            cursor.execute(
                f"ALTER TABLE {quote(table)} ADD KEY {quote('ix_' + name)} (kb, {quote(name)}(191), id)"
            )
    # A field that is no longer a filter: its index goes (every write maintained it), its column stays.
    stale = {f"ix_{name}" for name in have - {c.lower() for c in columns_of(kind)}}
    if stale:
        cursor.execute(
            "SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = "
            "DATABASE() AND table_name = %s",
            (table,),
        )
        for (index,) in cursor.fetchall():
            if index.lower() in stale:
                cursor.execute(f"ALTER TABLE {quote(table)} DROP INDEX {quote(index)}")
    for name, _ in kind.TEXT:
        column = text_column(name)
        if column.lower() in have:
            continue
        cursor.execute(f"ALTER TABLE {quote(table)} ADD COLUMN {quote(column)} {TEXT_COLUMN}")
        cursor.execute(
            f"UPDATE {quote(table)} SET {quote(column)} = JSON_UNQUOTE(JSON_EXTRACT(data, %s))",
            (f"$.{name}",),
        )


def index_vectors(cursor: Any, prefix: str, kind: type[Record], dim: int) -> str:
    """TiDB: type the vector column VECTOR(dim) and add an HNSW index; say which index there is."""
    table = quote(prefix + kind.KIND)
    cursor.execute(
        "SELECT column_type FROM information_schema.columns WHERE table_schema = "
        "DATABASE() AND table_name = %s AND column_name = 'vector'",
        (prefix + kind.KIND,),
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
