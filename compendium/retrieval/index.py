"""What retrieval keeps beside the compiled records: chunk vectors and a mark.

The compile builds the index (build_index, run by the orchestrator after the phases), so a
question pays for none of it: a question only reads the index's mark, one small record that
says which embedder made the vectors and when, and (on a SQLite store) maps the matrix file the
compile wrote beside it (vectors.py). Chunk vectors are kept per content hash: a
recompile embeds only the chunks that are new or changed.

A knowledge base whose vectors were made by another embedder than the one configured is
refused with a message naming both and the command that re-embeds; it is never re-embedded
behind a question's back (with an endpoint that is a bill).
"""

from __future__ import annotations

import time
from typing import Any

from ..errors import ConfigError
from ..storage.base import Store
from ..storage.records import CacheEntry, Chunk, ChunkEmbedding

MARK_ID = "retrieval:index"
NAMESPACE = "retrieval"
EMBED_BATCH = 256
EMBED_CHARS = 2000  # of a chunk's text: the start says what it is about, and it bounds the cost


def chunk_text(chunk: Chunk) -> str:
    """What a chunk is embedded as: its heading path, then the start of its text."""
    heading = " › ".join(chunk.heading_path)
    return f"{heading}\n{chunk.text[:EMBED_CHARS]}" if heading else chunk.text[:EMBED_CHARS]


async def refresh_chunk_vectors(store: Store, embedder: Any) -> int:
    """Embed the chunks whose vector is missing or stale (a vector by another embedder is
    replaced: its id is the chunk's), drop vectors of deleted chunks; returns how many chunks
    were embedded."""
    model = embedder.model
    have: dict[str, str] = {}
    async for record in store.scan(ChunkEmbedding, {"model": model}):
        have[record.id] = record.content_hash  # type: ignore[attr-defined]
    seen: set[str] = set()
    pending: list[Chunk] = []
    embedded = 0

    async def flush() -> None:
        nonlocal embedded
        if not pending:
            return
        vectors = await embedder.embed([chunk_text(c) for c in pending])
        await store.upsert(
            ChunkEmbedding(id=c.id, document_id=c.document_id, model=model,
                           content_hash=c.content_hash, embedding=v)
            for c, v in zip(pending, vectors, strict=True)
        )
        embedded += len(pending)
        pending.clear()

    async for chunk in store.scan(Chunk):
        seen.add(chunk.id)
        if have.get(chunk.id) != chunk.content_hash or not chunk.content_hash:  # type: ignore[attr-defined]
            pending.append(chunk)  # type: ignore[arg-type]
            if len(pending) >= EMBED_BATCH:
                await flush()
    await flush()
    gone = [i for i in have if i not in seen]
    for start in range(0, len(gone), 500):
        await store.delete(ChunkEmbedding, {"id": gone[start : start + 500]})
    return embedded


async def build_index(store: Store, embedder: Any) -> dict[str, Any]:
    """Bring the index up to date with the knowledge base (run by the compile): chunk vectors
    by `embedder` (the passage embedder), then a new mark. Returns what it did."""
    from .vectors import drop_vectors, write_vectors

    previous = await index_mark(store)
    embedded = await refresh_chunk_vectors(store, embedder)
    chunks = await store.count(Chunk)
    built_at = time.time()
    value: dict[str, Any] = {"model": embedder.model, "built_at": built_at, "chunks": chunks}
    vectors = await write_vectors(store, embedder.model, built_at)
    if vectors is not None:
        value["vectors"] = vectors
    await store.upsert([CacheEntry(id=MARK_ID, namespace=NAMESPACE, value=value, created_at=time.time())])
    old_file = ((previous or {}).get("vectors") or {}).get("file")
    if old_file and old_file != (vectors or {}).get("file"):  # another embedder's: 4 bytes x dims per chunk
        await drop_vectors(store, old_file)
    return {"embedded": embedded, "chunks": chunks, "model": embedder.model}


async def index_mark(store: Store) -> dict[str, Any] | None:
    found = await store.get(CacheEntry, [MARK_ID])
    return (found[0].value or None) if found else None  # type: ignore[attr-defined]


class IndexMismatch(ConfigError):
    """The knowledge base's vectors were made by another embedder than the one configured."""


async def ensure_index(store: Store, embedder: Any) -> dict[str, Any]:
    """The mark of the index the last compile built, checked against `embedder` (the passage
    embedder); {} for an empty knowledge base.

    One with chunks but no mark (compiled before
    the compile built the index), or with vectors by another embedder, raises IndexMismatch
    naming the command that builds it: nothing is embedded here."""
    mark = await index_mark(store)
    if mark is None:
        chunks = await store.count(Chunk)
        if chunks == 0:
            return {}
        raise IndexMismatch(
            f"this knowledge base has no retrieval index ({chunks:,} chunks; it was compiled before "
            "the compile built one)",
            hint=f"run `compendium compile`: it embeds the {chunks:,} chunks with {embedder.model} once",
        )
    if mark.get("model") != embedder.model:
        chunks = int(mark.get("chunks") or 0)
        raise IndexMismatch(
            f"this knowledge base's passages were embedded with {mark.get('model')!r}, but the "
            f"configured embedder is {embedder.model!r}: vectors of one cannot be searched with the other",
            hint=f"configure the embedder the knowledge base was compiled with, or run `compendium compile` "
                 f"to re-embed its {chunks:,} chunks with {embedder.model!r} ({chunks:,} embedding inputs)",
        )
    return mark
