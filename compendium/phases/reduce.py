"""REDUCE: turn every chunk's extract into canonical entities, relations and claims (three tiers)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..fingerprint import fingerprint
from ..identifiers import other_identifiers
from ..pipeline.collector import collector_paused
from ..pipeline.context import CompileContext, PhaseResult
from ..pipeline.stages import clear_stage, mark_stage, rollup, set_rollup, stage_mark
from ..storage.base import Store
from ..storage.records import CacheEntry, Claim, Entity, Extract, Record, Relation
from ..templates.schema import Template
from .candidates import candidate_pairs
from .map import extracts_fingerprint
from .name_overlap import adds_words, names_meet
from .reduce_calls import GET_BATCH, embed_texts
from .reduce_chunks import claim_id, mention_sig
from .reduce_judge import claim_sentences, judge
from .reduce_state import Ledger
from .reduce_summaries import Summaries
from .reduction import Outcome, Reduction, fill_documents
from .resolution import (
    Evidence,
    Mention,
    assign_ids,
    connected_labels,
    embedding_text,
    merge_evidence,
    split_pairs,
    type_key,
)

__all__ = ["claim_id", "judge", "reduce", "run"]

# 2: tier 2 embeds names alone; 3: declared aliases type generic mentions; 4: defined terms in every claim;
# 5: the corpus's lowercase spelling of common words, code-only terms gather code-marked claims only
# 6: a ledger kept between runs (reduce_state.py): only the chunks a change touches are redone
# 7: underscores at an identifier's ends make another name (`__abs__()` is not `abs()`)
# 8: a defined term gathers the claims it is the subject of (opening with it), not every mention
# 9: entity ids and summaries from the clusters alone, not from those of earlier runs
# 10: a macro's or constant's name (AC_CHECK_FUNCS) is not the plural of another's
# 11: a term every definition writes as code (`file`) gathers only the claims writing it so
# 12: ... also when its term keeps an option's colon ("class:")
# 14: 11 and 12 withdrawn: a word of prose is gathered again (its sentences were left on no page)
# 15: a name defined as code ("`Attributes`: ...") is no term by the prose's lowercase word
REDUCE_VERSION = "reduce-15"
PHASE = "reduce"
OLD_HASHES_KEY = "reduce:record-hashes"  # content hashes kept before the ledger; removed on a full run
_HEX = "0123456789abcdef"


class Bar:
    """REDUCE's progress: the chunks whose extracts it folds, a total known before it counts and
    kept to its end. Each stage moves the bar through a fixed share of that total; a stage whose
    size is known only when it starts (pair judgments, summaries) divides its share among its
    items. Done never goes back nor past the total, and the phase ends at done == total."""

    GROUPED, PAIRED, JUDGED, DESCRIBED = 0.3, 0.4, 0.7, 0.95  # where each stage ends, as a share

    def __init__(self, ctx: CompileContext, chunks: int) -> None:
        self.ctx, self.total, self.done = ctx, max(1, chunks), 0
        ctx.progress(PHASE, 0, self.total)

    def at(self, share: float) -> None:
        done = min(self.total, max(self.done, int(share * self.total)))
        if done != self.done:
            self.done = done
            self.ctx.progress(PHASE, done, self.total)

    def within(self, start: float, end: float) -> Callable[[int, int], None]:
        """Progress of a stage between two shares: (items done, items in the stage)."""
        return lambda done, of: self.at(start + (end - start) * (done / of if of else 1.0))

    def end(self) -> None:
        self.at(1.0)


@dataclass
class ReduceOutput:
    entities: list[Entity]
    relations: list[Relation]
    claims: list[Claim]
    dropped_relations: int = 0
    self_loops: int = 0
    details: dict[str, Any] = field(default_factory=dict)


def reduce(
    extracts: Sequence[Extract],
    mentions: Sequence[Mention],
    mention_cluster: Sequence[int],
    clusters: Sequence[Evidence],
    ids: Sequence[str],
    descriptions: Sequence[str],
    *,
    engine: str = "",
    vectors: Sequence[np.ndarray | None] | None = None,
) -> ReduceOutput:
    """Canonical records from resolved clusters, with nothing stored before: entities, merged
    relations, attached claims (the phase's own steps, over these extracts alone).

    Relation ends and claim entities are names as written in a chunk: resolved first among
    that chunk's own mentions, then KB-wide (the best-supported cluster with that name).
    """

    async def alone() -> Outcome:
        work = Reduction(Ledger.empty(), None)
        await work.replace_chunks({e.id: e for e in extracts})
        clusters_of = {mention_sig(m): c for m, c in zip(mentions, mention_cluster, strict=True)}
        return await reduce_steps(work, clusters, list(range(len(clusters))), clusters_of, ids, engine, vectors)

    out = asyncio.run(alone())
    for entity, description in zip(out.entities, descriptions, strict=True):
        entity.description = description
    return ReduceOutput(out.entities, out.relations, out.claims or [], out.dropped, out.loops)


async def reduce_steps(
    work: Reduction, clusters: Sequence[Evidence], group_cluster: Sequence[int], sig_group: dict[str, int],
    ids: Sequence[str], engine: str, vectors: Sequence[np.ndarray | None] | None,
) -> Outcome:
    """From resolved clusters to records: the chunks to redo, redone; terms; relations, entities."""
    work.resolution(group_cluster, sig_group, ids)
    contributions, old_claims, new_words = await work.redo(await work.affected())
    spelled, terms, cluster_of = work.terms(clusters, ids)
    retermed = await work.gather_terms(terms, contributions, old_claims, new_words)
    old_entities = {e.id: e async for e in work.store.scan(Entity)} if work.store is not None else {}  # type: ignore[misc]
    out = await work.finish(clusters, ids, contributions, old_claims, terms, cluster_of, spelled, retermed, engine,
                            vectors, old_entities)
    out.old_entities = old_entities
    return out


def _comparable(record: Record) -> dict[str, Any]:
    data = record.to_dict()
    data.pop("embedding", None)
    return data


async def run(template: Template, ctx: CompileContext) -> PhaseResult:
    with collector_paused(ctx):  # every extract, mention, relation and claim in memory: see pipeline/collector.py
        return await _run(template, ctx)


async def _changes(ctx: CompileContext, ledger: Ledger, produced: str) -> dict[str, Extract | None] | None:
    """The chunks whose extracts changed since the ledger was written, with their done extract
    now (None: gone or failed); None when that cannot be told from what MAP handed on."""
    handed = ctx.state.get("map") or {}
    if ledger.fresh or "changed_chunks" not in handed:
        return None
    changed = sorted({*handed["changed_chunks"], *handed.get("purged_chunks", ())})
    await ledger.chunks.load(ctx.store, changed)
    now: dict[str, Extract] = {}
    for s in range(0, len(changed), GET_BATCH):
        for e in await ctx.store.get(Extract, changed[s : s + GET_BATCH]):
            if e.status == "done":  # type: ignore[attr-defined]
                now[e.id] = e  # type: ignore[assignment]
    before = [(c, entry["fp"]) for c in changed if (entry := ledger.chunks.get(c)) is not None]
    # The ledger's extracts, out with the changed chunks' old ones and in with their new: if that
    # is what MAP says is stored, these are all the changes (else a run in between was cut short).
    if extracts_fingerprint([*before, *((e.id, e.fingerprint) for e in now.values())], ledger.base) != produced:
        return None
    return {c: now.get(c) for c in changed}


async def _done_extracts(store: Store) -> list[Extract]:
    return [e async for e in store.scan(Extract) if e.status == "done"]  # type: ignore[attr-defined,misc]


def _handed_if_stored(handed: list[Extract] | None, produced: str) -> list[Extract] | None:
    """The done extracts MAP made in this process (in id order, as the store gives them), when
    they are what MAP says is stored; else None."""
    if handed is None or extracts_fingerprint((e.id, e.fingerprint) for e in handed) != produced:
        return None
    return handed


async def _run(template: Template, ctx: CompileContext) -> PhaseResult:
    started = time.perf_counter()
    store, settings = ctx.store, template.reduce
    # What MAP produced, as a fingerprint MAP handed on; scanned only when it could not.
    everything: list[Extract] | None = None
    handed = (ctx.state.get("map") or {}).pop("extracts", None)  # taken once: not kept alive after
    produced = rollup(ctx.state, "map")
    if produced is None:
        everything = await _done_extracts(store)
        produced = extracts_fingerprint([(e.id, e.fingerprint) for e in everything])
    fp = fingerprint(produced, template.phase_fingerprint(PHASE), ctx.engine.model, ctx.embedder.model, REDUCE_VERSION)
    mark = await stage_mark(store, PHASE)
    if mark.get("fingerprint") == fp:
        count = await store.count(Entity)
        if mark.get("entities", count) == count:
            ctx.state[PHASE] = {"changed_entities": [], "removed_entities": [], "changed_relations": []}
            set_rollup(ctx.state, PHASE, fp)
            return PhaseResult(items=count, skipped=count, seconds=time.perf_counter() - started)

    # Only the chunks whose extracts changed are read, when the ledger says what was reduced;
    # otherwise every chunk is redone from an empty ledger (the same steps).
    ledger = await Ledger.open(store)
    changed = None if everything is not None else await _changes(ctx, ledger, produced)
    if changed is None:
        ledger = Ledger.empty()
        if everything is None:
            everything = _handed_if_stored(handed, produced) or await _done_extracts(store)
        changed = {e.id: e for e in everything}
    del everything, handed
    await fill_documents(store, [e for e in changed.values() if e is not None])
    bar = Bar(ctx, len(changed))
    work = Reduction(ledger, store)
    await work.replace_chunks(changed)
    groups, sig_group, concept_joins = work.groups()
    bar.at(Bar.GROUPED)

    # Tier 2: embed each tier-1 group once, pair the close ones.
    vectors = await embed_texts(ctx, [embedding_text(g) for g in groups])
    low = min(settings.review_band[0], settings.auto_merge)
    a, b = candidate_pairs(vectors, low) if len(groups) > 1 else (np.empty(0, np.int64), np.empty(0, np.int64))
    sims = np.einsum("ij,ij->i", vectors[a], vectors[b]) if len(a) else np.empty(0, np.float32)
    kinds = np.array([type_key(g.type) for g in groups], dtype=object)
    merge, review = split_pairs(sims, kinds[a] == kinds[b], settings.auto_merge, settings.review_band)
    if len(a):  # certainly two identifiers (`__abs__()` / `abs()`): neither merged nor asked
        apart = np.fromiter((other_identifiers(groups[x].name, groups[y].name)
                             for x, y in zip(a.tolist(), b.tolist(), strict=True)), bool, len(a))
        merge, review = merge & ~apart, review & ~apart
        if ctx.engine.name != "offline":  # a model's names: one adding words to another is judged, not merged
            judged = np.fromiter((adds_words(groups[x], groups[y]) for x, y in zip(a.tolist(), b.tolist(), strict=True)),
                                 bool, len(a))
            review, merge = review | (merge & judged), merge & ~judged
    auto = connected_labels(len(groups), a[merge], b[merge])
    bar.at(Bar.PAIRED)

    async def evidence_for(chunk_ids: Sequence[str]) -> dict[str, list[tuple[str, set[str]]]]:
        await work.read_extracts(chunk_ids)
        return claim_sentences(work.extracts[c] for c in chunk_ids if c in work.extracts)

    # Tier 3: ask about review pairs not already joined by tier 2.
    # A pair whose names meet nowhere in the sources is never merged, whatever a model answers:
    # it is not asked (with a small embedder's similarities, most of the review band is such pairs).
    open_pairs = [(int(x), int(y), float(s)) for x, y, s in zip(a[review], b[review], sims[review], strict=True)
                  if auto[x] != auto[y] and names_meet(groups[int(x)], groups[int(y)])]
    summaries = Summaries(ctx, template, bar.within(Bar.JUDGED, Bar.DESCRIBED))

    def describe_settled() -> None:
        # While pairs are judged, the clusters no answer can change are described: their
        # summaries are then under way or done when the final describe asks for them.
        settled, of_group = merge_evidence(groups, auto)
        unsettled = {int(of_group[g]) for x, y, _ in open_pairs for g in (x, y)}
        summaries.describe_early([settled[c] for c in range(len(settled)) if c not in unsettled])

    early = describe_settled if ctx.engine.name != "offline" else None  # a local engine has no wait to fill
    try:
        same, cached = await judge(ctx, template, groups, open_pairs, evidence_for, asking=early,
                                   progress=bar.within(Bar.PAIRED, Bar.JUDGED))
    except BaseException:
        await summaries.settle()  # the answers asked early still land in the cache
        raise
    final = connected_labels(
        len(groups), np.concatenate([a[merge], [p[0] for p in same]]).astype(np.int64),
        np.concatenate([b[merge], [p[1] for p in same]]).astype(np.int64),
    )
    clusters, group_cluster = merge_evidence(groups, final)
    bar.at(Bar.JUDGED)

    ids = assign_ids(clusters)
    # The summaries are calls; relations and claims need no description: they are worked out
    # while the summaries wait for the model.
    describing = asyncio.create_task(summaries.describe(clusters))
    # An entity's vector is that of its best-supported group (already embedded, free).
    lead: dict[int, int] = {}
    for g, c in enumerate(group_cluster.tolist()):
        if c not in lead or len(groups[g].chunk_ids) > len(groups[lead[c]].chunk_ids):
            lead[c] = g
    try:
        out = await reduce_steps(work, clusters, group_cluster.tolist(), sig_group, ids, ctx.engine.name,
                                 [vectors[lead[c]] for c in range(len(clusters))])
        # Relations, claims and the ledger need no description: they are stored while the last
        # summaries are still being asked. The mark goes first, so that a crash before the
        # entities are stored leaves none to skip this run's work on.
        ledger_writes, ledger_gone = ledger.changes(produced)
        if ledger.fresh:  # content hashes an earlier version kept beside the records
            ledger_gone += [f"{OLD_HASHES_KEY}:{kind}:{x}{y}" for kind in ("relations", "claims") for x in _HEX for y in _HEX]
        async with store.transaction():
            await clear_stage(store, PHASE)
            await store.upsert([*out.write_relations, *out.write_claims, *ledger_writes])
            for kind, gone in ((Relation, out.removed_relations), (Claim, out.removed_claims), (CacheEntry, ledger_gone)):
                for s in range(0, len(gone), GET_BATCH):
                    await store.delete(kind, {"id": gone[s : s + GET_BATCH]})
    finally:
        try:
            descriptions = await describing  # its answers land even if reduce failed
        finally:
            await summaries.settle()
    for entity, description in zip(out.entities, descriptions, strict=True):
        entity.description = description

    old_entities = out.old_entities
    write_entities = [e for e in out.entities if e.id not in old_entities or _comparable(old_entities[e.id]) != _comparable(e)]
    removed_entities = sorted(set(old_entities) - {e.id for e in out.entities})
    async with store.transaction():
        await store.upsert(write_entities)
        for s in range(0, len(removed_entities), GET_BATCH):
            await store.delete(Entity, {"id": removed_entities[s : s + GET_BATCH]})
        await mark_stage(store, PHASE, fp, entities=len(out.entities))
    set_rollup(ctx.state, PHASE, fp)
    bar.end()

    changed_entities = [e.id for e in out.entities if e.id not in old_entities or old_entities[e.id].fingerprint != e.fingerprint]
    ctx.state[PHASE] = {
        "changed_entities": changed_entities,
        "removed_entities": removed_entities,
        "changed_relations": [r.id for r in out.write_relations],
        # The canonical KB as just stored: PLAN, next in this process, need not read it back.
        # Every claim only when every chunk was redone; else the claims written and removed.
        "records": (out.entities, out.relations, out.claims),
        "changed_claims": out.write_claims,
        "removed_claims": out.removed_claims,
        "old_claims": out.old_claims,
        "claims_since": mark.get("fingerprint"),  # the REDUCE output those changes start from
    }
    n_concepts = sum(1 for e in out.entities if e.category == "concept")
    return PhaseResult(
        items=len(out.entities), done=len(write_entities), skipped=len(out.entities) - len(write_entities),
        seconds=time.perf_counter() - started,
        details={
            "mentions": work.mention_count, "tier1_groups": len(groups), "concept_entity_merges": concept_joins,
            "tier2_candidate_pairs": len(a), "tier2_auto_merged": int(merge.sum()),
            "tier3_pairs": len(open_pairs), "tier3_merged": len(same), "tier3_cached": cached,
            "summaries": len(summaries.asked), "entities": len(out.entities) - n_concepts, "concepts": n_concepts,
            "relations": len(out.relations), "claims": await store.count(Claim), "chunks_redone": out.chunks_redone,
            "dropped_relations": out.dropped, "self_loops": out.loops,
        },
    )

