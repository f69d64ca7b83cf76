"""The passages' vectors as one memory-mapped matrix beside a SQLite store's file.

A SQLite store answers `knn` from a matrix it assembles out of its rows: at 40,000 chunks that
is 40 MB of blobs decoded, about 0.15 s, which a long-lived process pays once and every
`compendium retrieve` process pays again. The compile writes the same vectors here once (a
`.npy` matrix and its row ids, named after the store, the knowledge base and the embedder), and
a question maps the file instead: the operating system reads the pages, nothing is decoded.

The file is trusted only when the index's mark names it with the same build time and row count;
anything else (another store backend, a file from an older build, a filter on documents) falls
back to the store's own `knn`, which is always right.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..storage.base import Store
from ..storage.records import ChunkEmbedding

_OPEN: dict[str, tuple[float, list[str], np.ndarray]] = {}  # file -> (built_at, ids, matrix)


async def vector_file(store: Store, model: str) -> Path | None:
    """Where the matrix of `model`'s passage vectors lives for this store, or None when the store
    keeps no local file (a server, or SQLite in memory)."""
    info = await store.info()
    path = str(info.get("path") or "")
    if info.get("backend") != "sqlite" or not path or path == ":memory:" or path.startswith("file:"):
        return None
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{store.kb}.{model}")[:120]
    return Path(path).with_name(f"{Path(path).name}.{tag}.vectors.npy")


async def write_vectors(store: Store, model: str, built_at: float) -> dict[str, Any] | None:
    """Write the matrix of the knowledge base's `model` vectors (rows in id order) and its ids;
    returns what the index's mark records of it, or None when the store has no local file."""
    target = await vector_file(store, model)
    if target is None:
        return None
    ids: list[str] = []
    rows: list[np.ndarray] = []
    async for record in store.scan(ChunkEmbedding, {"model": model}):
        if record.embedding is not None:  # type: ignore[attr-defined]
            ids.append(record.id)
            rows.append(np.asarray(record.embedding, dtype=np.float32))  # type: ignore[attr-defined]
    order = sorted(range(len(ids)), key=ids.__getitem__)
    matrix = np.stack([rows[i] for i in order]) if rows else np.zeros((0, 1), dtype=np.float32)
    ids = [ids[i] for i in order]
    # written under temporary names, then renamed: a question never maps half a file
    temp = target.with_name(target.name + f".{os.getpid()}.tmp")
    with temp.open("wb") as handle:
        np.save(handle, matrix)
    ids_temp = temp.with_suffix(".ids")
    ids_temp.write_text(json.dumps({"built_at": built_at, "ids": ids}), encoding="utf-8")
    os.replace(ids_temp, _ids_file(target))
    os.replace(temp, target)
    _OPEN.pop(str(target), None)
    return {"file": target.name, "rows": len(ids), "built_at": built_at}


async def drop_vectors(store: Store, name: str) -> None:
    """Delete a matrix file the index no longer names (and its ids), beside this store only."""
    info = await store.info()
    folder = Path(str(info.get("path") or "")).parent
    target = folder / Path(name).name
    if info.get("backend") != "sqlite" or not name.endswith(".vectors.npy"):
        return
    for path in (target, _ids_file(target)):
        path.unlink(missing_ok=True)
    _OPEN.pop(str(target), None)


def _ids_file(target: Path) -> Path:
    return target.with_name(target.name[: -len(".npy")] + ".ids.json")


def _mapped(target: Path, built_at: float, rows: int) -> tuple[list[str], np.ndarray] | None:
    found = _OPEN.get(str(target))
    if found is not None and found[0] == built_at:
        return found[1], found[2]
    try:
        listing = json.loads(_ids_file(target).read_text(encoding="utf-8"))
        matrix = np.load(target, mmap_mode="r")
    except (OSError, ValueError):
        return None
    ids = listing.get("ids") or []
    if listing.get("built_at") != built_at or len(ids) != rows or matrix.shape[0] != rows:
        return None
    _OPEN[str(target)] = (built_at, ids, matrix)
    return ids, matrix


async def nearest(
    store: Store, model: str, mark: dict[str, Any], vector: np.ndarray, k: int,
) -> list[tuple[str, float]] | None:
    """The `k` chunk ids nearest to `vector` (cosine, best first) from the compile's matrix file,
    or None when there is none to trust (the caller asks the store)."""
    recorded = mark.get("vectors") or {}
    target = await vector_file(store, model)
    if target is None or recorded.get("file") != target.name:
        return None
    mapped = _mapped(target, recorded.get("built_at"), int(recorded.get("rows") or 0))
    if mapped is None:
        return None
    ids, matrix = mapped
    if not ids or matrix.shape[1] != vector.shape[0]:
        return None
    scores = matrix @ vector.astype(np.float32)
    k = min(k, len(ids))
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.lexsort((best, -scores[best]))]  # by score, ties by row (id order)
    return [(ids[i], float(scores[i])) for i in best]
