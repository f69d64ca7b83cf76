"""The canvas graph: nodes and edges with server-side positions, for a whole knowledge base
(paged, most important nodes first) or around one entity (breadth-first to a depth)."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from ..compiler.orchestrator import last_compile
from ..errors import NotFound
from ..export.layout import communities, entity_positions
from ..fingerprint import fingerprint
from ..outline.tree import outline_groups, root_topics
from ..storage.base import Store
from ..storage.records import CacheEntry, Entity, Page, Relation, Topic
from ..tenancy import kb_records
from .auth import KB, store_of
from .entities import page_slugs
from .errors import COMMON, errors
from .outline import outline_tree
from .schemas import GraphOut

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["canvas"], responses={**COMMON, **errors(404)})

LAYOUT_KEY = "layout:graph:v4"  # v2: communities seed the layout; v3: an entity in its largest topic;
# v4: the outline's subtopics seed it, so the canvas groups nodes as the outline does
MAX_NODES = 5000
MAX_EDGES = 20000
MAX_DEPTH = 4


async def positions(store: Store) -> dict[str, tuple[float, float]]:
    """x, y of every entity: computed once per compile and kept in the cache."""
    last = await last_compile(store) or {}
    ids = [e.id async for e in store.scan(Entity)]
    key = fingerprint(last.get("started_at"), last.get("finished_at"), len(ids))
    cached = await store.get(CacheEntry, [LAYOUT_KEY])
    if cached and (cached[0].value or {}).get("key") == key:  # type: ignore[attr-defined]
        return {k: tuple(v) for k, v in cached[0].value["positions"].items()}  # type: ignore[attr-defined]
    relations = [(r.source, r.target, r.strength) async for r in store.scan(Relation)]  # type: ignore[attr-defined]
    groups = outline_groups(await outline_tree(store), await _subject_of_slug(store))
    if not groups:
        groups = communities([t async for t in store.scan(Topic)])
    result = entity_positions(ids, relations, groups)
    await store.upsert([CacheEntry(id=LAYOUT_KEY, namespace="layout", created_at=time.time(),
                                   value={"key": key, "positions": result})])
    return result


async def _subject_of_slug(store: Store) -> dict[str, str]:
    return {p.slug: p.subject_id async for p in store.scan(Page, {"status": "active"})}  # type: ignore[attr-defined,misc]


def _node(e: Any, xy: dict[str, tuple[float, float]], slugs: dict[str, str],
          groups: dict[str, str] | None = None) -> dict[str, Any]:
    x, y = xy.get(e.id, (0.0, 0.0))
    page = slugs.get(e.id)
    return {"id": e.id, "label": e.name, "type": e.type, "category": e.category,
            "importance": e.importance, "degree": e.degree, "page": page, "x": x, "y": y,
            "group": (groups or {}).get(page) if page else None}


def _edge(r: Any) -> dict[str, Any]:
    return {"id": r.id, "source": r.source, "target": r.target, "type": r.type, "strength": r.strength}


@router.get("/graph", response_model=GraphOut)
async def graph(
    kb: KB, request: Request,
    limit: Annotated[int, Query(ge=1, le=MAX_NODES, description="nodes per page")] = 2000,
    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{0,9}$",
                                        description="next_cursor of the previous page")] = None,
    type: Annotated[list[str] | None, Query(description="keep these entity types")] = None,
    min_strength: Annotated[int, Query(ge=0)] = 1,
    entity: Annotated[str | None, Query(description="centre: only what is near this entity")] = None,
    depth: Annotated[int, Query(ge=0, le=MAX_DEPTH)] = 1,
    edge_limit: Annotated[int, Query(ge=0, le=MAX_EDGES)] = MAX_EDGES,
) -> dict:
    """Whole graph: nodes by importance, `limit` per page; each page carries the edges between
    its nodes and the nodes of earlier pages, so the pages together hold every edge once.
    Around `entity`: nodes within `depth` relations of it, at most `limit`."""
    store = kb_records(store_of(request), kb)
    types = set(type or [])
    if entity is not None:
        return await _around(store, entity, depth, limit, types, min_strength, edge_limit)
    entities = [e async for e in store.scan(Entity) if not types or e.type in types]  # type: ignore[attr-defined]
    entities.sort(key=lambda e: (-e.importance, -e.degree, e.id))  # type: ignore[attr-defined]
    start = _offset(cursor)
    chosen = entities[start : start + limit]
    earlier = {e.id for e in entities[: start + limit]}
    current = {e.id for e in chosen}
    edges, total_edges = [], 0
    async for r in store.scan(Relation):
        if r.strength < min_strength or r.source not in earlier or r.target not in earlier:  # type: ignore[attr-defined]
            continue
        if r.source in current or r.target in current:  # type: ignore[attr-defined]
            total_edges += 1
            if len(edges) < edge_limit:
                edges.append(_edge(r))
    xy = await positions(store)
    slugs = await page_slugs(store, [e.id for e in chosen])
    groups = root_topics(await outline_tree(store))
    more = start + limit < len(entities)
    return {"nodes": [_node(e, xy, slugs, groups) for e in chosen], "edges": edges,
            "total_nodes": len(entities), "total_edges": total_edges,
            "truncated": total_edges > len(edges),
            "next_cursor": str(start + limit) if more else None}


def _offset(cursor: str | None) -> int:
    """The graph's cursor is the offset of its next page (the order is by importance, not id)."""
    return int(cursor) if cursor else 0


async def _around(store: Store, centre: str, depth: int, limit: int, types: set[str],
                  min_strength: int, edge_limit: int) -> dict:
    if not await store.get(Entity, [centre]):
        raise NotFound(f"no entity {centre!r}", field="entity")
    seen, frontier, edges = {centre}, [centre], {}
    truncated = False
    for _ in range(depth):
        found: list[str] = []
        for end in ("source", "target"):
            async for r in store.scan(Relation, {end: frontier}):
                if r.strength < min_strength:  # type: ignore[attr-defined]
                    continue
                other = r.target if end == "source" else r.source  # type: ignore[attr-defined]
                if other not in seen:
                    if len(seen) >= limit:
                        truncated = True
                        continue
                    seen.add(other)
                    found.append(other)
                edges[r.id] = r
        frontier = found
        if not frontier:
            break
    nodes = [e for e in await store.get(Entity, sorted(seen))
             if e.id == centre or not types or e.type in types]  # type: ignore[attr-defined]
    kept = {e.id for e in nodes}
    chosen = [r for r in edges.values() if r.source in kept and r.target in kept]  # type: ignore[attr-defined]
    xy = await positions(store)
    slugs = await page_slugs(store, sorted(kept))
    groups = root_topics(await outline_tree(store))
    return {"nodes": [_node(e, xy, slugs, groups) for e in nodes],
            "edges": [_edge(r) for r in chosen[:edge_limit]],
            "total_nodes": len(nodes), "total_edges": len(chosen),
            "truncated": truncated or len(chosen) > edge_limit, "next_cursor": None}
