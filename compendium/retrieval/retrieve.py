"""retrieve(): a question to typed evidence (entities, relations, pages, topics, passages) and a
Markdown context block, using what compiling built: names and aliases, the graph, pages."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..errors import InputError
from ..storage.base import Store
from ..storage.records import Chunk, ChunkEmbedding, Document, Entity, Page, Relation
from ..storage.text import words
from .context import build_context
from .index import GraphFacts, ensure_index
from .ranking import DEFAULT_RANKING, RANKINGS, expand, fuse, normalised, ranked, strength_weight
from .terms import QuestionTerms, clip_question, llm_terms, rule_terms

Mode = Literal["local", "global", "hybrid"]
MODES: tuple[str, ...] = ("local", "global", "hybrid")
DEFAULT_BUDGET = 2000  # tokens of context
_CANDIDATES = 40  # per ranked chunk list before fusion
_SEEDS = 8  # entities the graph walk starts from
_MIN_COSINE = 0.35  # below this an embedding neighbour is noise (offline embedder, measured)
_NAME_VECTORS = 2  # names of the question looked up by embedding, besides the question itself


@dataclass(slots=True)
class Options:
    """Knobs of one retrieval; the defaults are the measured best (benchmarks/retrieval.py)."""

    top_k: int = 8
    mode: str = "hybrid"
    budget_tokens: int = DEFAULT_BUDGET
    ranking: str = DEFAULT_RANKING
    hops: int = 2
    # weights of the fused chunk lists: full text, vectors, entity evidence, relation/page evidence
    # Measured on the PostgreSQL manual and the sample corpus (benchmarks/reports/retrieval.md):
    # full text carries most of the weight; offline vectors and graph evidence add a little.
    weights: tuple[float, float, float, float] = (1.0, 0.2, 0.2, 0.1)
    rrf_k: int = 20
    document_boost: float = 0.05  # share of its document's other candidates a passage gains


@dataclass(slots=True)
class Retrieval:
    """The evidence for a question. `refs` maps each context label to (kind, record id)."""

    question: str
    entities: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    pages: list[dict[str, Any]]
    topics: list[dict[str, Any]]
    chunks: list[dict[str, Any]]
    context: str
    refs: dict[str, tuple[str, str]] = field(default_factory=dict)
    terms: QuestionTerms | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `retrieve --json` and of the API."""
        return {
            "question": self.question,
            "entities": [_pick(e, "id", "name", "type", "score", "page") for e in self.entities],
            "relations": [
                _pick(r, "id", "source", "target", "type", "description", "strength", "score")
                for r in self.relations
            ],
            "pages": [_pick(p, "slug", "title", "score") for p in self.pages],
            "topics": [_pick(t, "id", "slug", "title", "score") for t in self.topics],
            "chunks": [
                _pick(c, "chunk_id", "document", "heading_path", "text", "score") for c in self.chunks
            ],
            "context": self.context,
        }


def _pick(item: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: item[k] for k in keys}


