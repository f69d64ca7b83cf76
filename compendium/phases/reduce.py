"""REDUCE: turn every chunk's extract into canonical entities, relations and claims (three tiers)."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import operator
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

import numpy as np
import xxhash

from ..engines.tasks import DescriptionRequest, EntitySketch, PairQuestion
from ..fingerprint import fingerprint, short_id, text_hash
from ..pipeline.collector import collector_paused
from ..pipeline.context import CompileContext, PhaseResult
from ..pipeline.stages import mark_stage, rollup, set_rollup, stage_mark
from ..storage.records import CacheEntry, Chunk, Claim, Entity, Extract, Record, Relation
from ..templates.render import prompt_source
from ..templates.schema import Template
from .candidates import candidate_pairs
from .common_words import corpus_spellings
from .map import extracts_fingerprint
from .resolution import (
    CONCEPT,
    Evidence,
    Mention,
    assign_ids,
    build_groups,
    clip,
    collect_mentions,
    connected_labels,
    embedding_text,
    id_mapping,
    join_descriptions,
    merge_evidence,
    normalize_name,
    split_pairs,
    tier1_labels,
    type_key,
)
from .term_mentions import is_term, term_claims

# 2: tier 2 embeds names alone; 3: declared aliases type generic mentions; 4: defined terms in every claim;
# 5: the corpus's lowercase spelling of common words, code-only terms gather code-marked claims only
REDUCE_VERSION = "reduce-5"
PHASE = "reduce"
ID_MAP = "reduce:entity-ids"  # CacheEntry holding mention key -> entity id, for stable ids
# Relation and claim id -> content hash, of what is stored; in buckets by the id's first two
# characters, so no one entry grows with the KB past what a server takes in one packet.
HASHES_KEY = "reduce:record-hashes"
SUMMARY_INPUTS_KEY = "reduce:summary-inputs"  # entity id -> descriptions its summary was written from
# New descriptions a summary absorbs before it is written again (a removed one always rewrites it).
SUMMARY_REFRESH = 4
_GET_BATCH = 500
_EMBED_BATCH = 256
SUMMARY_INPUTS = 12  # descriptions a summary is written from


@dataclass
class ReduceOutput:
    entities: list[Entity]
    relations: list[Relation]
    claims: list[Claim]
    dropped_relations: int = 0
    self_loops: int = 0
    details: dict[str, Any] = field(default_factory=dict)


def claim_id(chunk_id: str, text: str) -> str:
    """short_id("claim", chunk_id, text), with the canonical JSON of two strings written directly
    (the general encoder is most of the cost over a KB's claims)."""
    return xxhash.xxh3_128_hexdigest(f'["claim",{encode_basestring(chunk_id)},{encode_basestring(text)}]'.encode())[:16]


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
    """Canonical records from resolved clusters: entities, merged relations, attached claims.

    Relation ends and claim entities are names as written in a chunk: resolved first among
    that chunk's own mentions, then KB-wide (the best-supported cluster with that name).
    """
    # Per chunk, its own names; KB-wide, how many mentions give each name to each cluster.
    # Mentions alike (same name forms, same cluster) are counted together, then spread.
    # `written` holds the chunk's names as written too, so most lookups need no normalising.
    local: dict[str, dict[str, int]] = {}
    written: dict[str, dict[str, int]] = {}
    alike: Counter[tuple[Any, ...]] = Counter()
    for m, c in zip(mentions, mention_cluster, strict=True):
        own = local.get(m.chunk_id)
        if own is None:
            own = local[m.chunk_id] = {}
            written[m.chunk_id] = {}
        as_written = written[m.chunk_id]
        for surface in (m.name, *m.aliases):
            as_written.setdefault(surface, own.setdefault(normalize_name(surface), c))
        alike[(c, m.name, *m.aliases)] += 1
    support: dict[str, Counter[int]] = {}
    for (c, *surfaces), n in alike.items():
        for surface in surfaces:
            norm = normalize_name(surface)
            counts = support.get(norm)
            if counts is None:
                counts = support[norm] = Counter()
            counts[c] += n
    best = {norm: min(counts, key=lambda c: (-counts[c], c)) for norm, counts in support.items()}
    nowhere: dict[str, int] = {}

    def resolve(own: dict[str, int], name: Any) -> int | None:
        norm = normalize_name(name) if isinstance(name, str) else ""
        found = own.get(norm)
        return found if found is not None else best.get(norm)

    merged: dict[tuple[int, int, str], tuple[set[str], Counter[str]]] = {}
    claims: dict[str, Claim] = {}
    dropped = loops = 0
    for ex in extracts:
        own, as_written = local.get(ex.id, nowhere), written.get(ex.id, nowhere)
        for rel in ex.relations:
            src, dst = resolve(own, rel.get("source")), resolve(own, rel.get("target"))
            if src is None or dst is None:
                dropped += 1
                continue
            if src == dst:
                loops += 1
                continue
            rtype = str(rel.get("type") or "related_to").strip()
            entry = merged.get((src, dst, rtype))
            if entry is None:
                entry = merged[(src, dst, rtype)] = (set(), Counter())
            chunks, texts = entry
            chunks.add(ex.id)
            if str(rel.get("description") or "").strip():
                texts[str(rel["description"]).strip()] += 1
        for item in ex.claims:
            text = str(item.get("text") or "").strip()
            if not text:
                continue
            entity_ids: list[str] = []
            for n in item.get("entities") or []:
                c = as_written.get(n) if type(n) is str else None
                if c is None:
                    c = resolve(own, n)
                if c is not None and ids[c] not in entity_ids:
                    entity_ids.append(ids[c])
            cid = claim_id(ex.id, text)
            claims[cid] = Claim(id=cid, text=text, chunk_id=ex.id, document_id=ex.document_id, entity_ids=entity_ids)

    # "Exception" where the corpus writes "exception": the entity takes the corpus's spelling,
    # keeping the capitalised one first among its aliases (PLAN reads it as a common word).
    # A defined term's other spellings count too: the glossary's "Tablespace" in a cluster named
    # after the TABLESPACE keyword is the "tablespace" of the prose.
    other = [(i, n) for i, c in enumerate(clusters) if CONCEPT in c.categories for n in c.names if n != c.name]
    found = corpus_spellings([c.name for c in clusters] + [n for _, n in other], (c.text for c in claims.values()))
    spelled = {i: n for i, n in found.items() if i < len(clusters)}
    also: dict[int, set[str]] = {}
    for k, n in found.items():
        if k >= len(clusters):
            also.setdefault(other[k - len(clusters)][0], set()).add(n)
    # Defined terms in the claims of every chunk, not only the ones MAP named them in. A term
    # only ever written as inline code (`current`, `always`) is a name only where so written.
    terms = {i: spellings for i, c in enumerate(clusters) if c.descriptions
             and (spellings := sorted({n.lower() for n in (*c.names, spelled.get(i, ""), *also.get(i, ()))
                                       if n.islower() and is_term(n)}))}
    code_only = {i for i in terms if CONCEPT not in clusters[i].categories}
    more_chunks: dict[int, set[str]] = {}
    more_documents: dict[int, set[str]] = {}
    for i, found in term_claims(terms, claims.values(), code_only).items():
        for claim in found:
            if ids[i] not in claim.entity_ids:
                claim.entity_ids.append(ids[i])
            more_chunks.setdefault(i, set()).add(claim.chunk_id)
            if claim.document_id:
                more_documents.setdefault(i, set()).add(claim.document_id)

    relations: list[Relation] = []
    neighbours: list[set[int]] = [set() for _ in clusters]
    for (src, dst, rtype), (chunks, texts) in sorted(merged.items(), key=lambda kv: (ids[kv[0][0]], ids[kv[0][1]], kv[0][2])):
        neighbours[src].add(dst)
        neighbours[dst].add(src)
        text = min(texts, key=lambda t: (-texts[t], -len(t), t)) if texts else ""
        relations.append(
            Relation(
                id=short_id("rel", ids[src], ids[dst], rtype), source=ids[src], target=ids[dst], type=rtype,
                description=text, strength=len(chunks), chunk_ids=sorted(chunks),
            )
        )

    chunk_ids = [c.chunk_ids | more_chunks.get(i, set()) for i, c in enumerate(clusters)]
    raw = [math.log1p(len(chunk_ids[i])) + math.log1p(len(n)) for i, n in enumerate(neighbours)]
    top = max(raw, default=0.0) or 1.0
    entities = [
        Entity(
            id=ids[i], name=spelled.get(i, c.name), type=c.type, category=c.category, description=descriptions[i],
            aliases=[c.name, *c.aliases] if i in spelled else c.aliases, chunk_ids=sorted(chunk_ids[i]),
            document_ids=sorted(c.document_ids | more_documents.get(i, set())),
            degree=len(neighbours[i]), importance=round(raw[i] / top, 4),
            fingerprint=fingerprint(c.fingerprint_parts()), engine=engine,
            embedding=None if vectors is None else vectors[i],
        )
        for i, c in enumerate(clusters)
    ]
    return ReduceOutput(entities, relations, sorted(claims.values(), key=lambda c: c.id), dropped, loops)


def _prompt(configured: str, name: str) -> str:
    try:
        return prompt_source(configured, name)
    except OSError:  # built-in prompt not shipped: the engine uses its own; key by name
        return f"builtin:{name}"


async def _cached(ctx: CompileContext, ids: Sequence[str]) -> dict[str, CacheEntry]:
    out: dict[str, CacheEntry] = {}
    for s in range(0, len(ids), _GET_BATCH):
        for entry in await ctx.store.get(CacheEntry, list(ids[s : s + _GET_BATCH])):
            out[entry.id] = entry  # type: ignore[assignment]
    return out


async def embed_texts(ctx: CompileContext, texts: Sequence[str]) -> np.ndarray:
    """Vectors of texts, embedding only those not cached under (embedder model, text)."""
    model = ctx.embedder.model
    keys = [fingerprint(model, t) for t in texts]
    cached = await _cached(ctx, list(dict.fromkeys(keys)))
    vectors: dict[str, np.ndarray] = {k: np.asarray(e.vector, dtype=np.float32) for k, e in cached.items() if e.vector is not None}
    todo = list(dict.fromkeys(k for k in keys if k not in vectors))
    text_of = dict(zip(keys, texts, strict=True))

    async def one(batch: list[str]) -> None:
        got = await ctx.embedder.embed([text_of[k] for k in batch])
        now = time.time()
        await ctx.store.upsert(
            CacheEntry(id=k, namespace="embedding", vector=np.asarray(v, dtype=np.float32), created_at=now)
            for k, v in zip(batch, got, strict=True)
        )
        vectors.update(zip(batch, np.asarray(got, dtype=np.float32), strict=True))

    # Together: the embedder's client bounds how many are in flight.
    await _all([one(todo[s : s + _EMBED_BATCH]) for s in range(0, len(todo), _EMBED_BATCH)])
    if not keys:
        return np.zeros((0, ctx.embedder.dimensions), dtype=np.float32)
    return np.stack([vectors[k] for k in keys])


def _sketch(group: Evidence, evidence: dict[str, list[tuple[str, set[str]]]]) -> EntitySketch:
    sentences: list[str] = []
    for chunk in sorted(group.chunk_ids):
        for text, names in evidence.get(chunk, ()):
            if names & group.norms and text not in sentences:
                sentences.append(text)
        if len(sentences) >= 3:
            break
    described = group.ranked_descriptions()
    return EntitySketch(
        name=group.name, type=group.type, description=described[0] if described else "",
        aliases=group.aliases[:5], evidence=sentences[:3],
    )


async def judge(
    ctx: CompileContext, template: Template, groups: Sequence[Evidence], pairs: list[tuple[int, int, float]],
    evidence: dict[str, list[tuple[str, set[str]]]] | Callable[[], dict[str, list[tuple[str, set[str]]]]],
) -> tuple[list[tuple[int, int]], int]:
    """Tier 3: pairs the engine says are the same thing; cached decisions are never re-asked.

    `evidence` (each chunk's claim sentences) may be given as a function: it is then built
    only when a pair has to be asked, which a recompile seldom needs."""
    prompt = _prompt(template.reduce.prompt, PHASE)
    keys = [fingerprint("pair", sorted([groups[a].identity(), groups[b].identity()]), ctx.engine.model, prompt) for a, b, _ in pairs]
    cached = await _cached(ctx, list(dict.fromkeys(keys)))
    same: list[tuple[int, int]] = []
    todo: list[int] = []
    for i, key in enumerate(keys):
        if key in cached:
            if (cached[key].value or {}).get("same"):
                same.append(pairs[i][:2])
        else:
            todo.append(i)
    if todo and callable(evidence):
        evidence = evidence()
    batch_size = template.reduce.judge_batch
    batches = [todo[s : s + batch_size] for s in range(0, len(todo), batch_size)]
    found: list[list[tuple[int, int]]] = [[] for _ in batches]  # in batch order, whatever answers first
    gate = asyncio.Semaphore(max(1, template.map.concurrency))
    done = 0

    async def one(n_batch: int, batch: list[int]) -> None:
        nonlocal done
        questions = [
            PairQuestion(f"p{n + 1}", _sketch(groups[pairs[i][0]], evidence), _sketch(groups[pairs[i][1]], evidence),  # type: ignore[arg-type]
                         round(pairs[i][2], 4))
            for n, i in enumerate(batch)
        ]
        async with gate:
            answers = await ctx.engine.judge_pairs(questions, template)
        now = time.time()
        entries = []
        for q, i in zip(questions, batch, strict=True):
            if q.label in answers:  # an unanswered pair is asked again next time
                entries.append(CacheEntry(id=keys[i], namespace="pair", value={"same": bool(answers[q.label])}, created_at=now))
                if answers[q.label]:
                    found[n_batch].append(pairs[i][:2])
        await ctx.store.upsert(entries)  # at once: a crash later loses no decision
        done += len(batch)
        ctx.progress(PHASE, done, len(todo))

    # Batches are asked together (map.concurrency at a time, as summaries are), not one by one.
    await _all([one(n, batch) for n, batch in enumerate(batches)])
    return same + [pair for batch in found for pair in batch], len(pairs) - len(todo)


async def _all(calls: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run them together; every one finishes (answers that arrived stay stored), then the first error is raised."""
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    if errors:
        raise errors[0]


def summary_inputs(ranked: Sequence[str]) -> list[str]:
    """The descriptions a summary is written from: the best supported few, best first.

    Capped so that one more (or one fewer) rarely-seen description leaves the summary's cache
    key, and so its cost, unchanged; a removed description that was among them changes the key,
    so removed text disappears from the summary.
    """
    return list(ranked[:SUMMARY_INPUTS])


async def describe(
    ctx: CompileContext,
    template: Template,
    clusters: Sequence[Evidence],
    ids: Sequence[str],
    prior_inputs: dict[str, list[str]],
) -> tuple[list[str], int, dict[str, list[str]]]:
    """Each cluster's description; clusters with many distinct ones are summarised (cached).

    A summary is kept while every description it was written from still exists and fewer than
    SUMMARY_REFRESH new ones have appeared: a small addition does not pay for a rewrite, a
    removal always does (removed text leaves the summary). Summaries are asked concurrently
    (bounded by map.concurrency), cache reads are one batch, and each answer is stored as soon
    as it arrives, so a crash loses no paid answer. Returns the descriptions, the number of
    summaries asked and, per entity id, the inputs its summary stands on.
    """
    settings = template.reduce
    prompt = _prompt(settings.summary_prompt, "reduce_summary")
    ranked = [c.ranked_descriptions() for c in clusters]
    inputs: list[list[str]] = []
    for entity_id, r in zip(ids, ranked, strict=True):
        if len(r) <= settings.summarize_over:
            inputs.append([])
            continue
        fresh, kept = summary_inputs(r), prior_inputs.get(entity_id)
        keep = kept is not None and set(kept) <= set(r) and len(set(fresh) - set(kept)) < SUMMARY_REFRESH
        inputs.append(kept if keep else fresh)  # type: ignore[arg-type]
    keys = [fingerprint("summary", sorted(i), ctx.engine.model, prompt) if i else "" for i in inputs]
    hits = await _cached(ctx, sorted({k for k in keys if k}))
    out = [
        join_descriptions(r, settings.description_max_chars) if not k
        else str((hits[k].value or {}).get("description", "")) if k in hits else ""
        for r, k in zip(ranked, keys, strict=True)
    ]
    todo: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        if key and key not in hits:
            todo.setdefault(key, []).append(i)
    gate = asyncio.Semaphore(max(1, template.map.concurrency))
    done = 0

    async def one(key: str, members: list[int]) -> None:
        nonlocal done
        first = clusters[members[0]]
        request = DescriptionRequest(first.name, first.type, inputs[members[0]], settings.description_max_chars)
        async with gate:  # around the call only: storing its answer does not hold a slot
            text = clip((await ctx.engine.summarize(request, template)).strip(), settings.description_max_chars)
        await ctx.store.upsert([CacheEntry(id=key, namespace="summary", value={"description": text}, created_at=time.time())])
        for i in members:
            out[i] = text
        done += 1
        ctx.progress(PHASE, done, len(todo))

    tasks = [asyncio.create_task(one(k, m)) for k, m in todo.items()]
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)  # answers that arrived stay stored
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    if errors:
        raise errors[0]
    used = {entity_id: i for entity_id, i in zip(ids, inputs, strict=True) if i}
    return out, len(todo), used


def _claim_index(extracts: Sequence[Extract]) -> dict[str, list[tuple[str, set[str]]]]:
    index: dict[str, list[tuple[str, set[str]]]] = {}
    for ex in extracts:
        for item in ex.claims:
            text = str(item.get("text") or "").strip()
            if text:
                names = {normalize_name(n) for n in item.get("entities") or [] if isinstance(n, str)}
                index.setdefault(ex.id, []).append((text, names))
    return index


_FIELD_VALUES: dict[type, Any] = {}


def record_hash(record: Record) -> str:
    """A relation's or claim's content in 32 hex digits (every field: neither has a vector)."""
    values = _FIELD_VALUES.get(type(record))
    if values is None:  # the fields' values in to_dict()'s order, without building the dict
        values = _FIELD_VALUES[type(record)] = operator.attrgetter(*(f.name for f in dataclasses.fields(record)))
    return text_hash(repr(list(values(record))))


def _bucket_key(kind: str, record_id: str) -> str:
    return f"{HASHES_KEY}:{kind}:{record_id[:2]}"


def hash_buckets(hashes: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """{kind: {id: hash}} as stored: one entry per kind and id prefix (empty ones absent)."""
    out: dict[str, dict[str, str]] = {}
    for kind, by_id in hashes.items():
        for record_id, h in by_id.items():
            out.setdefault(_bucket_key(kind, record_id), {})[record_id] = h
    return out


async def _stored_hashes(ctx: CompileContext) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """The hash of every stored relation and claim, and the buckets they were read from: as the
    last REDUCE stored them with the records (a few reads), or from the records themselves
    when those buckets do not account for every record."""
    store = ctx.store
    keys = [f"{HASHES_KEY}:{kind}:{a}{b}" for kind in ("relations", "claims") for a in _HEX for b in _HEX]
    buckets = {k: dict(e.value or {}) for k, e in (await _cached(ctx, keys)).items()}
    value: dict[str, dict[str, str]] = {"relations": {}, "claims": {}}
    for key, by_id in buckets.items():
        value[key.split(":")[2]].update(by_id)
    if len(value["relations"]) == await store.count(Relation) and len(value["claims"]) == await store.count(Claim):
        return value, buckets
    return {"relations": {r.id: record_hash(r) async for r in store.scan(Relation)},
            "claims": {c.id: record_hash(c) async for c in store.scan(Claim)}}, buckets


_HEX = "0123456789abcdef"


def _comparable(record: Record) -> dict[str, Any]:
    data = record.to_dict()
    data.pop("embedding", None)
    return data


async def run(template: Template, ctx: CompileContext) -> PhaseResult:
    with collector_paused(ctx):  # every extract, mention, relation and claim in memory: see pipeline/collector.py
        return await _run(template, ctx)


async def _run(template: Template, ctx: CompileContext) -> PhaseResult:
    started = time.perf_counter()
    store, settings = ctx.store, template.reduce
    # What MAP produced, as a fingerprint MAP handed on; scanned only when it could not.
    extracts: list[Extract] | None = None
    produced = rollup(ctx.state, "map")
    if produced is None:
        extracts = [e async for e in store.scan(Extract, {"status": "done"})]  # type: ignore[misc]
        produced = extracts_fingerprint([(e.id, e.fingerprint) for e in extracts])
    fp = fingerprint(produced, template.phase_fingerprint(PHASE), ctx.engine.model, ctx.embedder.model, REDUCE_VERSION)
    mark = await stage_mark(store, PHASE)
    if mark.get("fingerprint") == fp:
        count = await store.count(Entity)
        if mark.get("entities", count) == count:
            ctx.state[PHASE] = {"changed_entities": [], "removed_entities": [], "changed_relations": []}
            set_rollup(ctx.state, PHASE, fp)
            return PhaseResult(items=count, skipped=count, seconds=time.perf_counter() - started)
    if extracts is None:
        extracts = [e async for e in store.scan(Extract, {"status": "done"})]  # type: ignore[misc]

    orphans = [e.id for e in extracts if not e.document_id]
    document_of = {c.id: c.document_id for c in await store.get(Chunk, orphans)} if orphans else {}  # type: ignore[attr-defined]
    for e in extracts:
        e.document_id = e.document_id or document_of.get(e.id, "")
    mentions = collect_mentions(extracts)
    labels, concept_joins = tier1_labels(mentions)
    groups, mention_group = build_groups(mentions, labels)
    ctx.progress(PHASE, 1, 4)

    # Tier 2: embed each tier-1 group once, pair the close ones.
    vectors = await embed_texts(ctx, [embedding_text(g) for g in groups])
    low = min(settings.review_band[0], settings.auto_merge)
    a, b = candidate_pairs(vectors, low) if len(groups) > 1 else (np.empty(0, np.int64), np.empty(0, np.int64))
    sims = np.einsum("ij,ij->i", vectors[a], vectors[b]) if len(a) else np.empty(0, np.float32)
    kinds = np.array([type_key(g.type) for g in groups], dtype=object)
    merge, review = split_pairs(sims, kinds[a] == kinds[b], settings.auto_merge, settings.review_band)
    auto = connected_labels(len(groups), a[merge], b[merge])
    ctx.progress(PHASE, 2, 4)

    # Tier 3: ask about review pairs not already joined by tier 2.
    open_pairs = [(int(x), int(y), float(s)) for x, y, s in zip(a[review], b[review], sims[review], strict=True) if auto[x] != auto[y]]
    same, cached = await judge(ctx, template, groups, open_pairs, lambda: _claim_index(extracts))
    final = connected_labels(
        len(groups), np.concatenate([a[merge], [p[0] for p in same]]).astype(np.int64),
        np.concatenate([b[merge], [p[1] for p in same]]).astype(np.int64),
    )
    clusters, group_cluster = merge_evidence(groups, final)
    ctx.progress(PHASE, 3, 4)

    previous = await _cached(ctx, [ID_MAP, SUMMARY_INPUTS_KEY])
    ids = assign_ids(clusters, dict((previous[ID_MAP].value or {}) if ID_MAP in previous else {}))
    prior_inputs = dict((previous[SUMMARY_INPUTS_KEY].value or {}) if SUMMARY_INPUTS_KEY in previous else {})
    # The summaries are calls; relations and claims are CPU that needs no description: the
    # second runs in a thread while the first wait for the model, so neither waits for the other.
    describing = asyncio.create_task(describe(ctx, template, clusters, ids, prior_inputs))
    # An entity's vector is that of its best-supported group (already embedded, free).
    lead: dict[int, int] = {}
    for g, c in enumerate(group_cluster.tolist()):
        if c not in lead or len(groups[g].chunk_ids) > len(groups[lead[c]].chunk_ids):
            lead[c] = g
    try:
        out = await asyncio.to_thread(
            reduce, extracts, mentions, group_cluster[mention_group].tolist(), clusters, ids, [""] * len(clusters),
            engine=ctx.engine.name, vectors=[vectors[lead[c]] for c in range(len(clusters))],
        )
        # What changed since the stored KB, worked out while the summaries are still being asked.
        hashes = {"relations": {r.id: record_hash(r) for r in out.relations},
                  "claims": {c.id: record_hash(c) for c in out.claims}}
        old, old_buckets = await _stored_hashes(ctx)
        new_buckets = hash_buckets(hashes)
        gone_buckets = sorted(set(old_buckets) - set(new_buckets))
        write_buckets = [CacheEntry(id=k, namespace=PHASE, value=v, created_at=time.time())
                         for k, v in new_buckets.items() if old_buckets.get(k) != v]
        write_relations = [r for r in out.relations if old["relations"].get(r.id) != hashes["relations"][r.id]]
        write_claims = [c for c in out.claims if old["claims"].get(c.id) != hashes["claims"][c.id]]
        removed_relations = sorted(set(old["relations"]) - set(hashes["relations"]))
        removed_claims = sorted(set(old["claims"]) - set(hashes["claims"]))
        replaced_claims = [c.id for c in write_claims if c.id in old["claims"]]
        del old, old_buckets, new_buckets
    finally:
        descriptions, summaries, used_inputs = await describing  # its answers land even if reduce failed
    for entity, description in zip(out.entities, descriptions, strict=True):
        entity.description = description

    old_entities = {e.id: e async for e in store.scan(Entity)}
    old_claims = await store.get(Claim, [*replaced_claims, *removed_claims])  # PLAN subtracts them
    write_entities = [e for e in out.entities if e.id not in old_entities or _comparable(old_entities[e.id]) != _comparable(e)]
    removed_entities = sorted(set(old_entities) - {e.id for e in out.entities})
    async with store.transaction():
        await store.upsert([*write_entities, *write_relations, *write_claims])
        for kind, gone in ((Entity, removed_entities), (Relation, removed_relations), (Claim, removed_claims)):
            for s in range(0, len(gone), _GET_BATCH):
                await store.delete(kind, {"id": gone[s : s + _GET_BATCH]})
        await store.upsert([
            CacheEntry(id=ID_MAP, namespace=PHASE, value=id_mapping(clusters, ids), created_at=time.time()),
            CacheEntry(id=SUMMARY_INPUTS_KEY, namespace=PHASE, value=used_inputs, created_at=time.time()),
            *write_buckets,
        ])
        if gone_buckets:
            await store.delete(CacheEntry, {"id": gone_buckets})
        await mark_stage(store, PHASE, fp, entities=len(out.entities))
    set_rollup(ctx.state, PHASE, fp)
    ctx.progress(PHASE, 4, 4)

    changed = [e.id for e in out.entities if e.id not in old_entities or old_entities[e.id].fingerprint != e.fingerprint]
    ctx.state[PHASE] = {
        "changed_entities": changed,
        "removed_entities": removed_entities,
        "changed_relations": [r.id for r in write_relations],
        # The whole canonical KB as just stored: PLAN, next in this process, need not read it back.
        "records": (out.entities, out.relations, out.claims),
        # The claims as changed since the REDUCE output `claims_since` (its mark before this run).
        "changed_claims": write_claims,
        "removed_claims": removed_claims,
        "old_claims": old_claims,
        "claims_since": mark.get("fingerprint"),
    }
    n_concepts = sum(1 for e in out.entities if e.category == "concept")
    return PhaseResult(
        items=len(out.entities), done=len(write_entities), skipped=len(out.entities) - len(write_entities),
        seconds=time.perf_counter() - started,
        details={
            "mentions": len(mentions), "tier1_groups": len(groups), "concept_entity_merges": concept_joins,
            "tier2_candidate_pairs": len(a), "tier2_auto_merged": int(merge.sum()),
            "tier3_pairs": len(open_pairs), "tier3_merged": len(same), "tier3_cached": cached,
            "summaries": summaries, "entities": len(out.entities) - n_concepts, "concepts": n_concepts,
            "relations": len(out.relations), "claims": len(out.claims),
            "dropped_relations": out.dropped_relations, "self_loops": out.self_loops,
        },
    )
