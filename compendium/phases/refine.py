"""REFINE: write the planned pages from their evidence, concurrently; store each with its embedding.

Past ~450 lines because `run` is one pass over the plan whose steps share the compile's
state (the pages standing, the batches in flight, the tally the report is made of); what stands
alone lives beside it: evidence packing (evidence, page_candidates, evidence_packs), batching
(page_batches, update_groups), failures (page_failures) and the page's text (citations).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from functools import lru_cache

from ..engines.cache import drawn_from
from ..engines.tasks import EvidenceItem, LinkTarget, PageRequest
from ..errors import BudgetExceeded, EngineError, EngineUnavailable
from ..fingerprint import fingerprint
from ..pipeline.context import CompileContext, PhaseResult
from ..pipeline.stages import mark_stage
from ..storage.base import Store
from ..storage.records import CacheEntry, Chunk, Page, PageVersion
from ..templates.schema import Template
from ..tokens import count_tokens
from .chunk_pages import ChunkPages
from .citations import (
    CleanPage,
    body_of,
    cited_chunks,
    cited_refs,
    clean_page,
    insert_additions,
    recite,
    stated_in,
    summary_of,
)
from .evidence import choose_evidence
from .evidence_packs import pack_delta, pack_key, pack_value
from .evidence_reader import EvidenceReader
from .gone_links import unlink_gone_pages
from .page_batches import PageBatches, WrittenPage
from .page_candidates import PageWindow, candidates
from .page_failures import RETRY_FAILED, backed_off_pages, failure_key, record_failures
from .plan import KB_VIEW, PLAN_INPUTS, UNCHANGED, load_plan
from .planning import CREATE, DELETE, KEEP, UPDATE, PagePlan
from .refine_furniture import furniture_moved, furniture_reaches, holding_returned
from .update_groups import MAX_GROUP_PAGES, SMALL_UPDATE_TOKENS, UpdateGroups

PHASE = "refine"
PACK_NAMESPACE = "page-pack"  # per page: the evidence it was written from, for cheap updates
WITHHELD = "withheld"  # page status: written, but with no cited fact, so never shown

# A claim is offered to every page about its entities: count its tokens once.
_item_tokens = lru_cache(maxsize=65536)(count_tokens)


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
    failed: dict[str, str] = field(default_factory=dict)  # slug -> why its reply was not published
    absorbed: list[str] = field(default_factory=list)  # evidence changed, the page's text did not
    merged_without_model: list[str] = field(default_factory=list)
    unlinked_links: int = 0
    removed_citations: int = 0
    removed_sentences: int = 0
    withheld: list[str] = field(default_factory=list)  # written without a cited fact: not published
    identical: list[str] = field(default_factory=list)  # rewritten to the same bytes: not stored again
    already_stated: int = 0  # new evidence items the page already said word for word: not asked about
    grouped: int = 0  # page updates answered by a call shared with other pages
    asked_alone: int = 0  # small updates the grouped reply had no usable item for: asked on their own


async def run(template: Template, ctx: CompileContext) -> PhaseResult:
    store, engine = ctx.store, ctx.engine
    if UNCHANGED in ctx.state:  # PLAN found this plan finished: every page stands
        unchanged = sorted(ctx.state[UNCHANGED])
        ctx.state["refine"] = {"created": [], "updated": [], "deleted": [], "unchanged": unchanged}
        hidden = await _withheld(store, unchanged)  # standing, but not shown: not counted as pages
        return PhaseResult(items=len(unchanged), skipped=len(unchanged) - len(hidden),
                           details={"unchanged": len(unchanged) - len(hidden), "withheld": len(hidden)})
    plans = await load_plan(ctx, template)
    live = {p.slug: p for p in plans if p.action != DELETE}
    moves = {p.slug: p.moved_from for p in plans if p.moved_from and p.action == UPDATE}
    existing = {p.id: p for p in await store.get(Page, [*(p.slug for p in plans if p.action != KEEP), *moves.values()])}
    # A page moved to its subject's new slug is updated from what it was there (and its evidence).
    moved_packs = {e.id: e.value for e in await store.get(CacheEntry, [pack_key(old) for old in moves.values()])}  # type: ignore[attr-defined]
    for slug, old in moves.items():
        page = existing.get(old)
        if page is not None and page.status == "active" and slug not in existing:
            existing[slug] = replace(page, id=slug, slug=slug)
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
        async with store.transaction():
            await store.upsert(gone)
            await store.delete(CacheEntry, {"id": [pack_key(page.slug) for page in gone]})
    packs = {
        e.id: e.value  # type: ignore[attr-defined]
        for e in await store.get(CacheEntry, [pack_key(p.slug) for p in plans if p.action == UPDATE])
    }
    for slug, old in moves.items():
        if pack_key(old) in moved_packs and slug in existing:
            packs.setdefault(pack_key(slug), moved_packs[pack_key(old)])

    slug_of_subject = {p.subject_id: p.slug for p in live.values()}
    chunk_about = ChunkPages([p for p in live.values() if p.kind != "topic"])
    writer = fingerprint(template.phase_fingerprint(PHASE), engine.name, engine.model)
    # Pages written while MAP left chunks failed are provisional: their evidence and links may
    # grow when those chunks are extracted, and merging into them would not reach what a clean
    # compile writes, so the next update writes them anew.
    provisional = bool((ctx.state.get("map") or {}).get("incomplete"))

    # A writer that answers an update with its additions only has its pages merged into, which
    # costs what changed; one that rebuilds a page from its evidence (the offline engine) writes
    # every page whole from the evidence chosen now, as a compile from scratch would.
    merges = bool(getattr(engine, "writes_additions", False))

    def written_anew(slug: str) -> bool:
        pack = packs.get(pack_key(slug)) or {}
        return pack.get("writer") not in (None, writer) or bool(pack.get("provisional"))
    todo = [p for p in plans if p.action in (CREATE, UPDATE)]
    failures = {e.id: e.value for e in await store.get(CacheEntry, [failure_key(p.slug) for p in todo])}
    backed_off = {} if ctx.state.get(RETRY_FAILED) else backed_off_pages(todo, failures)
    todo = [p for p in todo if p.slug not in backed_off]
    reader = EvidenceReader(store, todo, kb=ctx.state.get(KB_VIEW), chunk_pages=chunk_about)
    # The model's concurrency bounds the writer calls in flight, not the pages in progress: a
    # page's evidence is chosen before its call and cleaned and stored after it, off the slot.
    calls = asyncio.Semaphore(template.refine.concurrency)
    # Pages in progress: room for a full group of small updates waiting on its call, besides.
    gate = asyncio.Semaphore(2 * template.refine.concurrency + MAX_GROUP_PAGES)
    position = {p.slug: i for i, p in enumerate(todo)}

    async def ask_group(requests: list[PageRequest]) -> dict[str, str]:
        async with calls:
            if fatal or ctx.cancel.is_set():
                return {}  # stopped while it waited: each page sees that on its own
            with drawn_from(_sources(*requests)):  # the group's cached reply goes with any of them
                return await engine.update_pages(requests, template)

    # Small updates (a few new sentences) share a call; the context budget bounds each group.
    # A model of known, small context is sent less evidence and asked for shorter pages.
    limits = getattr(engine, "page_limits", None)
    evidence_budget, page_tokens = (limits(template) if limits is not None
                                    else (template.refine.context_budget, template.refine.max_page_tokens))
    groups = UpdateGroups(len(todo), evidence_budget, ask_group)
    batches = PageBatches(store, ctx.embedder)
    fatal: list[BaseException] = []
    finished = 0

    def failed(slug: str, exc: BaseException) -> None:
        if isinstance(exc, EngineError) and not isinstance(exc, EngineUnavailable | BudgetExceeded):
            tally.failed[slug] = str(exc)[:500]  # the page keeps its previous version
            ctx.warn(f"refine: page {slug!r} failed: {exc}")
        else:
            fatal.append(exc)

    async def one(plan: PagePlan) -> None:
        nonlocal finished
        try:
            await _write(plan)
        except EngineError as exc:  # the next run retries the page
            failed(plan.slug, exc)
        finally:
            groups.skip(position[plan.slug])  # a page that returned early joins no group
            finished += 1
            ctx.progress(PHASE, finished, len(todo))
            gate.release()

    async def _write(plan: PagePlan) -> None:
        page = existing.get(plan.slug)
        if page is not None and page.status in ("active", WITHHELD) and page.evidence_fingerprint == plan.evidence_fingerprint:
            tally.unchanged.append(plan.slug)  # written before a crash; never write twice
            return
        if page is not None and page.edited:
            page.pending_update = True
            await store.upsert([page])
            tally.pending_edits.append(plan.slug)
            return
        window = await reader.for_page(plan)
        ranked = candidates(plan, window, reader.titles, slug_of_subject, chunk_about)
        budget = evidence_budget
        allowed = _SlugsBut(live.keys(), plan.slug)
        previous = packs.get(pack_key(plan.slug)) if merges and page is not None and page.status == "active" else None
        if previous is not None and (written_anew(plan.slug) or await furniture_reached(plan, previous, window)):
            # The writer (prompt, model) changed, or the page is provisional; or a sentence of the
            # evidence it was written from became furniture, which no kept piece of evidence shows.
            previous = None
        additions_only = False
        if page is not None and previous is not None:
            evidence = choose_evidence(ranked, budget, _item_tokens, keep={k for k, _c in previous["chosen"]},
                                       offered=set(previous["offered"]))
            delta = pack_delta(previous["chosen"], evidence, list(page.cited_chunks))
            _became, returned = furniture_moved(previous.get("furniture", []), plan.furniture)
            fresh = {id(item) for item in delta.added}
            if back := [item for item in holding_returned(returned, evidence) if id(item) not in fresh]:
                # Kept items that hold a sentence no longer furniture: offered as new, in rank order.
                delta.added = sorted([*delta.added, *back], key=lambda item: item.ref)
            body, dropped = recite(page.markdown, delta.ref_of)
            tally.removed_sentences += dropped
            stated = stated_in(body, delta.added)
            if stated:  # new to the pack, not to the page: a writer would add nothing
                known = {id(item) for item in stated}
                delta.added = [item for item in delta.added if id(item) not in known]
                tally.already_stated += len(stated)
            if not delta.added:
                # Nothing new to say: drop what lost its evidence, move citations, fix links.
                cleaned = clean_page(body, allowed, evidence)
                tally.unlinked_links += cleaned.counters["unlinked_links"]
                if cleaned.markdown == page.markdown:
                    await _store(plan, page, cleaned, evidence, ranked, absorbed=True)
                    tally.absorbed.append(plan.slug)
                    tally.unchanged.append(plan.slug)
                    _explain(plan, "evidence elsewhere changed; the page's own did not")
                    return
                # A page left with no cited fact is withheld, as a page written so is.
                await _store(plan, page, cleaned, evidence, ranked, tally.updated, tally.merged_without_model,
                             status="active" if cleaned.cited_chunk_ids else WITHHELD)
                _explain(plan, f"{len(delta.removed_chunks)} cited sources gone: their sentences removed, no rewrite"
                         if delta.removed_chunks else "citations moved to the passages now holding them, no rewrite")
                return
            request = _request(plan, evidence, body, delta.removed_chunks)
            request.new_refs = [item.ref for item in delta.added]
            _explain(plan, f"{len(delta.added)} new pieces of evidence merged into the page"
                     + (f", {len(delta.removed_chunks)} sources gone" if delta.removed_chunks else ""))
            baseline, additions_only = body, True
        else:
            evidence = choose_evidence(ranked, budget, _item_tokens)
            # A page written by another writer (prompt, model), or provisionally, is written anew.
            rewrite = written_anew(plan.slug)
            is_update = merges and page is not None and plan.action == UPDATE and not rewrite
            request = _request(
                plan, evidence, page.markdown if is_update and page else "",
                sorted(set(page.cited_chunks) - {e.chunk_id for e in evidence}) if is_update and page else [],
            )
            baseline = page.markdown if is_update and page else ""
        written: str | None = None
        new = set(request.new_refs)
        new_tokens = sum(_item_tokens(e.text) for e in evidence if e.ref in new)
        if additions_only and new_tokens <= SMALL_UPDATE_TOKENS:
            written = await groups.write(position[plan.slug], request, new_tokens)
            if written is None:
                tally.asked_alone += 1
            else:
                tally.grouped += 1
        else:
            groups.skip(position[plan.slug])
        if written is None:  # its own call: a big change, or no usable item for it
            async with calls:
                if fatal or ctx.cancel.is_set():
                    return  # stopped while it waited: never asked, the next run writes it
                with drawn_from(_sources(request)):  # its cached reply goes with any of them
                    written = await engine.write_page(request, template)
        # An engine that honours new_refs answers with the additions only (the LLM engine says
        # so); an extractive writer rebuilds the whole page from the evidence instead.
        if additions_only and getattr(engine, "writes_additions", False):
            if not cited_refs(written) & {str(r) for r in request.new_refs}:
                # Additions that cite none of the new evidence say nothing we can trust: keep the page.
                page.pending_update, page.evidence_fingerprint = True, plan.evidence_fingerprint  # type: ignore[union-attr]
                await store.upsert([page])  # type: ignore[list-item]
                tally.rejected.append(plan.slug)
                return
            written = insert_additions(baseline, written)
        cleaned = clean_page(written, allowed, evidence)
        tally.unlinked_links += cleaned.counters["unlinked_links"]
        tally.removed_citations += cleaned.counters["removed_citations"]
        if baseline and not additions_only and page is not None and shrank_too_much(
            cleaned.markdown, baseline, evidence, template.refine.min_keep_ratio, template.refine.max_page_tokens
        ):
            # Keep the safe version, flag it for a person, and do not ask again for this evidence
            # (a version citing nothing, withheld when written, stays out of sight).
            page.pending_update, page.evidence_fingerprint = True, plan.evidence_fingerprint
            page.status = "active" if page.cited_chunks else WITHHELD
            await store.upsert([page])
            tally.rejected.append(plan.slug)
            return
        if not cleaned.cited_chunk_ids:
            # No cited fact: a page of links only is no page. Kept out of sight under its
            # fingerprint, so the same evidence is not written again next run.
            await _store(plan, page, cleaned, evidence, ranked, tally.withheld, status=WITHHELD)
            return
        await _store(plan, page, cleaned, evidence, ranked, tally.updated if page is not None else tally.created)

    async def furniture_reached(plan: PagePlan, previous: dict, window: PageWindow) -> bool:
        """Whether a sentence that became furniture is in the evidence the page was written from
        (see furniture_reaches); one elsewhere in its subject's documents leaves the page as it
        is, and costs it no rewrite."""
        was = list(previous.get("furniture", []))
        became, _returned = furniture_moved(was, plan.furniture)
        if not became:
            return False
        before = candidates(replace(plan, furniture=was), window, reader.titles, slug_of_subject, chunk_about)
        sources = sorted({chunk for _key, chunk in previous["chosen"]})
        texts = [window.chunks[c].text for c in sources if c in window.chunks]
        unread = [c for c in sources if c not in window.chunks]
        texts += [c.text for c in await store.get(Chunk, unread)] if unread else []  # type: ignore[attr-defined]
        return furniture_reaches(became, {key for key, _chunk in previous["chosen"]}, before, texts)

    def _request(plan: PagePlan, evidence: list[EvidenceItem], existing_markdown: str, removed: list[str]) -> PageRequest:
        return PageRequest(
            slug=plan.slug,
            title=plan.title,
            kind=plan.kind,
            description=plan.description,
            aliases=list(plan.aliases),
            evidence=evidence,
            links=[LinkTarget(s, live[s].title) for s in plan.links if s in live],
            existing_markdown=existing_markdown,
            removed_refs=removed,
            max_tokens=page_tokens,
        )

    async def _store(plan: PagePlan, page: Page | None, cleaned: CleanPage, evidence: list[EvidenceItem],
                     ranked: list[EvidenceItem], *tallies: list[str], absorbed: bool = False,
                     status: str = "active") -> None:
        """Store the page now (absorbed: same text; or byte-identical), or hand it to the batches
        for its embedding; its slug joins `tallies` once it is stored."""
        value = {**pack_value(evidence, ranked), "writer": writer, **({"provisional": True} if provisional else {}),
                 **({"furniture": plan.furniture} if plan.furniture else {})}
        pack = CacheEntry(id=pack_key(plan.slug), namespace=PACK_NAMESPACE, value=value, created_at=time.time())
        if absorbed and page is not None:  # same text: new fingerprint only, no new version
            page.evidence_fingerprint, page.outlinks, page.title = plan.evidence_fingerprint, cleaned.outlinks, plan.title
            page.pending_update = False
            async with store.transaction():
                await store.upsert([page, pack])
            return
        if (page is not None and page.status == status and page.markdown == cleaned.markdown
                and page.title == plan.title and page.aliases == list(plan.aliases)):
            # Byte-identical page: a new fingerprint only, no new version, no rewrite downstream.
            page.evidence_fingerprint, page.outlinks, page.pending_update = plan.evidence_fingerprint, cleaned.outlinks, False
            async with store.transaction():
                await store.upsert([page, pack])
            tally.identical.append(plan.slug)
            tally.unchanged.append(plan.slug)
            return
        stamp = time.time()
        summary = summary_of(cleaned.markdown)
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
            status=status,
            engine=engine.name,
        )

        def stored() -> None:
            for names in tallies:
                names.append(plan.slug)

        # The page, its version and its evidence land together, once the page's embedding is in.
        batches.add(WrittenPage(
            f"{plan.title}: {summary}", written_page, [pack, *([PageVersion.of(written_page)] if changed else [])],
            stored, lambda exc: failed(plan.slug, exc),
        ))

    tasks: list[asyncio.Task[None]] = []
    for plan in todo:
        await gate.acquire()
        if fatal or ctx.cancel.is_set():
            gate.release()
            break
        tasks.append(asyncio.create_task(one(plan)))
    groups.close(len(tasks))
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    await batches.finish()
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    if fatal or errors:
        raise (fatal or errors)[0]

    if tally.deleted or tally.withheld or tally.created or tally.updated:
        # a page written this run may link to one withheld now or before
        tally.unlinked_links += await unlink_gone_pages(store, ["deleted", WITHHELD])
    await record_failures(store, tally.failed, [*tally.created, *tally.updated], live, failures)
    inputs = ctx.state.get(PLAN_INPUTS)
    if inputs and not tally.failed and not backed_off and not provisional and len(tasks) == len(todo):
        # Every page of this plan is written: the same inputs next time need no PLAN or REFINE.
        await mark_stage(store, PHASE, inputs, pages=await store.count(Page), live=sorted(live))
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
        "absorbed": len(tally.absorbed),
        "merged_without_model": len(tally.merged_without_model),
        "removed_sentences": tally.removed_sentences,
        "withheld": len(tally.withheld),
        "identical": len(tally.identical),
        "already_stated": tally.already_stated,
        "grouped_updates": tally.grouped,
        "updates_asked_alone": tally.asked_alone,
    }
    if tally.rejected:
        details["rejected_pages"] = sorted(tally.rejected)
    if tally.failed or backed_off:
        details["failed_pages"] = dict(sorted({
            **{slug: f"not asked again after {f.get('attempts')} failures on the same evidence "
                     f"(compile --retry-failed asks again): {f.get('reason', '')}" for slug, f in backed_off.items()},
            **tally.failed}.items()))
    if len(tasks) < len(todo):
        details["cancelled"] = True
    # Each plan ends in one count: written, unchanged, withheld (written or standing with no
    # cited fact, so not shown), refused (its rewrite was, the page stands) or failed; as the
    # site, status and the compile's summary count pages, a withheld one is in neither of the first two.
    hidden = await _withheld(store, [*tally.created, *tally.updated, *tally.unchanged, *tally.withheld])
    details["withheld"] = len(hidden)
    details["unchanged"] = len(set(tally.unchanged) - hidden)
    return PhaseResult(
        items=len(plans),
        done=len(set(tally.created + tally.updated) - hidden) + len(tally.deleted),
        skipped=len(set(tally.unchanged) - hidden),
        failed=len(tally.failed) + len(backed_off),
        details=details,
    )


async def _withheld(store: Store, slugs: list[str]) -> set[str]:
    """Those of `slugs` whose page stands withheld."""
    found = []
    for s in range(0, len(slugs), 500):
        found += await store.get(Page, slugs[s : s + 500])
    return {p.id for p in found if p.status == WITHHELD}  # type: ignore[attr-defined]


def _sources(*requests: PageRequest) -> set[str]:
    """The passages a page request carries: its evidence's and those its page as it stands cites."""
    return ({e.chunk_id for r in requests for e in r.evidence}
            | {c for r in requests for c in cited_chunks(r.existing_markdown)})


def _explain(plan: PagePlan, reason: str) -> None:
    """The compile diff says why: REFINE knows better than PLAN what an update amounted to."""
    plan.reason = f"{plan.reason}: {reason}" if plan.reason else reason


class _SlugsBut(AbstractSet[str]):
    """The live slugs but one (the page's own), without copying them for every page."""

    def __init__(self, slugs: AbstractSet[str], own: str):
        self.slugs, self.own = slugs, own

    def __contains__(self, slug: object) -> bool:
        return slug != self.own and slug in self.slugs

    def __iter__(self) -> Iterator[str]:
        return (s for s in self.slugs if s != self.own)

    def __len__(self) -> int:
        return len(self.slugs) - (self.own in self.slugs)