async def retrieve(
    question: str,
    store: Store,
    *,
    embedder: Any,
    llm: Any | None = None,
    options: Options | None = None,
) -> Retrieval:
    """Evidence for `question` from the knowledge base `store` is scoped to.

    `embedder` must be the one the knowledge base was compiled with (its entity vectors);
    `llm`, an OpenAIClient, rewrites the question into names and keywords (one cached call);
    without it, rules and the alias table do.
    """
    opts = options or Options()
    if opts.mode not in MODES:
        raise InputError(f"unknown retrieval mode {opts.mode!r}; use one of: {', '.join(MODES)}",
                         field="mode")
    if opts.ranking not in RANKINGS:
        raise InputError(f"unknown ranking {opts.ranking!r}; use one of: {', '.join(RANKINGS)}",
                         field="ranking")
    text = clip_question(question)
    if not words(text):
        raise InputError("the question has no words", field="question")
    top_k = max(1, min(int(opts.top_k), 50))
    facts = await ensure_index(store, embedder)
    terms = await llm_terms(text, llm) if llm is not None else rule_terms(text)
    vectors = await embedder.embed([text, *terms.names])
    search = " ".join([*terms.words, *terms.names])

    entity_scores, entity_records = await _entities(store, text, search, terms, vectors, facts, opts)
    relations = await _relations(store, search, entity_scores, entity_records, facts, opts)
    top_entities = ranked(entity_scores, top_k)
    pages = await _pages(store, search, entity_scores, top_entities, facts, opts, top_k)
    topics = _topics(facts, entity_scores, opts, top_k) if opts.mode != "local" else []
    chunks = await _chunks(store, embedder, search, vectors[0], entity_scores, entity_records,
                           relations, pages, opts, top_k)

    slugs = facts.page_of
    entities = [
        {
            "id": i, "name": entity_records[i].name, "type": entity_records[i].type,
            "score": round(entity_scores[i], 4), "page": slugs.get(i),
            "description": entity_records[i].description,
        }
        for i in top_entities
    ]
    names = {i: e.name for i, e in entity_records.items()}
    ends = {end for r in relations[:top_k] for end in (r["source"], r["target"]) if end not in names}
    names.update({e.id: e.name for e in await store.get(Entity, sorted(ends))})  # type: ignore[attr-defined]
    relation_items = [
        {**r, "source_name": names.get(r["source"], r["source"]),
         "target_name": names.get(r["target"], r["target"])}
        for r in relations[:top_k]
    ]
    if opts.mode == "global":
        entities = entities[: max(1, top_k // 2)]
    parts = {"entities": entities, "relations": relation_items, "pages": pages[:top_k],
             "topics": topics, "chunks": chunks}
    context, labels = build_context(text, parts, max(200, int(opts.budget_tokens)))
    refs = {}
    for key, kind, id_key in (("entities", "entity", "id"), ("relations", "relation", "id"),
                              ("pages", "page", "slug"), ("topics", "topic", "id"),
                              ("chunks", "chunk", "chunk_id")):
        for index, item in enumerate(parts[key]):
            ref = f"{key[0].upper()}{index + 1}"
            if ref in labels:
                refs[ref] = (kind, item[id_key])
    return Retrieval(question=text, entities=entities, relations=relation_items,
                     pages=pages[:top_k], topics=topics, chunks=chunks, context=context,
                     refs=refs, terms=terms)


async def _entities(
    store: Store, text: str, search: str, terms: QuestionTerms, vectors: np.ndarray,
    facts: GraphFacts, opts: Options,
) -> tuple[dict[str, float], dict[str, Entity]]:
    """Similarity from names and aliases (full text, exact phrases) and embeddings of the question
    and its first names, times graph importance, then a bounded walk along relations weighted
    by strength."""
    by_text = await store.search_text(Entity, search, 30)
    known = {" ".join(words(n)) for e, _ in by_text for n in [e.name, *e.aliases]}  # type: ignore[attr-defined]
    # a name the alias table already holds needs no embedding lookup (each one reads every
    # entity vector); the question's own vector always goes
    unmatched = [v for n, v in zip(terms.names, vectors[1:], strict=False) if " ".join(words(n)) not in known]
    by_vector = await asyncio.gather(
        *(store.knn(Entity, v, 20) for v in [vectors[0], *unmatched[:_NAME_VECTORS]])
    )
    records: dict[str, Entity] = {}
    similarity: dict[str, float] = {}
    phrase = " " + " ".join(words(text)) + " "
    text_scores = normalised({e.id: s for e, s in by_text})
    for entity, _ in by_text:
        score = text_scores.get(entity.id, 0.0)
        records[entity.id] = entity  # type: ignore[assignment]
        named = any(
            (w := " ".join(words(n))) and f" {w} " in phrase
            for n in [entity.name, *entity.aliases]  # type: ignore[attr-defined]
        )
        similarity[entity.id] = 1.0 if named else 0.85 * score
    for found in by_vector:
        for entity, cosine in found:
            records.setdefault(entity.id, entity)  # type: ignore[arg-type]
            if cosine >= _MIN_COSINE and cosine > similarity.get(entity.id, 0.0):
                similarity[entity.id] = cosine
    combine = RANKINGS[opts.ranking]
    scores = {i: combine(s, facts.pagerank.get(i, 0.0)) for i, s in similarity.items() if s > 0}
    frontier = dict((i, scores[i]) for i in ranked(scores, _SEEDS))
    for _ in range(max(0, opts.hops)):
        if not frontier:
            break
        reached = expand(frontier, facts.neighbours, facts.max_strength)
        frontier = {}
        for node, score in reached.items():
            if score > scores.get(node, 0.0):
                scores[node] = score
                frontier[node] = score
        frontier = dict((i, frontier[i]) for i in ranked(frontier, _SEEDS))
    unknown = [i for i in scores if i not in records]
    for entity in await store.get(Entity, unknown):
        records[entity.id] = entity  # type: ignore[assignment]
    return {i: s for i, s in scores.items() if i in records}, records


async def _relations(
    store: Store, search: str, scores: dict[str, float], records: dict[str, Entity],
    facts: GraphFacts, opts: Options,
) -> list[dict[str, Any]]:
    """Relations between the scored entities (strength-weighted), and by their descriptions."""
    top = ranked(scores, 2 * _SEEDS)
    between = {rid for node in top for _, other, rid in facts.neighbours.get(node, ()) if other in scores}
    found: dict[str, Relation] = {r.id: r for r in await store.get(Relation, sorted(between))}  # type: ignore[misc]
    relation_scores = {
        r.id: strength_weight(r.strength, facts.max_strength)
        * (scores.get(r.source, 0.0) + scores.get(r.target, 0.0)) / 2
        for r in found.values()
    }
    if opts.mode != "local":
        by_text = await store.search_text(Relation, search, 20)
        text_scores = normalised({r.id: s for r, s in by_text})
        for r, _ in by_text:
            s = text_scores.get(r.id, 0.0)
            found.setdefault(r.id, r)  # type: ignore[arg-type]
            relation_scores[r.id] = relation_scores.get(r.id, 0.0) + 0.5 * s
    return [
        {"id": i, "source": found[i].source, "target": found[i].target, "type": found[i].type,
         "description": found[i].description, "strength": found[i].strength,
         "score": round(relation_scores[i], 4), "chunk_ids": found[i].chunk_ids}
        for i in ranked(relation_scores, 3 * _SEEDS)
    ]


async def _pages(
    store: Store, search: str, scores: dict[str, float], top_entities: list[str],
    facts: GraphFacts, opts: Options, top_k: int,
) -> list[dict[str, Any]]:
    page_scores: dict[str, float] = {}
    pages: dict[str, Page] = {}
    if top_entities and opts.mode != "global":
        slugs = [facts.page_of[i] for i in top_entities if i in facts.page_of]
        for page in await store.get(Page, slugs):
            if page.status != "active":  # type: ignore[attr-defined]
                continue
            pages[page.id] = page  # type: ignore[assignment]
            page_scores[page.id] = scores.get(page.subject_id, 0.0)  # type: ignore[attr-defined]
    by_text = await store.search_text(Page, search, top_k, {"status": "active"}, fields=["title", "aliases", "summary"])
    text_scores = normalised({p.id: s for p, s in by_text})
    for page, _ in by_text:
        s = text_scores.get(page.id, 0.0)
        pages.setdefault(page.id, page)  # type: ignore[arg-type]
        page_scores[page.id] = max(page_scores.get(page.id, 0.0), 0.9 * s)
    return [
        {"slug": pages[i].slug, "title": pages[i].title, "score": round(page_scores[i], 4),
         "summary": pages[i].summary, "subject_id": pages[i].subject_id,
         "cited_chunks": pages[i].cited_chunks}
        for i in ranked(page_scores, top_k)
    ]


def _topics(facts: GraphFacts, scores: dict[str, float], opts: Options, top_k: int) -> list[dict[str, Any]]:
    overlap: dict[int, float] = {}
    for entity, score in scores.items():
        for index in facts.topics_of.get(entity, ()):
            overlap[index] = overlap.get(index, 0.0) + score
    topic_scores = {
        facts.topics[i].id: total / len(facts.topics[i].members) ** 0.5 for i, total in overlap.items()
    }
    by_id = {t.id: t for t in facts.topics}
    return [
        {"id": i, "slug": by_id[i].slug, "title": by_id[i].title, "summary": by_id[i].summary,
         "score": round(topic_scores[i], 4)}
        for i in ranked(topic_scores, max(1, top_k // 2))
    ]


async def _chunks(
    store: Store, embedder: Any, search: str, vector: np.ndarray, entity_scores: dict[str, float],
    entity_records: dict[str, Entity], relations: list[dict[str, Any]], pages: list[dict[str, Any]],
    opts: Options, top_k: int,
) -> list[dict[str, Any]]:
    """Passages: full-text and vector chunk search fused (RRF) with the graph's evidence."""
    by_text, by_vector = await asyncio.gather(
        store.search_text(Chunk, search, _CANDIDATES),
        store.knn(ChunkEmbedding, vector, _CANDIDATES, {"model": embedder.model}),
    )
    text_ids = [c.id for c, _ in by_text]
    position = {i: n for n, i in enumerate(text_ids)}
    w_text, w_vector, w_entity, w_graph = opts.weights
    lists: list[tuple[list[str], float]] = [(text_ids, w_text), ([c.id for c, _ in by_vector], w_vector)]
    if opts.mode != "global":
        support: dict[str, float] = {}
        for i in ranked(entity_scores, _SEEDS):
            for chunk_id in entity_records[i].chunk_ids:
                support[chunk_id] = support.get(chunk_id, 0.0) + entity_scores[i]
        lists.append((_by_support(support, position), w_entity))
    if opts.mode != "local":
        support = {}
        for r in relations:
            for chunk_id in r["chunk_ids"]:
                support[chunk_id] = support.get(chunk_id, 0.0) + r["score"]
        for p in pages:
            for chunk_id in p["cited_chunks"]:
                support[chunk_id] = support.get(chunk_id, 0.0) + p["score"] / 2
        lists.append((_by_support(support, position), w_graph))
    fused = fuse(lists, opts.rrf_k)
    # A document several lists point into is likelier the answer than a stray passage: each
    # passage gains a share of its document's other candidates' scores.
    pool = ranked(fused, 4 * top_k)
    known = {c.id: c for c, _ in by_text}
    chunks = {c.id: c for c in await store.get(Chunk, [i for i in pool if i not in known])}
    chunks.update({i: known[i] for i in pool if i in known})
    mass: dict[str, float] = {}
    for i, chunk in chunks.items():
        mass[chunk.document_id] = mass.get(chunk.document_id, 0.0) + fused[i]  # type: ignore[attr-defined]
    final = {
        i: fused[i] + opts.document_boost * (mass[c.document_id] - fused[i])  # type: ignore[attr-defined]
        for i, c in chunks.items()
    }
    best = ranked(final, top_k)
    documents = {d.id: d for d in await store.get(
        Document, list({chunks[i].document_id for i in best}))}  # type: ignore[attr-defined]
    out = []
    for i in best:  # evidence of a chunk deleted since the compile is not in `chunks`
        chunk = chunks[i]
        document = documents.get(chunk.document_id)  # type: ignore[attr-defined]
        out.append({
            "chunk_id": i,
            "document": document.path if document else chunk.document_id,  # type: ignore[attr-defined]
            "heading_path": list(chunk.heading_path),  # type: ignore[attr-defined]
            "text": chunk.text,  # type: ignore[attr-defined]
            "score": round(final[i], 5),
        })
    return out


def _by_support(support: dict[str, float], position: dict[str, int]) -> list[str]:
    """The best-supported chunks first; ties go to the full-text rank, then the id."""
    order = sorted(support, key=lambda c: (-support[c], position.get(c, _CANDIDATES), c))
    return order[:_CANDIDATES]
