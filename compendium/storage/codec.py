"""Encoding shared by every backend: records to JSON text plus a float32 vector, filters checked."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .. import json_text
from ..errors import NotFound, StoreError
from .base import Filter
from .records import Record, Vector


def record_kind(kind: Any) -> type[Record]:
    """The record class asked for, or a StoreError saying what was given instead."""
    if isinstance(kind, type) and issubclass(kind, Record) and kind.KIND:
        return kind
    raise StoreError(f"not a record kind: {kind!r} (pass a Record subclass such as Chunk)")


def _json_default(value: Any) -> Any:
    # numpy values reach records through engines; store them as the plain JSON they equal.
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, set | frozenset):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


_ENCODER = json_text.JsonText(default=_json_default)


def encode_data(record: Record) -> str:
    """Every field except the vector, as JSON text."""
    try:
        if not record.VECTOR:  # the record's own fields: no dict built for them
            return _ENCODER.dumps_dataclass(record, record.to_dict)
        data = record.to_dict()
        data.pop(record.VECTOR, None)
        return _ENCODER.dumps(data)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot store {record.KIND} {record.id!r}: {exc}") from exc


def encode_all(kind: type[Record], records: Sequence[Record]) -> list[str]:
    """`encode_data` of each record of `kind`, in order. Records without a vector (claims,
    extracts, entities) are written in one pass; if orjson refuses one, one at a time."""
    if not kind.VECTOR:
        texts = _ENCODER.dumps_each(records)
        if texts is not None:
            return texts
    return [encode_data(r) for r in records]  # a refused record is named by encode_data


def vector_of(record: Record) -> Vector | None:
    """The record's vector as a contiguous float32 array, or None."""
    if not record.VECTOR:
        return None
    value = getattr(record, record.VECTOR)
    if value is None:
        return None
    array = np.ascontiguousarray(value, dtype=np.float32)
    if array.ndim != 1 or array.size == 0:
        raise StoreError(
            f"cannot store {record.KIND} {record.id!r}: {record.VECTOR} must be a 1-d vector, "
            f"got shape {array.shape}"
        )
    return array


def encode_vector(vector: Vector | None) -> bytes | None:
    return None if vector is None else vector.tobytes()


def decode_vector(blob: bytes | None) -> Vector | None:
    # copy: frombuffer gives a read-only view of the driver's bytes
    return None if blob is None else np.frombuffer(blob, dtype=np.float32).copy()


def decode(kind: type[Record], data: str | bytes | dict[str, Any], vector: Vector | None) -> Record:
    """Rebuild a record from its JSON and its vector."""
    fields = json_text.loads(data) if isinstance(data, str | bytes) else data
    if kind.VECTOR:
        fields[kind.VECTOR] = vector
    return kind.from_dict(fields)


def filter_value(record: Record, name: str) -> Any:
    """A FILTERS column value as backends index it (containers are not indexable)."""
    value = getattr(record, name)
    if isinstance(value, list | dict | tuple | set):
        raise StoreError(f"{record.KIND}.{name} is a filter field and must be a scalar")
    return value


def check_filter(kind: type[Record], where: Filter | None) -> list[tuple[str, Any, bool]]:
    """Validated filter as (field, value-or-values, is_list); unknown fields name the valid ones."""
    if not where:
        return []
    if not isinstance(where, dict):
        raise StoreError(f"filter on {kind.KIND} must be a dict, got {type(where).__name__}")
    allowed = ("id", *kind.FILTERS)
    terms = []
    for name, value in where.items():
        if name not in allowed:
            raise StoreError(
                f"cannot filter {kind.KIND} on {name!r}; valid fields: {', '.join(allowed)}",
                field=name,
            )
        if isinstance(value, list | tuple | set | frozenset):
            terms.append((name, list(value), True))
        elif isinstance(value, dict):
            raise StoreError(f"filter value for {kind.KIND}.{name} must be a scalar or a list")
        else:
            terms.append((name, value, False))
    return terms


def group_by_kind(records: Iterable[Record]) -> dict[type[Record], list[Record]]:
    """Records grouped by class, each group in the order given (later duplicates win)."""
    groups: dict[type[Record], list[Record]] = {}
    for record in records:
        cls = type(record)
        group = groups.get(cls)
        if group is None:  # each class is checked once, not each record
            if not isinstance(record, Record) or not cls.KIND:
                raise StoreError(f"cannot store {cls.__name__}: not a Record")
            group = groups[cls] = []
        rid = record.id
        if not isinstance(rid, str) or not rid:
            raise StoreError(f"cannot store {record.KIND}: id must be a non-empty string")
        group.append(record)
    return groups


def top_k(matrix: np.ndarray, query: Vector, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row indexes and cosine scores of the k best rows, best first (rows are unit vectors)."""
    # einsum, not `@`: a matrix-vector product is memory-bound, and multithreaded BLAS on a
    # busy machine made it 10x slower (measured: 31 ms vs 2.5 ms for 5,000 x 256).
    scores = np.einsum("ij,j->i", matrix, query)
    k = min(k, scores.shape[0])
    if k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    if k < scores.shape[0]:
        picked = np.argpartition(-scores, k - 1)[:k]
    else:
        picked = np.arange(scores.shape[0])
    order = picked[np.argsort(-scores[picked], kind="stable")]
    return order, scores[order]


def unit_query(kind: type[Record], vector: Any) -> Vector:
    """The query as a unit float32 vector (a zero vector has no direction: error)."""
    if not kind.VECTOR:
        raise StoreError(f"{kind.KIND} records have no vector field; knn is not possible")
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(query))
    if query.size == 0 or not np.isfinite(norm) or norm == 0.0:
        raise StoreError(f"knn on {kind.KIND}: the query vector is empty or zero")
    return query / norm


class GetOne:
    """`get_one` for every backend, built on its own `get`."""

    kb: str
    get: Any  # the backend's `get(kind, ids)`

    async def get_one(self, kind: type[Record], id: str) -> Record:
        records = await self.get(kind, [id])
        if not records:
            raise NotFound(f"no {record_kind(kind).KIND} {id!r} in knowledge base {self.kb!r}")
        return records[0]


def sql_where(
    kind: type[Record], kb: str, where: Filter | None, *, mark: str, quote: Any
) -> tuple[str, list[Any]] | None:
    """A SQL condition and its parameters for the SQL backends (`mark` is the driver's
    placeholder, `quote` quotes a column); None when the filter can match nothing (empty list)."""
    clauses, params = [f"kb = {mark}"], [kb]
    for name, value, is_list in check_filter(kind, where):
        if is_list:
            if not value:
                return None
            clauses.append(f"{quote(name)} IN ({', '.join([mark] * len(value))})")
            params.extend(value)
        elif value is None:
            clauses.append(f"{quote(name)} IS NULL")
        else:
            clauses.append(f"{quote(name)} = {mark}")
            params.append(value)
    return " AND ".join(clauses), params
