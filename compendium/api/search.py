"""Search over a knowledge base's pages and entities: by words (a scored scan) or by meaning
(nearest neighbours of the query's embedding)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request

from ..compiler.jobs import settings_for_kb
from ..engines.factory import build_embedder
from ..engines.usage import UsageMeter
from ..storage.base import Store
from ..storage.records import Entity, Page
from ..storage.response_cache import StoreResponseCache
from ..tenancy import kb_records, kb_template
from .auth import KB, service, store_of
from .entities import page_slugs
from .schemas import SearchHit

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["search"])

_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def score_text(query: list[str], phrase: str, title: str, aliases: list[str], body: str) -> float:
    """Title and alias hits count most, body words least; the whole phrase in the title wins."""
    if not query:
        return 0.0
    title_words = set(words(" ".join([title, *aliases])))
    body_words = words(body)
    counts: dict[str, int] = {}
    for w in body_words:
        counts[w] = counts.get(w, 0) + 1
    score = 0.0
    for term in query:
        if term in title_words:
            score += 3.0
        score += min(counts.get(term, 0), 5) * 0.4
    if phrase and phrase in title.casefold():
        score += 5.0
    matched = sum(1 for t in query if t in title_words or t in counts)
    return round(score * matched / len(query), 4)


def _snippet(text: str, query: list[str], width: int = 200) -> str:
    flat = " ".join(text.split())
    lower = flat.casefold()
    at = min((lower.find(t) for t in query if t in lower), default=0)
    start = max(0, at - width // 3)
    return ("…" if start else "") + flat[start : start + width]


async def _text(store: Store, q: str, kinds: set[str], limit: int) -> list[dict[str, Any]]:
    query, phrase = words(q), q.strip().casefold()
    hits = []
    if "page" in kinds:
        async for p in store.scan(Page, {"status": "active"}):
            s = score_text(query, phrase, p.title, p.aliases, p.markdown)  # type: ignore[attr-defined]
            if s > 0:
                hits.append({"kind": "page", "id": p.id, "title": p.title, "score": s, "page": p.id,  # type: ignore[attr-defined]
                             "snippet": _snippet(p.summary or p.markdown, query)})  # type: ignore[attr-defined]
    if "entity" in kinds:
        entities = []
        async for e in store.scan(Entity):
            s = score_text(query, phrase, e.name, e.aliases, e.description)  # type: ignore[attr-defined]
            if s > 0:
                entities.append((e, s))
        slugs = await page_slugs(store, [e.id for e, _ in entities])
        hits += [{"kind": "entity", "id": e.id, "title": e.name, "score": s, "page": slugs.get(e.id),
                  "snippet": _snippet(e.description, query)} for e, s in entities]
    hits.sort(key=lambda h: (-h["score"], h["title"]))
    return hits[:limit]


async def _vector(request: Request, kb: Any, store: Store, q: str, kinds: set[str],
                  limit: int) -> list[dict[str, Any]]:
    svc = service(request)
    template = await kb_template(store_of(request), kb, kb.default_template)
    embedder = build_embedder(settings_for_kb(svc.settings, kb), template, usage=UsageMeter(),
                              cache=StoreResponseCache(store))
    try:
        vector = (await embedder.embed([q]))[0]
    finally:
        await embedder.close()
    hits = []
    if "page" in kinds:
        for p, s in await store.knn(Page, vector, limit, {"status": "active"}):
            hits.append({"kind": "page", "id": p.id, "title": p.title, "score": round(s, 4),  # type: ignore[attr-defined]
                         "page": p.id, "snippet": _snippet(p.summary or p.markdown, [])})  # type: ignore[attr-defined]
    if "entity" in kinds:
        found = await store.knn(Entity, vector, limit)
        slugs = await page_slugs(store, [e.id for e, _ in found])
        hits += [{"kind": "entity", "id": e.id, "title": e.name, "score": round(s, 4),  # type: ignore[attr-defined]
                  "page": slugs.get(e.id), "snippet": _snippet(e.description, [])}  # type: ignore[attr-defined]
                 for e, s in found]
    hits.sort(key=lambda h: -h["score"])
    return hits[:limit]


@router.get("/search", response_model=list[SearchHit])
async def search(
    kb: KB, request: Request,
    q: Annotated[str, Query(min_length=1, max_length=500)],
    mode: Literal["text", "vector"] = "text",
    kind: Annotated[list[Literal["page", "entity"]] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[dict[str, Any]]:
    """Best matches first. text: words in titles, aliases and bodies; vector: cosine
    similarity of embeddings (the knowledge base's embedder)."""
    store = kb_records(store_of(request), kb)
    kinds = set(kind or ["page", "entity"])
    if mode == "vector":
        return await _vector(request, kb, store, q, kinds, limit)
    return await _text(store, q, kinds, limit)
