"""Elasticsearch store's pure builders: URL parsing, index mappings, documents, queries."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..errors import StoreError
from ..fingerprint import text_hash
from . import codec, text
from .base import Filter
from .records import Record, Vector

MAPPING_VERSION = 1


@dataclass(frozen=True)
class Target:
    """Where an elasticsearch:// URL points; `safe_url` has no secrets."""

    node: str
    prefix: str
    basic_auth: tuple[str, str] | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    verify_certs: bool = True
    ca_certs: str | None = None
    wait_for_refresh: bool = False
    safe_url: str = ""


def parse_url(url: str) -> Target:
    parts = urlsplit(url)
    https = parts.scheme.lower().endswith("+https")
    if not parts.hostname:
        raise StoreError(
            f"bad Elasticsearch URL {url.split('@')[-1]!r}",
            hint="write elasticsearch://host:9200?prefix=name or elasticsearch+https://...",
        )
    try:
        port = parts.port or 9200
    except ValueError as exc:
        raise StoreError(f"bad port in Elasticsearch URL {url.split('@')[-1]!r}") from exc
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    prefix = query.get("prefix", "compendium").lower()
    if not prefix or not all(c.isalnum() or c in "-_" for c in prefix) or prefix[0] in "-_":
        raise StoreError(f"bad index prefix {prefix!r}: lowercase letters, digits, - and _ only")
    auth = None
    if parts.username:
        auth = (unquote(parts.username), unquote(parts.password or ""))
    scheme = "https" if https else "http"
    user = f"{unquote(parts.username)}@" if parts.username else ""
    return Target(
        node=f"{scheme}://{parts.hostname}:{port}",
        prefix=prefix,
        basic_auth=auth,
        api_key=query.get("api_key"),
        verify_certs=query.get("verify_certs", "true").lower() not in ("0", "false", "no"),
        ca_certs=query.get("ca_certs"),
        wait_for_refresh=query.get("refresh", "") == "wait_for",
        safe_url=f"{parts.scheme}://{user}{parts.hostname}:{port}?prefix={prefix}",
    )


def index_name(prefix: str, kind: type[Record]) -> str:
    return f"{prefix}-{kind.KIND}-v{MAPPING_VERSION}"


def index_mappings(kind: type[Record]) -> dict[str, Any]:
    """Explicit mapping: keywords for kb/id/FILTERS, data kept but not indexed, vector bytes."""
    properties: dict[str, Any] = {"kb": {"type": "keyword"}, "id": {"type": "keyword"}}
    for name in kind.FILTERS:
        properties[name] = {"type": "keyword"}
    properties["data"] = {"type": "object", "enabled": False}
    properties.update(text_mappings(kind))
    mappings: dict[str, Any] = {"dynamic": "strict", "properties": properties}
    if kind.VECTOR:
        # Exact float32 bytes for round trips; the dense_vector (added once its dimension
        # is known) only serves kNN, so it is left out of _source.
        properties["vector_bytes"] = {"type": "binary"}
        mappings["_source"] = {"excludes": ["vector"]}
    return mappings


def text_field(name: str) -> str:
    """The analysed field holding a TEXT field's words (lists one item per line)."""
    return "text_" + name


def text_mappings(kind: type[Record]) -> dict[str, Any]:
    """`text` fields (English analyser: lowercased, stemmed) for the kind's TEXT fields."""
    return {text_field(name): {"type": "text", "analyzer": "english"} for name, _ in kind.TEXT}


def text_query(
    kind: type[Record], kb: str, where: Filter | None, query: str, fields: dict[str, float]
) -> dict[str, Any] | None:
    """A BM25 query over the chosen fields, weighted (`match` for one, `multi_match` of type
    most_fields, which sums the fields' scores, for several), inside the filter; None when the
    filter matches nothing."""
    condition = filter_query(kind, kb, where)
    if condition is None:
        return None
    if len(fields) == 1:
        (name, weight), = fields.items()
        scored: dict[str, Any] = {
            "match": {text_field(name): {"query": query, "boost": float(weight)}}
        }
    else:
        scored = {
            "multi_match": {
                "query": query,
                "type": "most_fields",
                "fields": [f"{text_field(name)}^{float(weight):g}" for name, weight in fields.items()],
            }
        }
    condition["bool"]["must"] = [scored]
    return condition


def vector_mapping(dims: int) -> dict[str, Any]:
    return {
        "vector": {
            "type": "dense_vector",
            "dims": int(dims),
            "index": True,
            "similarity": "cosine",
            "index_options": {"type": "hnsw"},
        }
    }


def doc_id(kb: str, id: str) -> str:
    # length-prefixed so no (kb, id) pair collides with another; ES caps _id at 512 bytes
    key = f"{len(kb)}:{kb}:{id}"
    return key if len(key.encode()) <= 500 else "h:" + text_hash(key)


def to_source(record: Record, kb: str, dense: bool) -> dict[str, Any]:
    """The document indexed for a record (the vector both as bytes and, if indexed, as floats)."""
    source: dict[str, Any] = {"kb": kb, "id": record.id}
    for name in type(record).FILTERS:
        source[name] = codec.filter_value(record, name)
    source["data"] = json.loads(codec.encode_data(record))
    for name, _ in type(record).TEXT:
        source[text_field(name)] = text.field_text(record, name)
    vector = codec.vector_of(record)
    if vector is not None:
        source["vector_bytes"] = base64.b64encode(vector.tobytes()).decode("ascii")
        if dense:
            source["vector"] = vector.tolist()
    return source


def index_action(index: str, _id: str, source: dict[str, Any]) -> dict[str, Any]:
    # under "_source", so a field named like bulk metadata (`version`, `routing`) stays data
    return {"_op_type": "index", "_index": index, "_id": _id, "_source": source}


def from_source(kind: type[Record], source: dict[str, Any]) -> Record:
    blob = source.get("vector_bytes")
    vector = codec.decode_vector(base64.b64decode(blob)) if blob else None
    return codec.decode(kind, dict(source["data"]), vector)


def filter_query(kind: type[Record], kb: str, where: Filter | None) -> dict[str, Any] | None:
    """A bool filter query, or None when the filter can match nothing (an empty list)."""
    clauses: list[dict[str, Any]] = [{"term": {"kb": kb}}]
    must_not: list[dict[str, Any]] = []
    for name, value, is_list in codec.check_filter(kind, where):
        if is_list:
            if not value:
                return None
            clauses.append({"terms": {name: value}})
        elif value is None:
            must_not.append({"exists": {"field": name}})
        else:
            clauses.append({"term": {name: value}})
    query: dict[str, Any] = {"bool": {"filter": clauses}}
    if must_not:
        query["bool"]["must_not"] = must_not
    return query


def knn_section(query: Vector, k: int, filter: dict[str, Any]) -> dict[str, Any]:
    # num_candidates well above k keeps HNSW recall near exact at a small cost
    return {
        "field": "vector",
        "query_vector": [float(x) for x in query],
        "k": int(k),
        "num_candidates": int(min(10_000, max(100, 10 * k))),
        "filter": filter,
    }


def cosine_from_score(score: float) -> float:
    """ES reports cosine similarity as (1 + cos) / 2."""
    return 2.0 * float(score) - 1.0
