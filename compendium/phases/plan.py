"""PLAN: find topics, match every subject to an existing page or a new one, and store the plan."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from typing import Any

from ..fingerprint import fingerprint
from ..outline import stored as outline_rules
from ..outline.stored import keep_outline, plan_outline
from ..outline.tree import parent_titles as outline_parents
from ..pipeline.collector import collector_paused
from ..pipeline.context import CompileContext, PhaseResult
from ..pipeline.stages import clear_stage, rollup, stage_mark
from ..storage.records import CacheEntry, Claim, Entity, Page, Relation, Topic
from ..templates.schema import Template
from .claim_index_store import load_parts, regroup, reset_index
from .page_titles import page_titles, titles_apart
from .plan_claims import ClaimReader, claims_by_subject, updated_claim_index
from .planning import (
    DELETE,
    MAX_TOPIC_CLAIMS,
    KnowledgeView,
    PagePlan,
    Subject,
    claims_to_read,
    common_word_subjects,
    draft_plan,
    entity_subjects,
    finish_plan,
    lowercase_titles,
)
from .topics import plan_topics

PHASE = "plan"


def plan_key(template: Template) -> str:
    return f"plan:{template.name}"


async def load_plan(ctx: CompileContext, template: Template) -> list[PagePlan]:
    """The plan of this compile: from ctx.state, else the stored one (resume after a crash)."""
    plans = ctx.state.get("plan")
    if plans is None:
        stored = await ctx.store.get(CacheEntry, [plan_key(template)])
        plans = [PagePlan.from_dict(d) for d in (stored[0].value if stored else [])]  # type: ignore[attr-defined]
        # An entity's page is planned over all its chunks: those are its record's, not stored twice.
        wanted = {p.subject_id: p for p in plans if p.kind != "topic" and p.action != DELETE and not p.chunk_ids}
        for entity in await ctx.store.get(Entity, list(wanted)):
            wanted[entity.id].chunk_ids = sorted(set(entity.chunk_ids))  # type: ignore[attr-defined]
    return list(plans)


def stored_plan(plan: PagePlan) -> dict[str, Any]:
    """A plan entry as stored: an entity's chunks (its whole record's, a large share of the
    plan's size at scale) are left for load_plan to take from the entity."""
    data = plan.to_dict()
    if plan.kind != "topic":
        data["chunk_ids"] = []
    return data


PLAN_INPUTS = "plan-inputs"  # ctx.state: the fingerprint of this plan's inputs, for REFINE's mark
PLAN_VERSION = 5  # bump when the same inputs plan other pages (2: a node named like a page has it as overview;
# 3: so has a community named like a member; 4: a topic named after a member that left it is named again;
# 5: slugs from the subjects alone, no page taken over by embedding; links in order in the fingerprint)
KB_VIEW = "plan-kb"  # ctx.state: the KB as PLAN read it, for REFINE's evidence in the same process
UNCHANGED = "plan-unchanged"  # ctx.state: the pages REFINE finished last time, when nothing changed


def plan_inputs(template: Template, ctx: CompileContext) -> str | None:
    """Fingerprint of everything PLAN and REFINE read, from what the phases before handed on
    (None when one of them could not say without a scan)."""
    before = [rollup(ctx.state, "ingest"), rollup(ctx.state, "reduce")]
    if None in before or (ctx.state.get("map") or {}).get("incomplete"):
        return None
    return fingerprint(before, template.phase_fingerprint(PHASE), template.phase_fingerprint("refine"),
                       ctx.engine.name, ctx.engine.model, ctx.embedder.model, PLAN_VERSION,
                       outline_rules.OUTLINE_VERSION)  # new outline rules re-plan a KB nothing else changed in


async def run(template: Template, ctx: CompileContext) -> PhaseResult:
    with collector_paused(ctx):  # the whole KB's view and every subject in memory: see pipeline/collector.py
        return await _run(template, ctx)


