"""PLAN: find topics, match every subject to an existing page or a new one, and store the plan."""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from collections.abc import Sequence

from ..engines.tasks import EntitySketch, MatchQuestion, TopicRequest
from ..errors import BudgetExceeded, EngineError, EngineUnavailable
from ..fingerprint import fingerprint, short_id
from ..outline.stored import keep_outline, plan_outline
from ..outline.titles import TOPIC_HEADING_SHARE, title_from_members
from ..pipeline.collector import collector_paused
from ..pipeline.context import CompileContext, PhaseResult
from ..pipeline.stages import clear_stage, rollup, stage_mark
from ..storage.records import CacheEntry, Chunk, Claim, Entity, Page, Relation, Topic
from ..templates.schema import Template
from .communities import match_previous, membership_fingerprint, update_communities
from .page_titles import titles_apart
from .planning import (
    KnowledgeView,
    PagePlan,
    Subject,
    build_plan,
    common_word_subjects,
    entity_subjects,
    lowercase_titles,
    match_by_subject,
    pick_knn_matches,
)
from .slugs import unique_slug
from .topic_names import Name, distinct_names

PHASE = "plan"
KNN_CONCURRENCY = 8
TOPIC_SKETCHES = 12
TOPIC_CLAIMS = 8
TOPIC_CHUNKS = 6  # chunks per central member whose headings may name the topic
KEEP_NAME_OVERLAP = 0.6  # a drifted topic keeps its title and summary at this Jaccard overlap


def _overlap(a: Sequence[str], b: Sequence[str]) -> float:
    union = set(a) | set(b)
    return len(set(a) & set(b)) / len(union) if union else 1.0


def plan_key(template: Template) -> str:
    return f"plan:{template.name}"


async def load_plan(ctx: CompileContext, template: Template) -> list[PagePlan]:
    """The plan of this compile: from ctx.state, else the stored one (resume after a crash)."""
    plans = ctx.state.get("plan")
    if plans is None:
        stored = await ctx.store.get(CacheEntry, [plan_key(template)])
        plans = [PagePlan.from_dict(d) for d in (stored[0].value if stored else [])]  # type: ignore[attr-defined]
    return list(plans)


PLAN_INPUTS = "plan-inputs"  # ctx.state: the fingerprint of this plan's inputs, for REFINE's mark
KB_VIEW = "plan-kb"  # ctx.state: the KB as PLAN read it, for REFINE's evidence in the same process
UNCHANGED = "plan-unchanged"  # ctx.state: the pages REFINE finished last time, when nothing changed


