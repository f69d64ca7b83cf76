"""The subjects a question names, and what the graph links to them: their neighbours (weighted by
strength and degree), the relations between them, their pages and their topics."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..storage.base import Store
from ..storage.records import Entity, Page, Relation, Topic
from ..storage.text import STOPWORDS, words
from .passages import phrase
from .ranking import RANKINGS, expand, ranked, strength_weight
from .terms import QuestionTerms

if TYPE_CHECKING:
    from .options import Options

_NAME_COSINE = 0.8  # a question's name this close to an entity's (hashed n-grams) is a typo of it
_NEIGHBOURS = 8


async def named_subjects(store: Store, embedder: Any, text: str, terms: QuestionTerms) -> dict[str, tuple[float, Entity]]:
    """The entities the question names: an entity whose name or alias the question holds as a
    whole phrase, when that phrase is a name in the question (written as one: quoted,
    capitalised, an identifier) or more than one word; a question's name an entity's name
    only misspells (hashed n-gram cosine ≥ 0.8) also counts. id -> (score, entity)."""
    said = phrase(text)
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
            if not key or f" {key} " not in said:
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


async def linked_entities(
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


async def subject_pages(
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


async def subject_topics(store: Store, scores: dict[str, float], top_k: int) -> list[dict[str, Any]]:
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
