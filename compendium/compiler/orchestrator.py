"""Runs the phases of a compile in order over one context and assembles the report."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..engines.usage import UsageMeter
from ..errors import BudgetExceeded, Cancelled, CompendiumError
from ..pipeline.collector import fewer_collections
from ..pipeline.context import CompileContext, Phase, PhaseResult
from ..pipeline.events import CompileFinished, Message, PhaseFinished, PhaseStarted
from ..storage.base import Store
from ..storage.records import CacheEntry, Chunk, Claim, Document, Entity, Page, Relation, Topic
from .forget import forget_removed_passages, strip_removed_sentences
from .report import BUDGET_EXCEEDED, CANCELLED, FAILED, SUCCEEDED, CompileReport

PHASE_NAMES = ("ingest", "map", "reduce", "plan", "refine")
COMPILE_NAMESPACE = "compile"


def default_phases() -> list[tuple[str, Phase]]:
    from ..phases import ingest, plan, reduce, refine
    from ..phases import map as map_phase

    return [
        ("ingest", ingest.run),
        ("map", map_phase.run),
        ("reduce", reduce.run),
        ("plan", plan.run),
        ("refine", refine.run),
    ]


async def run_compile(
    ctx: CompileContext, *, phases: Sequence[tuple[str, Phase]] | None = None
) -> CompileReport:
    """Run every phase over `ctx`; a phase that raises ends the compile with status failed
    (or cancelled, or budget_exceeded); one that gives up on some items makes it partial.

    What finished phases stored stays stored: the next compile resumes from there.
    """
    with fewer_collections():
        return await _run_phases(ctx, phases)


async def _run_phases(ctx: CompileContext, phases: Sequence[tuple[str, Phase]] | None) -> CompileReport:
    store, engine, template, events = ctx.store, ctx.engine, ctx.template, ctx.events
    report = CompileReport(engine=engine.name, template=template.name, started_at=time.time())
    usage: UsageMeter = engine.usage
    for name, phase in phases or default_phases():
        if ctx.cancel.is_set():
            report.status = CANCELLED
            break
        events.emit(PhaseStarted(name, 0))
        started = time.perf_counter()
        try:
            with usage.phase(name):
                result = await phase(template, ctx)
        # A phase that stopped says so on its bar (not '1 failed', nor a ✓ over what it left).
        except Cancelled as exc:
            report.status, report.error = CANCELLED, str(exc)
            result = PhaseResult(details={"stopped": CANCELLED})
        except BudgetExceeded as exc:
            report.status, report.error = BUDGET_EXCEEDED, f"{name}: {exc}"
            events.emit(Message("error", report.error))
            result = PhaseResult(details={"stopped": BUDGET_EXCEEDED})
        except CompendiumError as exc:  # EngineUnavailable among them
            report.status, report.error = FAILED, f"{name}: {exc}"
            events.emit(Message("error", report.error))
            result = PhaseResult(failed=1, details={"stopped": FAILED})
        result.seconds = time.perf_counter() - started
        report.add_phase(name, result, usage)
        events.emit(PhaseFinished(name, report.phases[name]))
        if report.status != SUCCEEDED:
            break
        if name == "ingest":  # pages are rewritten from what is left, not from removed passages
            await strip_removed_sentences(store, (ctx.state.get("ingest") or {}).get("deleted_chunks") or [])
    report.settle_status()
    if report.status not in (FAILED, CANCELLED, BUDGET_EXCEEDED):
        # The text of deleted documents is kept nowhere once the pages citing them are rewritten.
        removed = (ctx.state.get("ingest") or {}).get("deleted_chunks") or []
        await forget_removed_passages(store, removed)
        await _build_retrieval_index(ctx)
    await _fill_counts(store, ctx, report)
    if report.documents == 0 and report.status == SUCCEEDED:
        # No folder named: on a server it is the server's, not the reader's.
        events.emit(Message("warning", "no documents to compile: the knowledge base is empty; "
                                       "add documents, then compile again"))
    report.finished_at = time.time()
    await _remember(store, report)
    events.emit(CompileFinished(report.as_dict()))
    return report


async def _build_retrieval_index(ctx: CompileContext) -> None:
    """Passage vectors for retrieval, made here so that no question pays for them."""
    from ..engines.factory import passage_embedder
    from ..retrieval.index import build_index

    try:
        await build_index(ctx.store, passage_embedder(ctx.embedder))
    except CompendiumError as exc:
        ctx.events.emit(Message("warning", f"the retrieval index was not built: {exc}"))


async def _fill_counts(store: Store, ctx: CompileContext, report: CompileReport) -> None:
    report.documents = await store.count(Document)
    report.chunks = await store.count(Chunk)
    report.counts = {
        "entities": await store.count(Entity, {"category": "entity"}),
        "concepts": await store.count(Entity, {"category": "concept"}),
        "relations": await store.count(Relation),
        "claims": await store.count(Claim),
        "topics": await store.count(Topic),
    }
    refined = ctx.state.get("refine") or {}
    reasons = _plan_reasons(ctx.state.get("plan"))
    # Created, updated and unchanged count published pages only, as the site, status and the
    # next compile do: a page withheld (a topic with too little evidence) is in none of them.
    listed = [slug for action in ("created", "updated", "unchanged") for slug in refined.get(action, [])]
    published = {p.id for p in await store.get(Page, listed) if p.status == "active"} if listed else set()  # type: ignore[attr-defined]
    for action in ("created", "updated", "deleted", "unchanged"):
        slugs = [s for s in refined.get(action, []) if action == "deleted" or s in published]
        report.pages[action] = len(slugs)
        default = "evidence unchanged" if action == "unchanged" else ""
        report.changes.extend(
            {"slug": slug, "action": action, "reason": reasons.get(slug) or default} for slug in slugs
        )


def _plan_reasons(plan: object) -> dict[str, str]:
    reasons: dict[str, str] = {}
    for entry in plan or []:  # type: ignore[attr-defined]
        slug = entry.get("slug") if isinstance(entry, dict) else getattr(entry, "slug", None)
        reason = entry.get("reason") if isinstance(entry, dict) else getattr(entry, "reason", "")
        if slug:
            reasons[slug] = reason or ""
    return reasons


async def _remember(store: Store, report: CompileReport) -> None:
    """Keep the report of every compile, and which one is the last, for `compendium changes`."""
    data = report.as_dict()
    key = f"compile:{report.template}:{report.started_at:.6f}"
    await store.upsert(
        [
            CacheEntry(id=key, namespace=COMPILE_NAMESPACE, value=data, created_at=report.finished_at),
            CacheEntry(id="compile:last", namespace="compile-last", value=data, created_at=report.finished_at),
        ]
    )


async def last_compile(store: Store) -> dict | None:
    got = await store.get(CacheEntry, ["compile:last"])
    return got[0].value if got else None  # type: ignore[attr-defined]