def plan_inputs(template: Template, ctx: CompileContext) -> str | None:
    """Fingerprint of everything PLAN and REFINE read, from what the phases before handed on
    (None when one of them could not say without a scan)."""
    before = [rollup(ctx.state, "ingest"), rollup(ctx.state, "reduce")]
    if None in before or (ctx.state.get("map") or {}).get("incomplete"):
        return None
    return fingerprint(before, template.phase_fingerprint(PHASE), template.phase_fingerprint("refine"),
                       ctx.engine.name, ctx.engine.model, ctx.embedder.model)


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
        return PhaseResult(items=n, skipped=n, details={"candidates": 0, "maybe_judged": 0, "topics": await store.count(Topic),
                                                         "create": 0, "update": 0, "keep": n, "delete": 0})
    if mark:
        await clear_stage(store, "refine")
    handed = (ctx.state.get("reduce") or {}).get("records")
    if handed is not None and handed[2] is not None:  # REDUCE ran in this process: the KB it stored, in the store's order
        entities, relations, claims = (sorted(kind, key=lambda r: r.id) for kind in handed)
    else:
        entities = [e async for e in store.scan(Entity)]  # type: ignore[misc]
        relations = [r async for r in store.scan(Relation)]  # type: ignore[misc]
        claims = [c async for c in store.scan(Claim)]  # type: ignore[misc]
    pages: list[Page] = [p async for p in store.scan(Page)]  # type: ignore[misc]
    kb = ctx.state[KB_VIEW] = KnowledgeView.build(entities, relations, claims)
    details: dict[str, int] = {"candidates": 0, "maybe_judged": 0, "topics": 0}

    subjects: list[Subject] = []
    if template.builds("wiki_pages"):
        facts = {eid: len(cids) for eid, cids in kb.claims_by_entity.items()}
        common = common_word_subjects(entities, kb.claims, kb.claims_by_entity)
        subjects = entity_subjects(entities, template.plan.min_support, template.plan.max_pages,
                                   facts, template.plan.min_facts, common, lowercase_titles(entities, common, kb.claims, kb.claims_by_entity))
    details["candidates"] = len(subjects)

    topic_of: dict[str, list[str]] = defaultdict(list)
    if template.builds("topics"):
        if (ctx.state.get("map") or {}).get("incomplete"):
            # Communities of part of the corpus would be named from that part, and keep their
            # names once found: the stored topics stand until MAP has extracted everything.
            topics = [t async for t in store.scan(Topic)]  # type: ignore[misc]
        else:
            topics = await _topics(template, ctx, entities, relations, kb, pages)
        details["topics"] = len(topics)
        for t in topics:
            for m in t.members:
                topic_of[m].append(t.id)
            subjects.append(
                Subject(id=t.id, title=t.title, kind="topic", description=t.summary,
                        entity_ids=list(t.members), importance=float(len(t.members)))
            )
    else:
        await store.delete(Topic, {})
    outline = None
    if template.builds("outline"):
        outline = await plan_outline(store, subjects, entities, relations)
        subjects.extend(outline.overviews)
        details["outline_nodes"] = len(outline.overviews)
        details["outline_reused"] = int(outline.reused)

    titles_apart(subjects, {s.id for s in outline.overviews} if outline is not None else ())
    matched = match_by_subject(subjects, pages)
    reasons: dict[str, str] = {}  # why a subject took over a page that was not its own
    unmatched = [s for s in subjects if s.id not in matched]
    claimed = set(matched.values())
    subject_ids = {s.id for s in subjects}
    orphans = {p.slug: p for p in pages
               if p.status == "active" and p.slug not in claimed and p.subject_id not in subject_ids}
    if unmatched and orphans:
        updates, maybes = await _knn(ctx, template, unmatched, orphans)
        matched.update(updates)
        reasons.update({sid: "similar existing page" for sid in updates})
        judged = await _judge(ctx, template, unmatched, maybes, orphans)
        details["maybe_judged"] = len(maybes)
        matched.update(judged)
        reasons.update({sid: "judged the same as an existing page" for sid in judged})

    plans = build_plan(
        subjects, pages, matched, reasons, kb, topic_of,
        refine_fp=template.phase_fingerprint("refine"), model=ctx.engine.model,
    )
    if outline is not None:
        await keep_outline(store, outline, plans)
    await store.upsert([
        CacheEntry(id=plan_key(template), namespace="plan", value=[p.to_dict() for p in plans], created_at=time.time())
    ])
    ctx.state["plan"] = plans
    actions = Counter(p.action for p in plans)
    details.update({a.lower(): actions.get(a, 0) for a in ("CREATE", "UPDATE", "KEEP", "DELETE")})
    ctx.progress(PHASE, len(plans), len(plans))
    return PhaseResult(
        items=len(plans),
        done=len(plans) - actions.get("KEEP", 0),
        skipped=actions.get("KEEP", 0),
        details=details,
    )


async def _knn(
    ctx: CompileContext, template: Template, unmatched: Sequence[Subject], orphans: dict[str, Page]
) -> tuple[dict[str, str], list[tuple[str, str, float]]]:
    vectors = await ctx.embedder.embed([f"{s.title}: {s.description}" for s in unmatched])
    gate = asyncio.Semaphore(KNN_CONCURRENCY)
    hits: list[tuple[str, str, float]] = []

    async def nearest(subject: Subject, vector) -> None:  # type: ignore[no-untyped-def]
        async with gate:
            # A few neighbours, since the closest may be a page another subject still owns.
            found = await ctx.store.knn(Page, vector, 3, where={"status": "active", "kind": subject.kind})
        for page, score in found:
            if page.id in orphans:
                hits.append((subject.id, page.id, float(score)))
                break

    await asyncio.gather(*(nearest(s, v) for s, v in zip(unmatched, vectors, strict=True)))
    return pick_knn_matches(hits, template.plan)


