"""Entities, relations and topics of a knowledge base: lists with filters, single reads."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from ..errors import NotFound
from ..storage.base import Store
from ..storage.records import Claim, Entity, Page, Relation, Topic
from ..tenancy import kb_records
from .auth import KB, store_of
from .errors import COMMON, errors
from .pagination import Paged, PageParams, page_of, page_of_scan
from .schemas import EntityDetail, EntityOut, RelationOut, TopicDetail, TopicOut

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["entities, relations, topics"],
                   responses={**COMMON, **errors(404)})


def _scoped(request: Request, kb: Any) -> Store:
    return kb_records(store_of(request), kb)


async def page_slugs(store: Store, subject_ids: list[str]) -> dict[str, str]:
    """subject id -> slug of its live page."""
    if not subject_ids:
        return {}
    where = {"subject_id": subject_ids, "status": "active"}
    return {p.subject_id: p.slug async for p in store.scan(Page, where)}  # type: ignore[attr-defined,misc]


def entity_out(entity: Entity, page: str | None = None) -> dict[str, Any]:
    data = entity.to_dict()
    data.pop("embedding", None)
    data["page"] = page
    return data


@router.get("/entities", response_model=Paged[EntityOut])
async def list_entities(
    kb: KB, request: Request, page: Annotated[PageParams, Depends()],
    type: str | None = None,
    category: Annotated[str | None, Query(description="entity | concept")] = None,
    q: Annotated[str | None, Query(description="part of the name or an alias")] = None,
    min_degree: Annotated[int, Query(ge=0)] = 0,
) -> dict:
    scoped = _scoped(request, kb)
    where = {k: v for k, v in (("type", type), ("category", category)) if v}
    needle = (q or "").casefold()

    def keep(e: Any) -> bool:
        if e.degree < min_degree:
            return False
        return not needle or any(needle in n.casefold() for n in (e.name, *e.aliases))

    result = await page_of_scan(scoped.scan(Entity, where), page, keep=keep)
    slugs = await page_slugs(scoped, [e.id for e in result["items"]])
    result["items"] = [entity_out(e, slugs.get(e.id)) for e in result["items"]]
    return result


@router.get("/entities/{entity_id}", response_model=EntityDetail)
async def read_entity(kb: KB, entity_id: str, request: Request) -> dict:
    """The entity, its page, its relations (both directions) and the claims about it."""
    scoped = _scoped(request, kb)
    found = await scoped.get(Entity, [entity_id])
    if not found:
        raise NotFound(f"no entity {entity_id!r}", field="entity_id")
    entity: Entity = found[0]  # type: ignore[assignment]
    relations = [r async for r in scoped.scan(Relation, {"source": entity_id})]
    relations += [r async for r in scoped.scan(Relation, {"target": entity_id})]
    claims = []
    if entity.chunk_ids:
        async for claim in scoped.scan(Claim, {"chunk_id": entity.chunk_ids[:500]}):
            if entity_id in claim.entity_ids and len(claims) < 200:  # type: ignore[attr-defined]
                claims.append(claim.to_dict())
    slugs = await page_slugs(scoped, [entity_id])
    return {**EntityOut.model_validate(entity_out(entity, slugs.get(entity_id))).model_dump(),
            "relations": [r.to_dict() for r in relations], "claims": claims}


@router.get("/relations", response_model=Paged[RelationOut])
async def list_relations(
    kb: KB, request: Request, page: Annotated[PageParams, Depends()],
    type: str | None = None, source: str | None = None, target: str | None = None,
    entity: Annotated[str | None, Query(description="relations with this entity at either end")] = None,
    min_strength: Annotated[int, Query(ge=0)] = 0,
) -> dict:
    scoped = _scoped(request, kb)
    where = {k: v for k, v in (("type", type), ("source", source), ("target", target)) if v}
    if entity:
        both = {r.id: r async for r in scoped.scan(Relation, {**where, "source": entity})}
        both |= {r.id: r async for r in scoped.scan(Relation, {**where, "target": entity})}
        items = [both[i].to_dict() for i in sorted(both) if both[i].strength >= min_strength]  # type: ignore[attr-defined]
        return page_of(items, lambda r: r["id"], page)
    return await page_of_scan(scoped.scan(Relation, where), page,
                              keep=lambda r: r.strength >= min_strength, render=lambda r: r.to_dict())


@router.get("/relations/{relation_id}", response_model=RelationOut)
async def read_relation(kb: KB, relation_id: str, request: Request) -> dict:
    found = await _scoped(request, kb).get(Relation, [relation_id])
    if not found:
        raise NotFound(f"no relation {relation_id!r}", field="relation_id")
    return found[0].to_dict()


@router.get("/topics", response_model=Paged[TopicOut])
async def list_topics(kb: KB, request: Request, page: Annotated[PageParams, Depends()]) -> dict:
    return await page_of_scan(_scoped(request, kb).scan(Topic), page, render=lambda t: t.to_dict())


@router.get("/topics/{topic_id}", response_model=TopicDetail)
async def read_topic(kb: KB, topic_id: str, request: Request) -> dict:
    """The topic with its members' names and its page."""
    scoped = _scoped(request, kb)
    found = await scoped.get(Topic, [topic_id])
    if not found:
        raise NotFound(f"no topic {topic_id!r}", field="topic_id")
    topic: Topic = found[0]  # type: ignore[assignment]
    members = await scoped.get(Entity, topic.members)
    subject = topic.subject_of_page()
    slugs = await page_slugs(scoped, [subject])
    return {**topic.to_dict(), "page": slugs.get(subject),
            "member_entities": [{"id": m.id, "name": m.name, "type": m.type} for m in members]}  # type: ignore[attr-defined]
