"""What retrieval keeps beside the compiled records: chunk embeddings and the graph's PageRank.

Both are rebuilt only when the knowledge base changed (a new compile, or a different number of
chunks), so a question pays for neither. Chunk vectors are kept per content hash: a recompile
embeds only the chunks that are new or changed.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..fingerprint import fingerprint
from ..storage.base import Store
from ..storage.records import CacheEntry, Chunk, ChunkEmbedding, Entity, Page, Relation, Topic
from .ranking import pagerank

MARK_ID = "retrieval:index"
NAMESPACE = "retrieval"
EMBED_BATCH = 256
EMBED_CHARS = 2000  # of a chunk's text: the start says what it is about, and it bounds the cost
_MEMO: OrderedDict[tuple[str, str, str], GraphFacts] = OrderedDict()
_MEMO_SIZE = 8


@dataclass(slots=True)
class GraphFacts:
    """Per-compile facts every question reads: PageRank (max 1.0), each entity's strongest
    relations (strength, other end, relation id; at most NEIGHBOURS), and the topics."""

    key: str
    pagerank: dict[str, float]
    neighbours: dict[str, list[tuple[int, str, str]]]
    topics: list[Topic]
    max_strength: int
    topics_of: dict[str, list[int]] = field(default_factory=dict)  # entity id -> topic indexes
    page_of: dict[str, str] = field(default_factory=dict)  # entity id -> slug of its live page


NEIGHBOURS = 8  # relations per entity the graph walk may follow: bounds it on hubs


def chunk_text(chunk: Chunk) -> str:
    """What a chunk is embedded as: its heading path, then the start of its text."""
    heading = " › ".join(chunk.heading_path)
    return f"{heading}\n{chunk.text[:EMBED_CHARS]}" if heading else chunk.text[:EMBED_CHARS]


async def index_key(store: Store, model: str) -> str:
    """Changes when the knowledge base does: the last compile, the chunk count, the embedder."""
    last = await store.get(CacheEntry, ["compile:last"])
    compiled_at = last[0].created_at if last else 0.0  # type: ignore[attr-defined]
    return fingerprint(compiled_at, await store.count(Chunk), model)


async def refresh_chunk_vectors(store: Store, embedder: Any) -> int:
    """Embed the chunks whose vector is missing or stale, drop vectors of deleted chunks;
    returns how many chunks were embedded."""
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


async def graph_facts(store: Store, key: str) -> GraphFacts:
    """PageRank over relations weighted by strength, adjacency and topics; built once per
    process and index key (one scan of entities and relations), then read from memory."""
    memo_key = (store.url, store.kb, key)
    found = _MEMO.get(memo_key)
    if found is not None:
        _MEMO.move_to_end(memo_key)
        return found
    nodes = [e.id async for e in store.scan(Entity)]
    edges: list[tuple[str, str, float]] = []
    adjacency: dict[str, list[tuple[int, str, str]]] = {}
    max_strength = 1
    async for relation in store.scan(Relation):
        r: Relation = relation  # type: ignore[assignment]
        max_strength = max(max_strength, r.strength)
        edges.append((r.source, r.target, float(max(r.strength, 1))))
        adjacency.setdefault(r.source, []).append((r.strength, r.target, r.id))
        adjacency.setdefault(r.target, []).append((r.strength, r.source, r.id))
    neighbours = {
        node: sorted(out, key=lambda e: (-e[0], e[1]))[:NEIGHBOURS] for node, out in adjacency.items()
    }
    topics = [t async for t in store.scan(Topic)]
    topics_of: dict[str, list[int]] = {}
    for index, topic in enumerate(topics):
        for member in topic.members:  # type: ignore[attr-defined]
            topics_of.setdefault(member, []).append(index)
    page_of = {}
    async for page in store.scan(Page, {"status": "active"}):
        if page.subject_id:  # type: ignore[attr-defined]
            page_of[page.subject_id] = page.id  # type: ignore[attr-defined]
    facts = GraphFacts(key, pagerank(nodes, edges), neighbours, topics, max_strength,  # type: ignore[arg-type]
                       topics_of, page_of)
    _MEMO[memo_key] = facts
    if len(_MEMO) > _MEMO_SIZE:
        _MEMO.popitem(last=False)
    return facts


RECHECK_SECONDS = 10.0
_CHECKED: dict[tuple[str, str, str], tuple[float, str]] = {}  # -> (when, key)


async def _current_key(store: Store, model: str) -> str:
    """index_key, read at most every RECHECK_SECONDS per knowledge base in this process: the
    last compile's record (a whole report) and the chunk count cost tens of ms on a large
    knowledge base, so a recompile is seen by a running server within that time."""
    memo = (store.url, store.kb, model)
    seen = _CHECKED.get(memo)
    now = time.monotonic()
    if seen and now - seen[0] < RECHECK_SECONDS:
        return seen[1]
    key = await index_key(store, model)
    _CHECKED[memo] = (now, key)
    return key


async def ensure_index(store: Store, embedder: Any) -> GraphFacts:
    """The index for the knowledge base as it stands: refreshed first if it changed."""
    key = await _current_key(store, embedder.model)
    memo = _MEMO.get((store.url, store.kb, key))
    if memo is not None:
        return memo
    mark = await store.get(CacheEntry, [MARK_ID])
    if not mark or (mark[0].value or {}).get("key") != key:  # type: ignore[attr-defined]
        await refresh_chunk_vectors(store, embedder)
        await store.upsert([CacheEntry(id=MARK_ID, namespace=NAMESPACE, value={"key": key},
                                       created_at=time.time())])
    return await graph_facts(store, key)