async def _run(template: Template, ctx: CompileContext) -> PhaseResult:
    store = ctx.store
    inputs = ctx.state[PLAN_INPUTS] = plan_inputs(template, ctx)
    mark = await stage_mark(store, "refine")
    if inputs is not None and mark.get("fingerprint") == inputs and mark.get("pages") == await store.count(Page):
        # REFINE finished every page of this very plan last time: nothing to plan or write.
        ctx.state["plan"] = []
        ctx.state[UNCHANGED] = list(mark.get("live") or [])
        n = len(ctx.state[UNCHANGED])
        ctx.progress(PHASE, n, n)
        return PhaseResult(items=n, skipped=n, details={"candidates": 0, "topics": await store.count(Topic),
                                                         "create": 0, "update": 0, "keep": n, "delete": 0})
    if mark:
        await clear_stage(store, "refine")
    handed = (ctx.state.get("reduce") or {}).get("records")
    claims: list[Claim] | None = None
    if handed is not None:  # REDUCE ran in this process: the KB it stored, in the store's order
        entities, relations = (sorted(kind, key=lambda r: r.id) for kind in handed[:2])
        claims = handed[2]
    else:
        entities = [e async for e in store.scan(Entity)]  # type: ignore[misc]
        relations = [r async for r in store.scan(Relation)]  # type: ignore[misc]
    pages: list[Page] = [p async for p in store.scan(Page)]  # type: ignore[misc]
    reader = ClaimReader(store, claims)
    index, rebuilt = await updated_claim_index(ctx, entities, reader)
    kb = ctx.state[KB_VIEW] = KnowledgeView.build(entities, relations)
    kb.claims = reader.known  # the claims read for this plan: REFINE reads the others itself
    details: dict[str, int] = {"candidates": 0, "topics": 0}

    subjects: list[Subject] = []
    if template.builds("wiki_pages"):
        facts = {e.id: index.facts(e.id) for e in entities}
        common = common_word_subjects(index)
        subjects = entity_subjects(entities, template.plan.min_support, template.plan.max_pages,
                                   facts, template.plan.min_facts, common, lowercase_titles(entities, common, index))
    details["candidates"] = len(subjects)

    topic_of: dict[str, list[str]] = defaultdict(list)
    if template.builds("topics"):
        if (ctx.state.get("map") or {}).get("incomplete"):
            # Communities of part of the corpus would be named from that part, and keep their
            # names once found: the stored topics stand until MAP has extracted everything.
            topics = [t async for t in store.scan(Topic)]  # type: ignore[misc]
        else:
            topics = await plan_topics(template, ctx, entities, relations, pages, index, reader, page_titles(subjects))
        details["topics"] = len(topics)
        for t in topics:
            for m in t.members:
                topic_of[m].append(t.subject_of_page())
            if t.page_subject:  # named like a member with a page: that page is the topic's
                continue
            subjects.append(
                Subject(id=t.id, title=t.title, kind="topic", description=t.summary,
                        entity_ids=list(t.members), importance=float(len(t.members)))
            )
    else:
        await store.delete(Topic, {})
    outline = None
    if template.builds("outline"):
        outline = await plan_outline(store, subjects, entities, relations, folder=rollup(ctx.state, "ingest"))
        subjects.extend(outline.overviews)
        details["outline_nodes"] = sum(1 for root in outline.roots for _node in root.walk())
        details["outline_reused"] = int(outline.reused)

    titles_apart(subjects, outline_parents(outline.roots) if outline is not None else {})
    # Every topic and outline node keeps its claims in the index, counted for the members it has now.
    groups = {s.id: s.entity_ids for s in subjects if s.kind == "topic"}
    for gid in [g for g in index.groups if g not in groups]:
        index.drop_group(gid)
    for gid, members in groups.items():
        await regroup(store, index, gid, members, MAX_TOPIC_CLAIMS)
    stored = await ctx.store.get(CacheEntry, [plan_key(template)])
    previous = {p.subject_id: p for p in (PagePlan.from_dict(d) for d in (stored[0].value if stored else []))  # type: ignore[attr-defined]
                if p.action != DELETE}
    claim_ids = await claims_by_subject(store, index, subjects, previous,
                                        reusable=not rebuilt and index.plans.get(plan_key(template)) == index.tag)
    drafts = draft_plan(subjects, kb, topic_of, claim_ids,
                        refine_fp=template.phase_fingerprint("refine"), model=ctx.engine.model,
                        furniture=index.furniture_by_chunk())
    await reader.get(claims_to_read(drafts, previous))
    plans = finish_plan(drafts, pages, kb, previous,
                        refine_fp=template.phase_fingerprint("refine"), model=ctx.engine.model)
    if outline is not None:
        await keep_outline(store, outline, plans)
    for set_id in index.oversized():
        await load_parts(store, index, index.all_parts(set_id))
        index.split(set_id)
    index.tag = rollup(ctx.state, "reduce")
    index.plans[plan_key(template)] = index.tag
    now = time.time()
    write, gone = index.entries(now)
    async with store.transaction():  # the plan and the claim index it was made from land together
        if rebuilt:
            await reset_index(store)
        for start in range(0, len(gone), 900):
            await store.delete(CacheEntry, {"id": gone[start:start + 900]})
        await store.upsert([*write, CacheEntry(id=plan_key(template), namespace="plan",
                                               value=[stored_plan(p) for p in plans], created_at=now)])
    ctx.state["plan"] = plans
    # How much of the KB's claims this plan needed: all when its index was built again.
    details.update({"claim_index_rebuilt": int(rebuilt), "claims_read": len(reader.known)})
    actions = Counter(p.action for p in plans)
    details.update({a.lower(): actions.get(a, 0) for a in ("CREATE", "UPDATE", "KEEP", "DELETE")})
    ctx.progress(PHASE, len(plans), len(plans))
    return PhaseResult(
        items=len(plans),
        done=len(plans) - actions.get("KEEP", 0),
        skipped=actions.get("KEEP", 0),
        details=details,
    )
