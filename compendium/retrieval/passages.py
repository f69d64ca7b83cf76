"""Passages for a question: full text (BM25) and dense vectors over chunks, fused by score or
rank, the head reranked by word match, then capped per document."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import numpy as np

from ..storage.base import Store
from ..storage.records import Chunk, ChunkEmbedding, Document
from ..storage.text import words
from .index import chunk_text
from .ranking import RRF_K, fuse, ranked
from .rerank import HEAD, word_match, word_vectors

if TYPE_CHECKING:
    from .options import Options

POOL = 50  # candidates per ranked list; fixed, so the ranking is the same for every top_k


def phrase(text: str) -> str:
    """The text's words, space-separated and space-framed, for whole-phrase tests."""
    return " " + " ".join(words(text)) + " "


async def ranked_passages(
    store: Store, embedder: Any, text: str, search: str, documents: list[str] | None, opts: Options,
    top_k: int, headings: set[str] | None = None, mark: dict[str, Any] | None = None,
    llm: Any | None = None, notes: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Full text (BM25) and dense vectors over chunks, fused, then at most `per_document`
    passages of one document in the first five; with `rerank_by` "llm", the head reordered by
    `llm` (what degraded is added to `notes`)."""
    where: dict[str, Any] = {} if documents is None else {"document_id": documents}
    vector = (await embedder.embed([text]))[0] if opts.vectors else None
    by_text, by_vector = await asyncio.gather(
        store.search_text(Chunk, search, POOL, where or None),
        _nearest(store, embedder.model, mark or {}, vector, where) if vector is not None else _nothing(),
    )
    if opts.fusion == "rrf" or vector is None:
        fused = fuse([([c.id for c, _ in by_text], 1.0), ([i for i, _ in by_vector], 1.0)], RRF_K)
    else:
        fused = await _convex(store, vector, by_text, by_vector, opts.alpha)
    pool = ranked(fused, POOL)
    known: dict[str, Chunk] = {c.id: c for c, _ in by_text}  # type: ignore[misc]
    for chunk in await store.get(Chunk, [i for i in pool if i not in known]):
        known[chunk.id] = chunk  # type: ignore[assignment]
    if headings:
        for i in pool:
            if i in known and any(f" {h} " in phrase(" ".join(known[i].heading_path)) for h in headings):  # type: ignore[attr-defined]
                fused[i] += opts.heading_weight
        pool = ranked({i: fused[i] for i in pool})
    pool = [i for i in pool if i in known]  # a vector whose chunk was deleted since the compile
    if opts.rerank and opts.rerank_by != "none" and opts.fusion == "convex" and vector is not None and _local(embedder):
        head = pool[:HEAD]
        match = await word_match(text, {i: chunk_text(known[i]) for i in head}, word_vectors(embedder))
        if match:
            low, high = min(match.values()), max(match.values())
            for i in head:
                fused[i] += opts.rerank * (match.get(i, low) - low) / ((high - low) or 1.0)
            pool = ranked({i: fused[i] for i in pool})
    document_of = {i: known[i].document_id for i in pool}  # type: ignore[attr-defined]
    order = _capped(pool, document_of, opts.per_document)
    if opts.rerank_by == "llm":
        order = await _by_model(store, llm, text, order, known, notes if notes is not None else [])
        order = _capped(order, document_of, opts.per_document)
    best = order[:top_k]
    paths = {d.id: d.path for d in await store.get(Document, list({known[i].document_id for i in best}))}  # type: ignore[attr-defined]
    return [
        {
            "chunk_id": i,
            "document": paths.get(known[i].document_id, known[i].document_id),  # type: ignore[attr-defined]
            "heading_path": list(known[i].heading_path),  # type: ignore[attr-defined]
            "text": known[i].text,  # type: ignore[attr-defined]
            "score": round(fused[i], 5),
        }
        for i in best
    ]


async def _by_model(store: Store, llm: Any | None, question: str, order: list[str], known: dict[str, Any],
                    notes: list[str]) -> list[str]:
    """The head of `order` reordered by the model (llm_rerank.py, loaded only when asked for)."""
    from .llm_rerank import LLM_HEAD, passage_source, reranked

    head = order[:LLM_HEAD]
    paths = {d.id: d.path for d in await store.get(Document, list({known[i].document_id for i in head}))}  # type: ignore[attr-defined]
    passages = {i: (passage_source(paths.get(known[i].document_id, ""), known[i].heading_path), known[i].text)
                for i in head}
    return await reranked(llm, question, order, passages, notes)


def _local(embedder: Any) -> bool:
    """Whether word vectors cost nothing but CPU: the bundled static embedder (an endpoint would
    be called for every new word of the passages)."""
    from ..engines.static_embedder import StaticEmbedder

    return isinstance(embedder, StaticEmbedder)


async def _nearest(store: Store, model: str, mark: dict[str, Any], vector: np.ndarray,
                   where: dict[str, Any]) -> list[tuple[str, float]]:
    """The POOL chunk ids nearest to `vector`, with their cosines: from the compile's matrix
    file when there is one to trust and no document filter, else from the store."""
    if not where:
        from .vectors import nearest

        found = await nearest(store, model, mark, vector, POOL)
        if found is not None:
            return found
    return [(c.id, s) for c, s in await store.knn(ChunkEmbedding, vector, POOL, {"model": model, **where})]


async def _convex(store: Store, vector: np.ndarray, by_text: list[Any], by_vector: list[tuple[str, float]],
                  alpha: float) -> dict[str, float]:
    """alpha x BM25 / the best BM25 + (1 - alpha) x cosine scaled to [0, 1] over the candidates
    of both lists (a candidate of one list gets its cosine from its stored vector, and no BM25
    when full text did not find it). Scores keep what ranks lose: how far ahead the first is."""
    top = max((s for _, s in by_text), default=1.0) or 1.0
    text = {c.id: s / top for c, s in by_text}
    cosine = dict(by_vector)
    for record in await store.get(ChunkEmbedding, [i for i in text if i not in cosine]):
        if record.embedding is not None:  # type: ignore[attr-defined]
            cosine[record.id] = float(np.dot(record.embedding, vector))  # type: ignore[attr-defined]
    low = min(cosine.values(), default=0.0)
    span = (max(cosine.values(), default=1.0) - low) or 1.0
    return {i: alpha * text.get(i, 0.0) + (1 - alpha) * (cosine.get(i, low) - low) / span
            for i in {*text, *cosine}}


async def _nothing() -> list[Any]:
    return []


def _capped(order: list[str], document_of: dict[str, str], cap: int, window: int = 5) -> list[str]:
    """`order` with at most `cap` passages of one document among the first `window`: a passage
    past the cap moves to just after the window (with too few documents it comes back in)."""
    if cap <= 0:
        return list(order)
    head: list[str] = []
    waiting: list[str] = []
    count: dict[str, int] = {}
    for n, i in enumerate(order):
        if len(head) >= window:
            return head + waiting + order[n:]
        document = document_of[i]
        if count.get(document, 0) >= cap:
            waiting.append(i)
            continue
        head.append(i)
        count[document] = count.get(document, 0) + 1
    return head + waiting
