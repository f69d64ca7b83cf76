"""PLAN: find topics, match every subject to an existing page or a new one, and store the plan."""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..engines.tasks import EntitySketch, MatchQuestion, TopicRequest
from ..errors import BudgetExceeded, EngineError, EngineUnavailable
from ..fingerprint import fingerprint, short_id
from ..graph.communities import match_previous, membership_fingerprint, update_communities
from ..outline import stored as outline_rules
from ..outline.stored import keep_outline, plan_outline
from ..outline.titles import TOPIC_HEADING_SHARE, title_from_members
from ..outline.tree import parent_titles as outline_parents
from ..pipeline.collector import collector_paused
from ..pipeline.context import CompileContext, PhaseResult
from ..pipeline.stages import clear_stage, rollup, stage_mark
from ..storage.base import Store
from ..storage.records import CacheEntry, Chunk, Claim, Entity, Page, Relation, Topic
from ..storage.slugs import unique_slug
from ..templates.schema import Template
from .claim_index import ClaimIndex, built_index
from .claim_index_keys import entity_set
from .claim_index_store import load_parts, open_index, regroup, reset_index
from .claim_kinds import words_of
from .page_titles import member_named_like, page_titles, titles_apart
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
    match_by_subject,
    pick_knn_matches,
    subject_claim_parts,
    subject_claims,
)
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
PLAN_VERSION = 4  # bump when the same inputs plan other pages (2: a node named like a page has it as overview;
# 3: so has a community named like a member; 4: a topic named after a member that left it is named again)
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
        return PhaseResult(items=n, skipped=n, details={"candidates": 0, "maybe_judged": 0, "topics": await store.count(Topic),
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
    index, rebuilt = await _claim_index(ctx, entities, reader)
    kb = ctx.state[KB_VIEW] = KnowledgeView.build(entities, relations)
    kb.claims = reader.known  # the claims read for this plan: REFINE reads the others itself
    details: dict[str, int] = {"candidates": 0, "maybe_judged": 0, "topics": 0}

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
            topics = await _topics(template, ctx, entities, relations, pages, index, reader, page_titles(subjects))
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

    # Every topic and outline node keeps its claims in the index, counted for the members it has now.
    groups = {s.id: s.entity_ids for s in subjects if s.kind == "topic"}
    for gid in [g for g in index.groups if g not in groups]:
        index.drop_group(gid)
    for gid, members in groups.items():
        await regroup(store, index, gid, members, MAX_TOPIC_CLAIMS)
    stored = await ctx.store.get(CacheEntry, [plan_key(template)])
    previous = {p.subject_id: p for p in (PagePlan.from_dict(d) for d in (stored[0].value if stored else []))  # type: ignore[attr-defined]
                if p.action != DELETE}
    claim_ids = await _subject_claims(store, index, subjects, previous,
                                      reusable=not rebuilt and index.plans.get(plan_key(template)) == index.tag)
    drafts = draft_plan(subjects, pages, matched, kb, topic_of, claim_ids,
                        refine_fp=template.phase_fingerprint("refine"), model=ctx.engine.model,
                        furniture=index.furniture_by_chunk())
    await reader.get(claims_to_read(drafts, previous))
    plans = finish_plan(drafts, pages, matched, reasons, kb, previous,
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


class ClaimReader:
    """Claims by id, read from the store once each; every claim only when the claim index is
    built again (from those REDUCE handed over, when it handed them all). `known` is what was
    read: REFINE writes from it first."""

    def __init__(self, store: Store, claims: Sequence[Claim] | None):
        self.store, self.handed = store, claims
        self.whole = False
        self.known: dict[str, Claim] = {}

    async def all(self) -> list[Claim]:
        if not self.whole:
            if self.handed is not None:
                self.known = {c.id: c for c in self.handed}
            else:
                self.known = {c.id: c async for c in self.store.scan(Claim)}  # type: ignore[misc]
            self.whole = True
        return list(self.known.values())

    async def get(self, ids: Sequence[str]) -> dict[str, Claim]:
        if not self.whole:
            missing = [i for i in dict.fromkeys(ids) if i not in self.known]
            for start in range(0, len(missing), READ_BATCH):
                for claim in await self.store.get(Claim, missing[start:start + READ_BATCH]):
                    self.known[claim.id] = claim  # type: ignore[assignment]
        return {i: self.known[i] for i in ids if i in self.known}


READ_BATCH = 5000
REBUILD_SHARE = 0.5  # changes past this share of the claims handed over: the index is built again


async def _claim_index(ctx: CompileContext, entities: Sequence[Entity], reader: ClaimReader) -> tuple[ClaimIndex, bool]:
    """The claim index brought up to date with what REDUCE changed, or built from every claim
    when it does not describe the REDUCE output those changes start from. Returns (index, rebuilt)."""
    reduced = ctx.state.get("reduce") or {}
    current = rollup(ctx.state, "reduce")
    # REDUCE hands what it changed since its last output; without changes handed (it found
    # nothing to do) the index must describe its output as it stands.
    since = reduced.get("claims_since") if "changed_claims" in reduced else current
    index = await open_index(ctx.store)
    words = words_of(entities)
    removed, added = list(reduced.get("old_claims") or ()), list(reduced.get("changed_claims") or ())
    # Most claims changed (REDUCE's own code did): building the index again from them costs less.
    most = reader.handed is not None and len(removed) + len(added) > REBUILD_SHARE * len(reader.handed)
    if current is not None and index.tag is not None and index.tag == since and not most:
        await load_parts(ctx.store, index, index.text_buckets([*removed, *added]))
        await load_parts(ctx.store, index, index.claim_parts([*removed, *added]))
        stale = index.apply(removed, added, words)
        rebuilt = False
    else:
        index = built_index(await reader.all(), entities)
        stale, rebuilt = set(), True
    for eid in sorted(stale):  # renamed: its word is counted again over all its claims
        await load_parts(ctx.store, index, index.all_parts(entity_set(eid)))
        found = await reader.get(index.ids(entity_set(eid)))
        index.recount(eid, words[eid], (c.text for c in found.values()))
    return index, rebuilt


async def _subject_claims(store: Store, index: ClaimIndex, subjects: Sequence[Subject],
                          previous: dict[str, PagePlan], *, reusable: bool) -> dict[str, list[str]]:
    """Each subject's claims; an entity's are the previous plan's when its claim set did not
    change (`reusable`: that plan was made from the index as it was before this compile)."""
    out: dict[str, list[str]] = {}
    todo: list[Subject] = []
    for s in subjects:
        before = previous.get(s.id) if reusable and s.kind != "topic" else None
        if before is not None and before.kind != "topic" and entity_set(s.id) not in index.touched:
            out[s.id] = list(before.claim_ids)
        else:
            todo.append(s)
    await load_parts(store, index, [k for s in todo for k in subject_claim_parts(s, index)])
    out.update({s.id: subject_claims(s, index) for s in todo})
    return out
