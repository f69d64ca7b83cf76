"""retrieve(): a question to typed evidence (passages first; then the entities, relations,
pages and topics of the subjects it names) and a Markdown context block.

Passages are ranked the same way in every mode: full text (BM25) and dense vectors over
chunks, fused by score, the head reranked by how closely the passages' words meet the
question's (rerank.py, with the bundled offline embedder's word vectors), then capped per
document (the named subjects' passages as a third list, and a rerank of the fused head by
cosine, were measured and added nothing). The ranking does not depend on `top_k`: --top 5 is the
first five of --top 10. The graph only adds what is linked to a subject the question names
(an entity whose whole name or alias the question spells out as a name); a word of the
question that merely equals an entity's name is not evidence.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError, NotFound
from ..storage.base import Store
from ..storage.records import Chunk, ChunkEmbedding, Document, Entity, Page, Relation, Topic
from ..storage.text import STOPWORDS, words
from .context import build_context
from .index import chunk_text, ensure_index
from .ranking import DEFAULT_RANKING, RANKINGS, RRF_K, expand, fuse, ranked, strength_weight
from .rerank import HEAD, word_match, word_vectors
from .terms import QuestionTerms, clip_question, llm_terms, rule_terms

MODES: tuple[str, ...] = ("local", "global", "hybrid")
MODE_HELP = {
    "hybrid": "passages, and the entities, relations, pages and topics of the subjects the question names",
    "local": "passages, and the named subjects with their neighbours and relations (no topics)",
    "global": "passages, and the pages and topics of the named subjects (fewer entities)",
}
DEFAULT_BUDGET = 2000  # tokens of context
POOL = 50  # candidates per ranked list; fixed, so the ranking is the same for every top_k
MAX_TOP = 50
_NAME_COSINE = 0.8  # a question's name this close to an entity's (hashed n-grams) is a typo of it
_NEIGHBOURS = 8


@dataclass(slots=True)
class Options:
    """Knobs of one retrieval; the defaults are the measured best (benchmarks/retrieval.py)."""

    top_k: int = 8
    mode: str = "hybrid"
    budget_tokens: int = DEFAULT_BUDGET
    ranking: str = DEFAULT_RANKING
    hops: int = 1
    # Passages: BM25 and cosine fused by score ("convex", alpha the full text's share) or by
    # rank ("rrf"). Measured on four manuals (benchmarks/reports/retrieval.md): convex beat RRF
    # on recall@5 and MRR@10 on all of them; alpha 0.35 with the word-match rerank below.
    fusion: str = "convex"
    alpha: float = 0.35
    # The word-match rerank of the fused head (rerank.py): its weight on the convex scores' scale
    # (RRF's are 1/(60 + rank), where it would decide alone); 0: none.
    rerank: float = 0.15
    vectors: bool = True  # False: full text alone
    heading_weight: float = 0.2  # a passage under a heading that names a subject of the question
    per_document: int = 1  # passages of one document in the first five (0: no cap); one: five documents, measured best on all four manuals
    path_prefix: str | None = None  # only documents whose path starts with it
    outline_node: str | None = None  # only the documents of this outline node (id, slug or title)


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
    notes: list[str] = field(default_factory=list)  # what degraded (the LLM unreachable...)
    model_error: str | None = None  # the model could not be reached: why

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `retrieve --json` and of the API."""
        out = {
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
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _pick(item: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: item[k] for k in keys}


async def retrieve(
    question: str,
    store: Store,
    *,
    embedder: Any,
    passages: Any | None = None,
    llm: Any | None = None,
    options: Options | None = None,
) -> Retrieval:
    """Evidence for `question` from the knowledge base `store` is scoped to.

    `embedder` is the one the knowledge base was compiled with (entity names); `passages` the
    one its passages were embedded with at compile time (default: the one the compile chose for
    `embedder`, engines.factory.passage_embedder); `llm`, an
    OpenAIClient, rewrites the question into names and keywords (one cached call); without it,
    or when it cannot be reached, rules and the alias table do.
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
    if passages is None:
        from ..engines.factory import passage_embedder

        passages = passage_embedder(embedder)
    top_k = max(1, min(int(opts.top_k), MAX_TOP))
    mark = await ensure_index(store, passages)
    notes: list[str] = []
    if not mark:  # an empty knowledge base: nothing to look up, no model to ask
        return Retrieval(question=text, entities=[], relations=[], pages=[], topics=[], chunks=[],
                         context=build_context(text, {}, 200)[0], terms=rule_terms(text), notes=notes)
    terms, model_error = await _terms(text, llm, notes)
    search = " ".join([*terms.words, *terms.names])
    documents = await _documents_under(store, opts.path_prefix) if opts.path_prefix else None
    if opts.outline_node:
        in_node = await _documents_in_node(store, opts.outline_node)
        documents = in_node if documents is None else [d for d in documents if d in set(in_node)]

    subjects = await _subjects(store, embedder, text, terms)
    entity_scores, entity_records, relations = await _graph(store, subjects, opts)
    headings = {" ".join(words(n)) for _, e in subjects.values() for n in [e.name, *e.aliases]} if opts.heading_weight else set()
    chunks = await _passages(store, passages, text, search, documents, opts, top_k, headings, mark)

    top_entities = ranked(entity_scores, top_k)
    pages = await _pages(store, entity_scores, top_entities, opts, top_k)
    topics = await _topics(store, entity_scores, top_k) if opts.mode != "local" and subjects else []
    entities = [
        {
            "id": i, "name": entity_records[i].name, "type": entity_records[i].type,
            "score": round(entity_scores[i], 4), "page": next((p["slug"] for p in pages if p["subject_id"] == i), None),
            "description": entity_records[i].description,
        }
        for i in top_entities
    ]
    if opts.mode == "global":
        entities = entities[: max(1, top_k // 2)]
    names = {i: e.name for i, e in entity_records.items()}
    relation_items = [
        {**r, "source_name": names.get(r["source"], r["source"]),
         "target_name": names.get(r["target"], r["target"])}
        for r in relations[:top_k]
    ]
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
                     refs=refs, terms=terms, notes=notes, model_error=model_error)


async def _terms(text: str, llm: Any | None, notes: list[str]) -> tuple[QuestionTerms, str | None]:
    """The LLM's rewrite when one is configured and answers; the rules' terms otherwise (and,
    when the model could not be reached, why)."""
    if llm is None:
        return rule_terms(text), None
    from ..errors import CompendiumError, EngineUnavailable

    try:
        return await llm_terms(text, llm), None
    except CompendiumError as exc:
        notes.append(f"the model could not rewrite the question ({exc}); searched with the question's own words")
        return rule_terms(text), str(exc) if isinstance(exc, EngineUnavailable) else None


async def _documents_under(store: Store, prefix: str) -> list[str]:
    """Ids of the documents whose path starts with `prefix` ('/'-separated, no leading '/')."""
    want = prefix.strip().lstrip("/")
    return [d.id async for d in store.scan(Document) if d.path.startswith(want)]  # type: ignore[attr-defined]


async def _documents_in_node(store: Store, name: str) -> list[str]:
    """Ids of the documents the subjects of an outline node (and of its subtopics) come from;
    the node is named by its id, its overview page's slug or its title."""
    from ..storage.records import CacheEntry

    found = await store.get(CacheEntry, ["outline"])
    outline = (found[0].value or {}) if found else {}  # type: ignore[attr-defined]
    wanted = name.strip().casefold()
    stack = list(outline.get("roots", []))
    node = None
    while stack and node is None:
        item = stack.pop()
        if wanted in (str(item.get("id", "")).casefold(), str(item.get("slug") or "").casefold(),
                      str(item.get("title", "")).casefold()):
            node = item
        stack.extend(item.get("children", []))
    if node is None:
        raise NotFound(f"no outline node {name!r} (name one by its title, id or overview slug)",
                       field="outline_node")
    subjects, stack = [], [node]
    while stack:
        item = stack.pop()
        subjects += item.get("subjects", [])
        stack.extend(item.get("children", []))
    documents: set[str] = set()
    for entity in await store.get(Entity, sorted(set(subjects))):
        documents.update(entity.document_ids)  # type: ignore[attr-defined]
    return sorted(documents)


def _phrase(text: str) -> str:
    return " " + " ".join(words(text)) + " "


async def _subjects(store: Store, embedder: Any, text: str, terms: QuestionTerms) -> dict[str, tuple[float, Entity]]:
    """The entities the question names: an entity whose name or alias the question holds as a
    whole phrase, when that phrase is a name in the question (written as one: quoted,
    capitalised, an identifier) or more than one word; a question's name an entity's name
    only misspells (hashed n-gram cosine ≥ 0.8) also counts. id -> (score, entity)."""
    phrase = _phrase(text)
    named = {" ".join(words(n)) for n in terms.names}
    exact = [n for n in terms.names if n]
    found: dict[str, tuple[float, Entity]] = {}
    candidates = [e for e, _ in await store.search_text(Entity, " ".join([*terms.words, *terms.names]), 40,
                                                        fields=["name", "aliases"])]
    if exact:
        candidates += [e async for e in store.scan(Entity, {"name": exact})]
    for entity in candidates:
        for name in [entity.name, *entity.aliases]:  # type: ignore[attr-defined]
            key = " ".join(words(name))
            if not key or f" {key} " not in phrase:
                continue
            several = len(key.split()) > 1 and not all(w in STOPWORDS for w in key.split())
            if key in named or several:
                found[entity.id] = (1.0, entity)  # type: ignore[assignment]
                break
    unmatched = [n for n in terms.names if words(n) and " ".join(words(n)) not in
                 {" ".join(words(x)) for _, e in found.values() for x in [e.name, *e.aliases]}]
    if unmatched:
        vectors = await embedder.embed(unmatched[:2])
        near = await asyncio.gather(*(store.knn(Entity, v, 3) for v in vectors))
        for hits in near:
            for entity, cosine in hits:
                if cosine >= _NAME_COSINE and entity.id not in found:
                    found[entity.id] = (float(cosine), entity)  # type: ignore[assignment]
    return found


async def _graph(
    store: Store, subjects: dict[str, tuple[float, Entity]], opts: Options,
) -> tuple[dict[str, float], dict[str, Entity], list[dict[str, Any]]]:
    """Scores of the subjects and their neighbours (one hop by default, weighted by strength and
    by degree), their records, and the relations between them."""
    records = {i: e for i, (_, e) in subjects.items()}
    if not subjects:
        return {}, records, []
    combine = RANKINGS[opts.ranking]
    top_degree = max([e.degree for e in records.values()] + [1])  # type: ignore[attr-defined]
    scores = {i: combine(s, e.degree / top_degree) for i, (s, e) in subjects.items()}  # type: ignore[attr-defined]
    ids = sorted(subjects)
    found: dict[str, Relation] = {}
    for end in ("source", "target"):
        async for r in store.scan(Relation, {end: ids}):
            found[r.id] = r  # type: ignore[assignment]
    neighbours: dict[str, list[tuple[int, str, str]]] = {}
    max_strength = max([r.strength for r in found.values()] + [1])
    for r in found.values():
        neighbours.setdefault(r.source, []).append((r.strength, r.target, r.id))
        neighbours.setdefault(r.target, []).append((r.strength, r.source, r.id))
    neighbours = {n: sorted(v, key=lambda e: (-e[0], e[1]))[:_NEIGHBOURS] for n, v in neighbours.items()}
    frontier = dict(scores)
    for _ in range(max(0, opts.hops)):
        reached = expand(frontier, neighbours, max_strength)
        frontier = {n: s for n, s in reached.items() if s > scores.get(n, 0.0)}
        scores.update(frontier)
        if not frontier:
            break
    missing = [i for i in scores if i not in records]
    for entity in await store.get(Entity, missing):
        records[entity.id] = entity  # type: ignore[assignment]
    scores = {i: s for i, s in scores.items() if i in records}
    relation_scores = {
        r.id: strength_weight(r.strength, max_strength) * (scores.get(r.source, 0.0) + scores.get(r.target, 0.0)) / 2
        for r in found.values() if r.source in scores and r.target in scores
    }
    relations = [
        {"id": i, "source": found[i].source, "target": found[i].target, "type": found[i].type,
         "description": found[i].description, "strength": found[i].strength,
         "score": round(relation_scores[i], 4), "chunk_ids": found[i].chunk_ids}
        for i in ranked(relation_scores, 3 * _NEIGHBOURS)
    ]
    return scores, records, relations


async def _pages(
    store: Store, scores: dict[str, float], top_entities: list[str], opts: Options, top_k: int,
) -> list[dict[str, Any]]:
    """The live pages of the best-scored entities (the subjects first)."""
    if not top_entities:
        return []
    page_scores: dict[str, float] = {}
    pages: dict[str, Page] = {}
    async for page in store.scan(Page, {"subject_id": top_entities, "status": "active"}):
        pages[page.id] = page  # type: ignore[assignment]
        page_scores[page.id] = scores.get(page.subject_id, 0.0)  # type: ignore[attr-defined]
    return [
        {"slug": pages[i].slug, "title": pages[i].title, "score": round(page_scores[i], 4),
         "summary": pages[i].summary, "subject_id": pages[i].subject_id,
         "cited_chunks": pages[i].cited_chunks}
        for i in ranked(page_scores, top_k)
    ]


async def _topics(store: Store, scores: dict[str, float], top_k: int) -> list[dict[str, Any]]:
    """Topics holding the subjects and their neighbours, by their share of the topic."""
    topic_scores: dict[str, float] = {}
    by_id: dict[str, Topic] = {}
    async for topic in store.scan(Topic):
        total = sum(scores.get(m, 0.0) for m in topic.members)  # type: ignore[attr-defined]
        if total > 0:
            by_id[topic.id] = topic  # type: ignore[assignment]
            topic_scores[topic.id] = total / len(topic.members) ** 0.5  # type: ignore[attr-defined]
    return [
        {"id": i, "slug": by_id[i].slug, "title": by_id[i].title, "summary": by_id[i].summary,
         "score": round(topic_scores[i], 4)}
        for i in ranked(topic_scores, max(1, top_k // 2))
    ]


async def _passages(
    store: Store, embedder: Any, text: str, search: str, documents: list[str] | None, opts: Options,
    top_k: int, headings: set[str] | None = None, mark: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Full text (BM25) and dense vectors over chunks, fused, then at most `per_document`
    passages of one document in the first five."""
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
            if i in known and any(f" {h} " in _phrase(" ".join(known[i].heading_path)) for h in headings):  # type: ignore[attr-defined]
                fused[i] += opts.heading_weight
        pool = ranked({i: fused[i] for i in pool})
    pool = [i for i in pool if i in known]  # a vector whose chunk was deleted since the compile
    if opts.rerank and opts.fusion == "convex" and vector is not None and _local(embedder):
        head = pool[:HEAD]
        match = await word_match(text, {i: chunk_text(known[i]) for i in head}, word_vectors(embedder))
        if match:
            low, high = min(match.values()), max(match.values())
            for i in head:
                fused[i] += opts.rerank * (match.get(i, low) - low) / ((high - low) or 1.0)
            pool = ranked({i: fused[i] for i in pool})
    order = _capped(pool, {i: known[i].document_id for i in pool}, opts.per_document)  # type: ignore[attr-defined]
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
