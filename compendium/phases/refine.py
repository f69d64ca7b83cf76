"""REFINE: write the planned pages from their evidence, concurrently, and store each one at once."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from dataclasses import dataclass, field

from ..compiler.context import CompileContext, PhaseResult
from ..engines.tasks import EvidenceItem, LinkTarget, PageRequest
from ..errors import BudgetExceeded, EngineError, EngineUnavailable
from ..storage.records import Chunk, Claim, Document, Entity, Page, PageVersion, Relation
from ..templates.schema import Template
from ..tokens import count_tokens
from .citations import body_of, clean_page, summary_of, unlink
from .evidence import Source, Statement, build_evidence
from .plan import load_plan
from .planning import CREATE, DELETE, KEEP, UPDATE, PagePlan, relation_text

PHASE = "refine"
MAX_SOURCES = 60  # chunks offered as excerpts to one page, those holding most claims first


def shrank_too_much(new_markdown: str, existing_markdown: str, evidence: list[EvidenceItem],
                    min_keep_ratio: float, max_page_tokens: int) -> bool:
    """Pure: is a merged page shorter than `min_keep_ratio` of the longer of its inputs?

    The inputs are capped at the page's own token budget: a page cannot be asked to be
    longer than it is allowed to be.
    """
    new = count_tokens(body_of(new_markdown))
    before = count_tokens(body_of(existing_markdown))
    given = sum(count_tokens(e.text) for e in evidence)
    baseline = min(max(before, given), max_page_tokens)
    return new < min_keep_ratio * baseline


@dataclass
class RefineTally:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    pending_edits: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    unlinked_links: int = 0
    removed_citations: int = 0


async def run(template: Template, ctx: CompileContext) -> PhaseResult:
    store, engine = ctx.store, ctx.engine
    plans = await load_plan(ctx, template)
    live = {p.slug: p for p in plans if p.action != DELETE}
    existing = {p.id: p for p in await store.get(Page, [p.slug for p in plans if p.action != KEEP])}
    tally = RefineTally(unchanged=[p.slug for p in plans if p.action == KEEP])
    now = time.time()

    # Deleted pages keep their markdown, so exports and the UI can still show what was there.
    gone = []
    for p in plans:
        page = existing.get(p.slug)
        if p.action == DELETE and page is not None and page.status != "deleted":
            page.status, page.updated_at = "deleted", now
            gone.append(page)
            tally.deleted.append(p.slug)
    if gone:
        await store.upsert(gone)

    slug_of_subject = {p.subject_id: p.slug for p in live.values()}
    chunk_about: dict[str, list[str]] = defaultdict(list)
    for p in live.values():
        if p.kind != "topic":
            for cid in p.chunk_ids:
                chunk_about[cid].append(p.slug)
    titles: dict[str, str] = {}
    todo = [p for p in plans if p.action in (CREATE, UPDATE)]
    gate = asyncio.Semaphore(template.refine.concurrency)
    fatal: list[BaseException] = []
    finished = 0

    async def one(plan: PagePlan) -> None:
        nonlocal finished
        try:
            await _write(plan)
        except (EngineUnavailable, BudgetExceeded) as exc:
            fatal.append(exc)
        except EngineError as exc:  # this page stays pending; the next run retries it
            tally.failed.append(plan.slug)
            ctx.warn(f"refine: page {plan.slug!r} failed: {exc}")
        finally:
            finished += 1
            ctx.progress(PHASE, finished, len(todo))
            gate.release()

    async def _write(plan: PagePlan) -> None:
        page = existing.get(plan.slug)
        if page is not None and page.status == "active" and page.evidence_fingerprint == plan.evidence_fingerprint:
            tally.unchanged.append(plan.slug)  # written before a crash; never write twice
            return
        if page is not None and page.edited:
            page.pending_update = True
            await store.upsert([page])
            tally.pending_edits.append(plan.slug)
            return
        evidence = await _evidence(ctx, plan, slug_of_subject, chunk_about, titles)
        is_update = page is not None and plan.action == UPDATE
        request = PageRequest(
            slug=plan.slug,
            title=plan.title,
            kind=plan.kind,
            description=plan.description,
            aliases=list(plan.aliases),
            evidence=evidence,
            links=[LinkTarget(s, live[s].title) for s in plan.links if s in live],
            existing_markdown=page.markdown if is_update and page else "",
            removed_refs=sorted(set(page.cited_chunks) - {e.chunk_id for e in evidence}) if is_update and page else [],
            max_tokens=template.refine.max_page_tokens,
        )
        written = await engine.write_page(request, template)
        cleaned = clean_page(written, [s for s in live if s != plan.slug], evidence)
        tally.unlinked_links += cleaned.counters["unlinked_links"]
        tally.removed_citations += cleaned.counters["removed_citations"]
        stamp = time.time()
        if is_update and page is not None and shrank_too_much(
            cleaned.markdown, page.markdown, evidence, template.refine.min_keep_ratio, template.refine.max_page_tokens
        ):
            # Keep the safe version, flag it for a person, and do not ask again for this evidence.
            page.pending_update, page.evidence_fingerprint, page.status = True, plan.evidence_fingerprint, "active"
            await store.upsert([page])
            tally.rejected.append(plan.slug)
            return
        summary = summary_of(cleaned.markdown)
        vector = (await ctx.embedder.embed([f"{plan.title}: {summary}"]))[0]
        changed = page is None or page.markdown != cleaned.markdown
        written_page = Page(
            id=plan.slug,
            slug=plan.slug,
            title=plan.title,
            kind=plan.kind,
            subject_id=plan.subject_id,
            markdown=cleaned.markdown,
            summary=summary,
            aliases=list(plan.aliases),
            outlinks=cleaned.outlinks,
            cited_chunks=cleaned.cited_chunk_ids,
            version=(page.version + int(changed)) if page else 1,
            created_at=page.created_at if page and page.created_at else stamp,
            updated_at=stamp,
            evidence_fingerprint=plan.evidence_fingerprint,
            status="active",
            engine=engine.name,
            embedding=vector,
        )
        async with store.transaction():  # the page and its version land together
            await store.upsert([written_page, *([PageVersion.of(written_page)] if changed else [])])
        (tally.updated if page is not None else tally.created).append(plan.slug)

    tasks: list[asyncio.Task[None]] = []
    for plan in todo:
        await gate.acquire()
        if fatal or ctx.cancel.is_set():
            gate.release()
            break
        tasks.append(asyncio.create_task(one(plan)))
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    if fatal or errors:
        raise (fatal or errors)[0]

    if tally.deleted:
        tally.unlinked_links += await _unlink_deleted(ctx)
    ctx.state["refine"] = {
        "created": sorted(tally.created),
        "updated": sorted(tally.updated),
        "deleted": sorted(tally.deleted),
        "unchanged": sorted(tally.unchanged),
    }
    details = {
        "created": len(tally.created),
        "updated": len(tally.updated),
        "unchanged": len(tally.unchanged),
        "deleted": len(tally.deleted),
        "rejected": len(tally.rejected),
        "pending_edits": len(tally.pending_edits),
        "unlinked_links": tally.unlinked_links,
        "removed_citations": tally.removed_citations,
    }
    if tally.rejected:
        details["rejected_pages"] = sorted(tally.rejected)
    if len(tasks) < len(todo):
        details["cancelled"] = True
    return PhaseResult(
        items=len(plans),
        done=len(tally.created) + len(tally.updated) + len(tally.deleted),
        skipped=len(tally.unchanged),
        failed=len(tally.failed),
        details=details,
    )


async def _evidence(
    ctx: CompileContext,
    plan: PagePlan,
    slug_of_subject: dict[str, str],
    chunk_about: dict[str, list[str]],
    titles: dict[str, str],
) -> list[EvidenceItem]:
    """The page's evidence pack, read from the store (claims, relations, chunk excerpts)."""
    store = ctx.store
    claims: list[Claim] = await store.get(Claim, plan.claim_ids)  # type: ignore[assignment]
    relations: list[Relation] = await store.get(Relation, plan.relation_ids)  # type: ignore[assignment]
    ends = sorted({e for r in relations for e in (r.source, r.target)})
    names = {e.id: e.name for e in await store.get(Entity, ends)}  # type: ignore[attr-defined]

    def about(entity_ids: list[str]) -> list[str]:
        return [slug_of_subject[e] for e in entity_ids if e in slug_of_subject and slug_of_subject[e] != plan.slug]

    statements = [Statement(c.text, [c.chunk_id], about(c.entity_ids)) for c in claims]
    statements += [
        Statement(relation_text(r, names), list(r.chunk_ids), about([r.source, r.target]), "relation")
        for r in relations
    ]
    per_chunk: dict[str, int] = defaultdict(int)
    for c in claims:
        per_chunk[c.chunk_id] += 1
    wanted = list(dict.fromkeys([*plan.chunk_ids, *per_chunk]))
    wanted.sort(key=lambda cid: -per_chunk.get(cid, 0))  # stable: ties keep the plan's order
    chunks: list[Chunk] = await store.get(Chunk, wanted[:MAX_SOURCES])  # type: ignore[assignment]
    missing = sorted({c.document_id for c in chunks} - set(titles))
    for doc in await store.get(Document, missing):
        titles[doc.id] = doc.title or doc.path  # type: ignore[attr-defined]
    sources = {
        c.id: Source(c.id, c.text, titles.get(c.document_id, ""), list(c.heading_path),
                     [s for s in chunk_about.get(c.id, ()) if s != plan.slug])
        for c in chunks
    }
    # A relation is cited by its first chunk: make that the chunk its description quotes.
    flat = {c.id: " ".join(c.text.split()) for c in chunks}
    for statement, relation in zip(statements[len(claims):], relations, strict=True):
        quoted = " ".join(relation.description.split())
        if quoted:
            statement.chunk_ids.sort(key=lambda cid: quoted not in flat.get(cid, ""))
    return build_evidence(statements, sources, [plan.title, *plan.aliases], ctx.template.refine.context_budget,
                          count_tokens)


async def _unlink_deleted(ctx: CompileContext) -> int:
    """Links into deleted pages become plain text in every active page not edited by a person."""
    pages: list[Page] = [p async for p in ctx.store.scan(Page)]  # type: ignore[misc]
    deleted = {p.slug for p in pages if p.status == "deleted"}
    if not deleted:
        return 0
    fixed, total = [], 0
    for page in pages:
        if page.status != "active" or not deleted.intersection(page.outlinks):
            continue
        if page.edited:
            page.pending_update = True
        else:
            page.markdown, n = unlink(page.markdown, deleted)
            page.outlinks = [s for s in page.outlinks if s not in deleted]
            page.version += 1
            page.updated_at = time.time()
            total += n
        fixed.append(page)
    if fixed:
        versions = [PageVersion.of(p) for p in fixed if not p.edited]
        async with ctx.store.transaction():
            await ctx.store.upsert([*fixed, *versions])
    return total
