"""Search over a knowledge base's pages and entities: by words (the store's full-text index)
or by meaning (nearest neighbours of the query's embedding)."""

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
from .errors import COMMON, errors
from .schemas import SearchHit

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["search"], responses={**COMMON, **errors(404)})

_WORD = re.compile(r"\w+", re.UNICODE)


def _snippet(text: str, query: list[str], width: int = 200) -> str:
    flat = " ".join(text.split())
    lower = flat.casefold()
    at = min((lower.find(t) for t in query if t in lower), default=0)
    start = max(0, at - width // 3)
    return ("…" if start else "") + flat[start : start + width]


async def _text(store: Store, q: str, kinds: set[str], limit: int) -> list[dict[str, Any]]:
    """The store's full-text index (BM25 over titles, aliases, summaries and bodies): no scan."""
    query = [w.casefold() for w in _WORD.findall(q)]
    hits = []
    if "page" in kinds:
        for p, s in await store.search_text(Page, q, limit, {"status": "active"}):
            hits.append({"kind": "page", "id": p.id, "title": p.title, "score": round(s, 4), "page": p.id,  # type: ignore[attr-defined]
                         "snippet": _snippet(p.summary or p.markdown, query)})  # type: ignore[attr-defined]
    if "entity" in kinds:
        entities = await store.search_text(Entity, q, limit)
        slugs = await page_slugs(store, [e.id for e, _ in entities])
        hits += [{"kind": "entity", "id": e.id, "title": e.name, "score": round(s, 4), "page": slugs.get(e.id),  # type: ignore[attr-defined]
                  "snippet": _snippet(e.description, query)} for e, s in entities]  # type: ignore[attr-defined]
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


@router.get("/search", response_model=list[SearchHit], responses=errors(502))
async def search(
    kb: KB, request: Request,
    q: Annotated[str, Query(min_length=1, max_length=500)],
    mode: Literal["text", "vector"] = "text",
    kind: Annotated[list[Literal["page", "entity"]] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[dict[str, Any]]:
    """Best matches first. text: BM25 over words in titles, aliases and bodies; vector: cosine
    similarity of embeddings (the knowledge base's embedder)."""
    store = kb_records(store_of(request), kb)
    kinds = set(kind or ["page", "entity"])
    if mode == "vector":
        return await _vector(request, kb, store, q, kinds, limit)
    return await _text(store, q, kinds, limit)
