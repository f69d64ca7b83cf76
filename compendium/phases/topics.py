"""PLAN's topics: communities of the entity graph as Topic records, named by the engine from
their central members, claims and headings; a topic whose members barely changed keeps its name."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence

from ..engines.tasks import EntitySketch, TopicRequest
from ..errors import BudgetExceeded, EngineError, EngineUnavailable
from ..fingerprint import fingerprint, short_id
from ..graph.communities import match_previous, membership_fingerprint, update_communities
from ..pipeline.context import CompileContext
from ..storage.records import CacheEntry, Chunk, Entity, Page, Relation, Topic
from ..storage.slugs import unique_slug
from ..templates.schema import Template
from ..titles import TOPIC_HEADING_SHARE, title_from_members
from .claim_index import ClaimIndex
from .claim_index_store import regroup
from .page_titles import member_named_like
from .plan_claims import ClaimReader
from .topic_names import Name, distinct_names

TOPIC_SKETCHES = 12
TOPIC_CLAIMS = 8
TOPIC_CHUNKS = 6  # chunks per central member whose headings may name the topic
KEEP_NAME_OVERLAP = 0.6  # a drifted topic keeps its title and summary at this Jaccard overlap


def _overlap(a: Sequence[str], b: Sequence[str]) -> float:
    union = set(a) | set(b)
    return len(set(a) & set(b)) / len(union) if union else 1.0


async def plan_topics(
    template: Template,
    ctx: CompileContext,
    entities: Sequence[Entity],
    relations: Sequence[Relation],
    pages: Sequence[Page],
    index: ClaimIndex,
    reader: ClaimReader,
    page_named: Mapping[str, str],
) -> list[Topic]:
    """Communities of the entity graph as Topic records; unchanged memberships keep everything.
    `page_named`: casefolded title -> subject id of the entity and concept pages planned (a
    topic named like one of its members has that member's page)."""
    settings = template.plan.topics
    importance = {e.id: e.importance for e in entities}
    stored: dict[str, Topic] = {t.id: t async for t in ctx.store.scan(Topic)}  # type: ignore[misc]
    graph_key = f"topic-graph:{template.name}:{fingerprint(settings.model_dump(mode='json'))}"
    known = await ctx.store.get(CacheEntry, [graph_key])
    groups = update_communities(
        importance, ((r.source, r.target, float(max(r.strength, 1))) for r in relations),
        {tid: t.members for tid, t in stored.items()}, known[0].value if known else (),  # type: ignore[attr-defined]
        resolution=settings.resolution, min_size=settings.min_size, max_topics=settings.max_topics,
        importance=importance, max_size=settings.max_size,
    )
    await ctx.store.upsert([CacheEntry(id=graph_key, namespace="topic-graph", value=sorted(importance),
                                       created_at=time.time())])
    pairing = match_previous(groups, {tid: t.members for tid, t in stored.items()})
    taken = {p.slug for p in pages} | {t.slug for t in stored.values()}
    by_id = {e.id: e for e in entities}
    kept: list[Topic | None] = []  # a topic that keeps its name; None: one to name
    for i, members in enumerate(groups):
        fp = membership_fingerprint(members)
        previous = stored.get(pairing[i]) if i in pairing else None
        if previous is not None and previous.page_subject and previous.page_subject not in members:
            kept.append(None)  # named after a member that has left it: its name says what it no longer holds
        elif previous is not None and previous.fingerprint == fp:
            kept.append(previous)
        elif previous is not None and previous.fingerprint and _overlap(previous.members, members) >= KEEP_NAME_OVERLAP:
            # A few members came or went: the topic is still what its name says; no call.
            kept.append(Topic(id=previous.id, slug=previous.slug, title=previous.title, summary=previous.summary,
                              members=list(members), fingerprint=fp))
        else:
            kept.append(None)

    async def name(i: int, titles: Sequence[str]) -> Name:  # a heading names one topic only
        members = groups[i]
        previous = stored.get(pairing[i]) if i in pairing else None
        tid = previous.id if previous is not None else short_id("topic", membership_fingerprint(members))

        async def top_claims() -> list[str]:
            ids = await regroup(ctx.store, index, tid, members, TOPIC_CLAIMS)
            found = await reader.get(ids)
            return [found[c].text for c in ids]

        return Name(*await _name_topic(ctx, template, members, by_id, top_claims, titles))

    # Asked together, not one after another: see topic_names.py for why the titles are the same.
    names = await distinct_names([t.title if t else None for t in kept], name, template.map.concurrency)
    if answered := [(groups[i], n) for i, n in enumerate(names) if n is not None and n.summary is not None]:
        await ctx.store.upsert([CacheEntry(id=_name_key(ctx, members), namespace="topic", created_at=time.time(),
                                           value={"title": n.title, "summary": n.summary}) for members, n in answered])
    topics: list[Topic] = []
    for i, members in enumerate(groups):
        named = names[i]
        if named is None:
            topics.append(kept[i])  # type: ignore[arg-type]
            continue
        fp = membership_fingerprint(members)
        previous = stored.get(pairing[i]) if i in pairing else None
        tid = previous.id if previous is not None else short_id("topic", fp)
        title, summary = named.title, named.summary
        if previous is not None:  # membership drifted: keep the id and slug, rename
            slug = previous.slug
        else:
            slug = unique_slug(title, "topic", taken, key=tid)
        # An unnamed topic stores no fingerprint, so the next run names it (keeping id and slug).
        topics.append(Topic(id=tid, slug=slug, title=title, summary=summary or "", members=list(members),
                            fingerprint=fp if summary is not None else ""))
    for t in topics:
        t.page_subject = member_named_like(t.title, t.members, page_named)
    keep = {t.id for t in topics}
    gone = [tid for tid in stored if tid not in keep]
    async with ctx.store.transaction():
        if gone:
            await ctx.store.delete(Topic, {"id": gone})
        await ctx.store.upsert(topics)
    return topics


async def _member_headings(ctx: CompileContext, members: Sequence[Entity]) -> list[tuple[str, int]]:
    """Headings of the members' chunks, with how many members sit under each, most first;
    among equals the deeper (more specific) heading first."""
    wanted = {cid: e.id for e in members for cid in sorted(e.chunk_ids)[:TOPIC_CHUNKS]}
    chunks: list[Chunk] = await ctx.store.get(Chunk, list(wanted))  # type: ignore[assignment]
    covered: dict[str, set[str]] = defaultdict(set)
    depth: dict[str, int] = {}
    for chunk in chunks:
        for level, heading in enumerate(chunk.heading_path):
            text = " ".join(heading.split())
            if text:
                covered[text].add(wanted[chunk.id])
                depth[text] = max(depth.get(text, 0), level)
    ranked = sorted(covered, key=lambda h: (-len(covered[h]), -depth[h], h))
    return [(h, len(covered[h])) for h in ranked[:TOPIC_SKETCHES]]


async def _name_topic(
    ctx: CompileContext, template: Template, members: Sequence[str], by_id: dict[str, Entity],
    top_claims: Callable[[], Awaitable[list[str]]], taken: Sequence[str] = (),
) -> tuple[str, str | None]:
    """Title and summary of a topic; summary None when the engine failed and the title is a stand-in.
    Not kept here: the caller keeps the names it settles on (topic_names.py)."""
    cached = await ctx.store.get(CacheEntry, [_name_key(ctx, members)])
    if cached:
        value = cached[0].value  # type: ignore[attr-defined]
        return value["title"], value["summary"]
    ranked = sorted(members, key=lambda m: (-by_id[m].importance, m))[:TOPIC_SKETCHES]
    sketches = [EntitySketch(name=by_id[m].name, type=by_id[m].type, description=by_id[m].description,
                             aliases=list(by_id[m].aliases)) for m in ranked]
    claims = await top_claims()  # those naming most members first
    headings = await _member_headings(ctx, [by_id[m] for m in ranked])
    try:
        reply = await ctx.engine.name_topic(TopicRequest(members=sketches, claims=claims, headings=headings,
                                                            taken_titles=list(taken)), template)
    except (EngineUnavailable, BudgetExceeded):
        raise
    except EngineError as exc:  # a name is not worth failing the plan for; ask again next run
        ctx.warn(f"plan: naming a topic failed ({exc}); named by its headings for now")
        return title_from_members(headings, [s.name for s in sketches], len(sketches),
                                  share=TOPIC_HEADING_SHARE), None
    title = " ".join(reply.title.split()) or sketches[0].name
    return title, reply.summary


def _name_key(ctx: CompileContext, members: Sequence[str]) -> str:
    return fingerprint(sorted(members), ctx.engine.model)
