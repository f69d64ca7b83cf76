"""MAP: extract entities, concepts, claims, relations and topics from every new or changed chunk."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..engines.cache import drawn_from
from ..engines.openai_client import CutOff
from ..errors import BudgetExceeded, EngineError, EngineUnavailable, LabelError, ReplyError
from ..fingerprint import fingerprint, text_hash
from ..pipeline.context import CompileContext, PhaseResult
from ..pipeline.stages import clear_stage, mark_stage, rollup, set_rollup, stage_mark
from ..storage.records import Chunk, Document, Extract, Record
from ..storage.response_cache import answers_with_records
from ..templates.schema import Template
from .batching import SplitCounts, label_batch, pack_batches, split_reply

# 2: a model's names kept only where its chunk writes them as names (engines/map_names.py),
# judged by the chunk's own text; extracts are remade from the cached replies. 3: a model of
# small context is asked for its items grouped by chunk (model_profile.grouped_schema)
MAP_VERSION = 3
PHASE = "map"
HANDED_AT_MOST = 20_000  # extracts MAP keeps for REDUCE instead of REDUCE reading them back
LABEL_CAUSE = "the model does not cite chunk labels"


def map_fingerprint(chunk: Chunk, template: Template | str, engine_name: str, engine_model: str) -> str:
    """What a chunk's extract depends on: its text and headings, the MAP settings, the engine.

    `template` may be given as its MAP fingerprint, computed once for all its chunks."""
    settings = template if isinstance(template, str) else template.phase_fingerprint("map")
    return fingerprint(chunk.text, chunk.heading_path, settings, engine_name, engine_model, MAP_VERSION)


@dataclass
class MapWork:
    """Which chunks MAP must extract and which stored extracts it must purge."""

    todo: list[Chunk] = field(default_factory=list)
    fingerprints: dict[str, str] = field(default_factory=dict)  # chunk id -> MAP fingerprint
    unchanged: int = 0
    purge: list[str] = field(default_factory=list)


def map_work(chunks: Sequence[Chunk], stored: dict[str, tuple[str, str]], fingerprints: dict[str, str]) -> MapWork:
    """Pure decision. `stored` maps extract id -> (status, fingerprint)."""
    work = MapWork(fingerprints=fingerprints)
    live = set()
    for chunk in chunks:
        live.add(chunk.id)
        status, fp = stored.get(chunk.id, ("", ""))
        if status == "done" and fp == fingerprints[chunk.id]:
            work.unchanged += 1
        else:
            work.todo.append(chunk)  # new, changed, or failed last time
    work.purge = sorted(set(stored) - live)
    return work


def extracts_fingerprint(done: Iterable[tuple[str, str]], start: str = "0" * 32) -> str:
    """What REDUCE reads, in one fingerprint: the (chunk id, MAP fingerprint) of every done extract.

    An exclusive-or of one hash per extract, so that it can be brought up to date from the
    extracts that came or went alone: passing the same pair again takes it out."""
    total = int(start, 16)
    for chunk_id, fp in done:
        total ^= int(text_hash(f"{chunk_id}\0{fp}"), 16)
    return f"{total:032x}"


async def run(template: Template, ctx: CompileContext) -> PhaseResult:
    store, engine = ctx.store, ctx.engine
    chunking = rollup(ctx.state, "ingest")
    settings = sorted({(t.name, t.phase_fingerprint(PHASE)) for t in (template, *ctx.templates.values())})
    inputs = fingerprint(chunking, settings, engine.name, engine.model, MAP_VERSION) if chunking else None
    mark = await stage_mark(store, PHASE)
    if inputs is not None and mark.get("fingerprint") == inputs and mark.get("extracts") == await store.count(Extract):
        # The same chunks under the same settings, all extracted last time: nothing to read.
        ctx.state["map"] = {"changed_chunks": [], "purged_chunks": [], "incomplete": False}
        set_rollup(ctx.state, PHASE, mark.get("output"))
        return PhaseResult(items=mark["extracts"], skipped=mark["extracts"], details={"batches": 0, "purged": 0})
    ingested = ctx.state.get("ingest") or {}
    previous = ingested.get("previous")
    since = (mark.get("output") if previous is not None and mark.get("fingerprint")
             == fingerprint(previous, settings, engine.name, engine.model, MAP_VERSION) else None)
    if mark:
        await clear_stage(store, PHASE)
    if since is not None:
        # MAP finished over the chunks ingest started from: only the documents ingest changed
        # (and the chunks it removed) can need work. Nothing else is read.
        touched = sorted({*ingested.get("changed_documents", ()), *ingested.get("regrouped_documents", ())})
        chunks = [c async for c in store.scan(Chunk, {"document_id": touched})] if touched else []
        asked = [*(c.id for c in chunks), *ingested.get("removed_chunks", ())]
        stored = {e.id: (e.status, e.fingerprint) for e in await _get(store, Extract, asked)}  # type: ignore[attr-defined]
        documents: dict[str, Document] = {d.id: d for d in await _get(store, Document, touched)}  # type: ignore[misc]
    else:
        chunks = [c async for c in store.scan(Chunk)]
        stored = {e.id: (e.status, e.fingerprint) async for e in store.scan(Extract)}  # type: ignore[attr-defined]
        # Template groups: each chunk is extracted with the template its document is assigned.
        documents = {d.id: d async for d in store.scan(Document)}  # type: ignore[misc]
    template_of = {
        c.id: ctx.template_named(documents[c.document_id].template if c.document_id in documents else "")
        for c in chunks
    }
    used = {id(t): t for t in template_of.values()}
    settings_of = {key: t.phase_fingerprint("map") for key, t in used.items()}  # once per template, not per chunk
    fps = {c.id: map_fingerprint(c, settings_of[id(template_of[c.id])], engine.name, engine.model) for c in chunks}
    work = map_work(chunks, stored, fps)

    if work.purge:
        await store.delete(Extract, {"id": work.purge})

    titles = {d.id: d.title or d.path for d in documents.values()}
    batches: list[tuple[Template, list[Chunk]]] = []
    if work.todo:
        await _know_context(engine)
    for name in sorted({template_of[c.id].name for c in work.todo}):
        group = [c for c in work.todo if template_of[c.id].name == name]
        own = template_of[group[0].id]
        max_chunks, max_tokens = batch_limits(engine, own)
        batches += [(own, b) for b in pack_batches(group, max_chunks, max_tokens)]

    total = len(chunks) if since is None else await store.count(Chunk)
    result = PhaseResult(items=total, skipped=total - len(work.todo))
    totals = SplitCounts()
    extra = {"splits": 0, "empty": 0}  # batches split in two; chunks extracted with nothing
    changed: list[str] = []
    # This run's done extracts, handed to REDUCE when they are all of them. Not above a bound: the
    # collector walks what MAP holds, again and again (11k chunks: +0.06 s against REDUCE's
    # -0.8 s; 30k chunks offline: +0.6 s against -0.5 s).
    made: list[Extract] | None = [] if len(work.todo) <= HANDED_AT_MOST else None
    fatal: list[BaseException] = []
    done_chunks = 0
    # The model's concurrency bounds the calls in flight; a batch's prompt is built before its
    # call and its reply split and stored after it, off the slot, while other calls run.
    calls = asyncio.Semaphore(template.map.concurrency)
    gate = asyncio.Semaphore(2 * template.map.concurrency)  # batches in progress

    async def one(batch_template: Template, batch: list[Chunk]) -> None:
        nonlocal done_chunks
        try:
            async with answers_with_records(store) as held:  # the reply lands with its extracts
                await extract(batch_template, batch, held)
        finally:
            done_chunks += len(batch)
            ctx.progress(PHASE, done_chunks, len(work.todo))
            gate.release()

    async def extract(batch_template: Template, batch: list[Chunk], held: list[Record]) -> None:
        request, labels = label_batch(batch, titles)
        try:
            async with calls:
                if fatal or ctx.cancel.is_set():
                    return  # stopped while it waited: never asked, the next run extracts it
                with drawn_from(c.id for c in batch):  # its cached reply goes with any of them
                    reply = await engine.extract(request, batch_template)
        except CutOff as exc:
            if len(batch) < 2:
                raise EngineError(str(exc)) from exc  # engines split only batches of several chunks
            # Too big for one reply (or one prompt): each half is asked on its own, not repaired whole.
            extra['splits'] += 1
            ctx.warn(f"map: a batch of {len(batch)} chunks was too big for one reply ({exc}); split in two")
            half = len(batch) // 2
            for part in (batch[:half], batch[half:]):
                async with answers_with_records(store) as part_held:
                    await extract(batch_template, part, part_held)
            return
        except (EngineUnavailable, BudgetExceeded) as exc:
            fatal.append(exc)
            return
        except EngineError as exc:  # includes ReplyError: this batch fails, the others go on
            await store.upsert([_failed(c, fps[c.id], engine.name, exc) for c in batch])
            result.failed += len(batch)
            if isinstance(exc, LabelError):  # its items are lost: they count as dropped
                totals.items += exc.items
                totals.dropped += exc.items
                totals.unknown_labels += exc.unknown
            ctx.warn(f"map: a batch of {len(batch)} chunks failed: {exc}")
            return
        per_chunk, counts = split_reply(reply, labels, batch_template)
        unheld = {labels[k]: n for k, n in reply._unheld.items() if k in labels}  # the engine took them out
        records = []
        for chunk in batch:
            items = per_chunk[chunk.id]
            items.dropped += unheld.get(chunk.id, 0)
            records.append(
                Extract(
                    id=chunk.id,
                    chunk_id=chunk.id,
                    document_id=chunk.document_id,
                    fingerprint=fps[chunk.id],
                    status="done",
                    engine=engine.name,
                    entities=items.entities,
                    concepts=items.concepts,
                    claims=items.claims,
                    relations=items.relations,
                    topics=items.topics,
                    dropped=items.dropped,
                )
            )
        async with store.transaction():  # a batch lands whole or not at all, with its reply
            await store.upsert([*records, *held])
        held.clear()
        if made is not None:
            made.extend(records)
        totals.items += counts.items + sum(unheld.values())
        totals.dropped += counts.dropped - counts.capped + sum(unheld.values())
        totals.capped += counts.capped
        totals.unknown_labels += counts.unknown_labels
        totals.retyped += counts.retyped
        changed.extend(c.id for c in batch)
        result.done += len(batch)
        extra['empty'] += sum(1 for r in records if not (r.entities or r.concepts or r.claims))

    tasks: list[asyncio.Task[None]] = []
    launched = 0
    for batch_template, batch in batches:
        await gate.acquire()
        if fatal or ctx.cancel.is_set():
            gate.release()
            break
        tasks.append(asyncio.create_task(one(batch_template, batch)))
        launched += 1
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)  # let in-flight batches land
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    if fatal or errors:
        raise (fatal or errors)[0]

    result.details = {
        "batches": launched,
        "split_batches": extra["splits"],
        "empty_chunks": extra["empty"],
        "dropped_items": totals.dropped + totals.capped,
        "unknown_label_items": totals.unknown_labels,
        "retyped_items": totals.retyped,
        "purged": len(work.purge),
    }
    problem = most_dropped(totals)
    if problem is not None:
        raise ReplyError(problem, hint="use a model that follows the MAP prompt, or lower the temperature")
    if work.todo and result.failed == len(work.todo) and launched == len(batches):
        raise EngineError(
            f"every one of the {result.failed} chunks failed extraction; nothing was extracted",
            hint="see the warnings above for each batch's error; check the model and llm.response_format",
        )
    if engine.name != "offline":  # rules find what they find; a model answering nothing is a fault
        empty = empty_problem(result.done, extra['empty'], engine.name)
        if empty is not None:
            raise ReplyError(empty[0], hint=empty[1])
        if result.done >= 3 and extra['empty'] * 2 >= result.done:
            ctx.warn(f"map: {extra['empty']} of the {result.done} chunks extracted came back empty")
    if launched < len(batches):
        result.details["cancelled"] = True
    # REFINE writes pages from an incomplete extraction provisionally (see refine.py).
    incomplete = bool(result.failed) or launched < len(batches)
    ctx.state["map"] = {"changed_chunks": sorted(changed), "purged_chunks": work.purge, "incomplete": incomplete}
    if made is not None and not incomplete and since is None and not work.unchanged:
        # Every stored extract was made just now: REDUCE takes them from here, not from the store.
        ctx.state["map"]["extracts"] = sorted(made, key=lambda e: e.id)
    output = None
    if not incomplete:
        now = [(c.id, fps[c.id]) for c in chunks]
        if since is None:
            output = extracts_fingerprint(now)
        else:  # out with what was there (every extract was done), in with what is
            output = extracts_fingerprint([*((k, fp) for k, (_s, fp) in stored.items()), *now], since)
    set_rollup(ctx.state, PHASE, output)
    if output is not None and inputs is not None:
        await mark_stage(store, PHASE, inputs, output=output, extracts=await store.count(Extract))
    return result


async def _get(store, kind, ids: Sequence[str]) -> list:  # type: ignore[no-untyped-def]
    out = []
    for s in range(0, len(ids), 500):
        out += await store.get(kind, list(ids[s : s + 500]))
    return out


EMPTY_SHARE = 0.9  # of a MAP run's extracted chunks come back empty: the model is not extracting


def empty_problem(done: int, empty: int, engine_name: str) -> tuple[str, str] | None:
    """Pure: (why, what to try) when all or nearly all of the chunks extracted came back with
    nothing (no entity, concept or claim), which a corpus of prose never does. Few chunks
    (under 3) are not judged: a short note may truly hold nothing."""
    if done < 3 or empty < EMPTY_SHARE * done:
        return None
    share = f"all {done}" if empty == done else f"{empty} of the {done}"
    return (
        f"{share} chunks came back empty from the {engine_name} engine: the model answered "
        "with empty lists, so the wiki would be empty. Likely causes: a server that enforces the "
        "schema by a grammar without showing it (the model closes every list), or a context too "
        "small for the prompt",
        "set llm.response_format: json_object (or plain) so the schema travels in the prompt, set "
        "llm.context_tokens to the model's context, or use a larger model",
    )


def batch_limits(engine: object, template: Template) -> tuple[int, int]:
    """The chunks and chunk tokens of one MAP batch: the template's, bounded by what the engine
    says its model holds (an LLM of known context); an offline engine takes the template's."""
    limits = getattr(engine, "map_limits", None)
    if limits is None:
        return template.map.batch_chunks, template.map.batch_tokens
    chunks, tokens, _reply = limits(template)
    return chunks, tokens


async def _know_context(engine: object) -> None:
    client = getattr(engine, "client", None)
    detect = getattr(client, "detect_context", None)
    if detect is not None:
        await detect()


def most_dropped(totals: SplitCounts) -> str | None:
    """Pure: why a MAP run must fail, when more than half of the items the model gave were
    dropped (items over the per-chunk cap are not counted: they were too many, not wrong)."""
    if not totals.items or totals.dropped * 2 <= totals.items:
        return None
    said = f"{totals.dropped} of the {totals.items} items the model gave were dropped"
    if totals.unknown_labels * 2 > totals.dropped:
        return f"{said}, {totals.unknown_labels} of them because they name no chunk of their batch: {LABEL_CAUSE}"
    return f"{said} as unusable (names that are ids or numbers, relations between unknown names)"


def _failed(chunk: Chunk, fp: str, engine_name: str, exc: Exception) -> Extract:
    return Extract(
        id=chunk.id,
        chunk_id=chunk.id,
        document_id=chunk.document_id,
        fingerprint=fp,
        status="failed",
        engine=engine_name,
        error=str(exc)[:500],
    )