async def _judge(
    ctx: CompileContext,
    template: Template,
    subjects: Sequence[Subject],
    maybes: Sequence[tuple[str, str, float]],
    orphans: dict[str, Page],
) -> dict[str, str]:
    """Ask the engine about pairs in the maybe band, in batches; every answer is cached."""
    by_id = {s.id: s for s in subjects}
    keys = {
        sid: fingerprint("match", sid, by_id[sid].title, by_id[sid].description,
                         slug, orphans[slug].title, orphans[slug].summary, ctx.engine.model)
        for sid, slug, _ in maybes
    }
    cached = {e.id: bool(e.value) for e in await ctx.store.get(CacheEntry, list(keys.values()))}  # type: ignore[attr-defined]
    answers: dict[str, bool] = {}
    ask: list[tuple[str, str, float]] = []
    for sid, slug, score in maybes:
        if keys[sid] in cached:
            answers[sid] = cached[keys[sid]]
        else:
            ask.append((sid, slug, score))
    size = template.plan.judge_batch
    for start in range(0, len(ask), size):
        batch = ask[start:start + size]
        questions = [
            MatchQuestion(
                label=f"q{n}",
                candidate=EntitySketch(name=by_id[sid].title, type=by_id[sid].type or by_id[sid].kind,
                                       description=by_id[sid].description, aliases=by_id[sid].aliases),
                page_title=orphans[slug].title,
                page_summary=orphans[slug].summary,
                similarity=score,
            )
            for n, (sid, slug, score) in enumerate(batch, start=1)
        ]
        reply = await ctx.engine.judge_matches(questions, template)
        now = time.time()
        entries = []
        for q, (sid, _slug, _score) in zip(questions, batch, strict=True):
            answers[sid] = bool(reply.get(q.label, False))
            entries.append(CacheEntry(id=keys[sid], namespace="match", value=answers[sid], created_at=now))
        await ctx.store.upsert(entries)
    return {sid: slug for sid, slug, _ in maybes if answers.get(sid)}


async def _topics(
    template: Template,
    ctx: CompileContext,
    entities: Sequence[Entity],
    relations: Sequence[Relation],
    kb: KnowledgeView,
    pages: Sequence[Page],
) -> list[Topic]:
    """Communities of the entity graph as Topic records; unchanged memberships keep everything."""
    settings = template.plan.topics
    importance = {e.id: e.importance for e in entities}
    stored: dict[str, Topic] = {t.id: t async for t in ctx.store.scan(Topic)}  # type: ignore[misc]
    graph_key = f"topic-graph:{template.name}:{fingerprint(settings.model_dump(mode='json'))}"
    known = await ctx.store.get(CacheEntry, [graph_key])
    groups = update_communities(
        importance, ((r.source, r.target, float(max(r.strength, 1))) for r in relations),
        {tid: t.members for tid, t in stored.items()}, known[0].value if known else (),  # type: ignore[attr-defined]
        resolution=settings.resolution, min_size=settings.min_size, max_topics=settings.max_topics,
        importance=importance,
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
        if previous is not None and previous.fingerprint == fp:
            kept.append(previous)
        elif previous is not None and previous.fingerprint and _overlap(previous.members, members) >= KEEP_NAME_OVERLAP:
            # A few members came or went: the topic is still what its name says; no call.
            kept.append(Topic(id=previous.id, slug=previous.slug, title=previous.title, summary=previous.summary,
                              members=list(members), fingerprint=fp))
        else:
            kept.append(None)

    async def name(i: int, titles: Sequence[str]) -> Name:  # a heading names one topic only
        return Name(*await _name_topic(ctx, template, groups[i], by_id, kb, titles))

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
        title, summary = named.title, named.summary
        if previous is not None:  # membership drifted: keep the id and slug, rename
            tid, slug = previous.id, previous.slug
        else:
            tid = short_id("topic", fp)
            slug = unique_slug(title, "topic", taken, key=tid)
        # An unnamed topic stores no fingerprint, so the next run names it (keeping id and slug).
        topics.append(Topic(id=tid, slug=slug, title=title, summary=summary or "", members=list(members),
                            fingerprint=fp if summary is not None else ""))
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
    ctx: CompileContext, template: Template, members: Sequence[str], by_id: dict[str, Entity], kb: KnowledgeView,
    taken: Sequence[str] = (),
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
    claim_hits: Counter[str] = Counter(c for m in members for c in kb.claims_by_entity.get(m, ()))
    claims = [kb.claims[c].text for c, _n in sorted(claim_hits.items(), key=lambda kv: (-kv[1], kv[0]))[:TOPIC_CLAIMS]]
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
