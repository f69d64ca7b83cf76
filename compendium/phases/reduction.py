"""REDUCE over its ledger: groups from every signature's evidence, the chunks a change touches,
and the canonical records they give. A full run is this over every chunk from an empty ledger.

The steps read what they need from the store as they go (`store` None: the ledger holds
everything, as when it starts empty and nothing was stored before).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..fingerprint import fingerprint
from ..storage.base import Store
from ..storage.records import Chunk, Claim, Entity, Extract, Relation
from .reduce_chunks import (
    Contribution,
    add_mentions,
    add_relations,
    chunk_mentions,
    claim_counts,
    contribution,
    mention_entry,
    mention_sig,
    take_out_mentions,
)
from .reduce_state import Ledger, get_in_batches
from .reduce_terms import Term, defined_terms, gather_terms
from .resolution import Evidence, Mention, normalize_name, tier1_distinct

_GET_BATCH = 500


@dataclass
class Outcome:
    """What the run changed, for the store and for PLAN."""

    entities: list[Entity]
    relations: list[Relation]  # every relation of the KB
    write_relations: list[Relation]
    removed_relations: list[str]
    write_claims: list[Claim]
    removed_claims: list[str]
    old_claims: list[Claim]  # the stored versions of the claims written or removed
    claims: list[Claim] | None  # every claim of the KB, when every chunk was redone
    chunks_redone: int
    dropped: int
    loops: int
    old_entities: dict[str, Entity] = field(default_factory=dict)  # as stored before this run


async def _claims_of(store: Store | None, chunk_ids: Sequence[str]) -> list[Claim]:
    if store is None or not chunk_ids:
        return []
    out: list[Claim] = []
    for s in range(0, len(chunk_ids), _GET_BATCH):
        out += [c async for c in store.scan(Claim, {"chunk_id": list(chunk_ids[s : s + _GET_BATCH])})]  # type: ignore[misc]
    return out


def mention_count(sig: dict[str, Any]) -> int:
    """How many mentions a signature's evidence holds."""
    return len(sig["c"]) + sum(sig["n"].values()) - len(sig["n"])


async def fill_documents(store: Store | None, extracts: Sequence[Extract]) -> None:
    """Extracts stored without their document take it from their chunk."""
    orphans = [e.id for e in extracts if not e.document_id]
    document_of = {c.id: c.document_id for c in await get_in_batches(store, Chunk, orphans)}
    for e in extracts:
        e.document_id = e.document_id or document_of.get(e.id, "")


class Reduction:
    def __init__(self, ledger: Ledger, store: Store | None) -> None:
        self.ledger, self.store = ledger, store
        self.mentions: dict[str, list[Mention]] = {}
        self.extracts: dict[str, Extract] = {}
        self.changed: set[str] = set()
        self.touched_relations: set[str] = set()
        self.term_entities: dict[str, list[str]] = {}
        self.gone_claim_words: Counter[str] = Counter()
        self.old_terms: list[dict[str, Any]] = []

    async def replace_chunks(self, changed: dict[str, Extract | None]) -> None:
        """Out with what the changed chunks gave last time, in with their extracts now (None: gone)."""
        ledger = self.ledger
        if self.store is not None and not ledger.fresh:
            await ledger.chunks.load(self.store, changed)
        for cid in changed:
            entry = ledger.chunks.get(cid)
            if entry is not None:
                take_out_mentions(ledger.sigs, cid, entry)
        for cid, ex in sorted(changed.items()):
            if ex is not None:
                ms = self.mentions[cid] = chunk_mentions(ex)
                self.extracts[cid] = ex
                add_mentions(ledger.sigs, cid, ex.document_id, ms)
        self.changed = set(changed)
        # Signatures whose evidence changed: an entity built from none of them is as stored (on a
        # full run none is: no need to know).
        self.touched_sigs: set[str] = set()
        if not ledger.fresh:
            self.touched_sigs = {k for cid in changed if (e := ledger.chunks.get(cid)) for k, _ in e["m"]}
            self.touched_sigs |= {mention_sig(m) for ms in self.mentions.values() for m in ms}

    async def read_extracts(self, chunk_ids: Sequence[str]) -> None:
        """The done extracts of chunks not read yet, with their mentions."""
        wanted = [c for c in chunk_ids if c not in self.extracts]
        found = [e for e in await get_in_batches(self.store, Extract, wanted) if e.status == "done"]
        await fill_documents(self.store, found)
        for ex in found:
            self.extracts[ex.id] = ex
            self.mentions[ex.id] = chunk_mentions(ex)

    def groups(self) -> tuple[list[Evidence], dict[str, int], int]:
        """Tier-1 groups of every signature, in the order of their first mention in chunk order;
        each signature's group; how many concept mentions joined an entity of their name."""
        sigs = list(self.ledger.sigs.items())

        def first(item: tuple[str, Any]) -> tuple[str, int]:
            chunks = item[1]["c"]
            k = min(chunks)
            return k, chunks[k]

        sigs.sort(key=first)
        reps = [Mention(v["k"][2], v["k"][1], v["k"][0], "", list(v["k"][3]), "", "") for _, v in sigs]
        weights = [mention_count(v) for _, v in sigs]
        labels, joined = tier1_distinct(reps, weights)
        _, index = np.unique(labels, return_inverse=True)
        groups = [Evidence() for _ in range(int(index.max()) + 1 if len(index) else 0)]
        sig_group: dict[str, int] = {}
        for (key, v), rep, g in zip(sigs, reps, index.tolist(), strict=True):
            groups[g].add_all(rep, list(v["c"]), set(v["d"]), v["s"])
            sig_group[key] = g
        return groups, sig_group, joined

    def resolution(self, group_cluster: Sequence[int], sig_group: dict[str, int], ids: Sequence[str]) -> None:
        """Each signature's entity, and each name's best-supported entity KB-wide."""
        self.sig_entity = {k: ids[group_cluster[g]] for k, g in sig_group.items()}
        support: dict[str, Counter[int]] = {}
        self.mention_count = 0
        for k, v in self.ledger.sigs.items():
            c, n = group_cluster[sig_group[k]], mention_count(v)
            self.mention_count += n
            for surface in (v["k"][2], *v["k"][3]):
                support.setdefault(normalize_name(surface), Counter())[c] += n
        self.best = {norm: ids[min(counts, key=lambda c: (-counts[c], c))] for norm, counts in support.items()}

    async def affected(self) -> set[str]:
        """The chunks to redo: the changed ones, those with a mention whose entity changed, and
        those resolving KB-wide a name whose best entity changed."""
        meta, ledger = self.ledger.meta, self.ledger
        out = set(self.changed)
        if ledger.fresh:
            return out
        old_sig, old_best = meta.get("sig_entity", {}), meta.get("best", {})
        for k, eid in self.sig_entity.items():
            if old_sig.get(k) != eid:
                out.update(ledger.sigs.get(k)["c"])
        names = [n for n in {*self.best, *old_best} if self.best.get(n) != old_best.get(n)]
        if self.store is not None:
            await ledger.foreign.load(self.store, names)
        for n in names:
            out.update(ledger.foreign.get(n) or {})
        return out

    async def redo(self, chunks: set[str]) -> tuple[dict[str, Contribution], list[Claim], Counter[str]]:
        """The chunks' contributions, swapped into the ledger for what they gave last time.
        Returns them, the claims stored for these chunks, and occurrences of each lowercase word in
        the new claims."""
        ledger, store = self.ledger, self.store
        others = sorted(c for c in chunks if c not in self.changed)
        if store is not None and not ledger.fresh:
            await ledger.chunks.load(store, others)
        await self.read_extracts(others)
        if ledger.fresh:  # every chunk is redone: what was stored before is all gone or replaced
            old_claims = [c async for c in store.scan(Claim)] if store is not None else []  # type: ignore[misc]
        else:
            old_claims = await _claims_of(store, sorted(chunks))
        contributions = {cid: contribution(self.extracts[cid], self.mentions[cid], self.sig_entity, self.best)
                         for cid in sorted(chunks) if cid in self.extracts}
        old_entries = {cid: e for cid in chunks if (e := ledger.chunks.get(cid)) is not None}
        self.touched_relations = ({r for e in old_entries.values() for r, _ in e["r"]}
                                  | {r[0] for c in contributions.values() for r in c.relations})
        if store is not None and not ledger.fresh:
            await ledger.relations.load(store, self.touched_relations)
            await ledger.foreign.load(store, {n for e in old_entries.values() for n in e["f"]}
                                      | {n for c in contributions.values() for n in c.foreign})
        totals = ledger.meta.setdefault("totals", [0, 0])
        for cid, entry in old_entries.items():
            add_relations(ledger.relations, cid, [(r, "", "", "", d) for r, d in entry["r"]], -1)
            for n in entry["f"]:
                where = ledger.foreign.get(n) or {}
                where.pop(cid, None)
                ledger.foreign.set(n, where) if where else ledger.foreign.pop(n)
            totals[0] -= entry["x"][0]
            totals[1] -= entry["x"][1]
            ledger.chunks.pop(cid)
        for cid, con in contributions.items():
            add_relations(ledger.relations, cid, con.relations, 1)
            for n in con.foreign:
                where = ledger.foreign.get(n) or {}
                where[cid] = 1
                ledger.foreign.set(n, where)
            totals[0] += con.dropped
            totals[1] += con.loops
            ex = self.extracts[cid]
            ledger.chunks.set(cid, {"fp": ex.fingerprint, "doc": ex.document_id, "m": mention_entry(self.mentions[cid]),
                                    "r": [[r[0], r[4]] for r in con.relations], "f": con.foreign,
                                    "x": [con.dropped, con.loops]})
        gone_words, gone_claim_words = claim_counts(old_claims)
        new_words, new_claim_words = claim_counts(c for con in contributions.values() for c in con.claims.values())
        ledger.words.add_counts(gone_words, -1)
        ledger.words.add_counts(new_words, 1)
        ledger.claim_words.add_counts(gone_claim_words, -1)
        ledger.claim_words.add_counts(new_claim_words, 1)
        self.gone_claim_words = gone_claim_words
        return contributions, old_claims, new_claim_words

    def terms(self, clusters: Sequence[Evidence], ids: Sequence[str]) -> tuple[dict[int, str], list[Term], dict[int, int]]:
        return defined_terms(self.ledger, clusters, ids)

    async def gather_terms(self, terms: list[Term], contributions: dict[str, Contribution], old_claims: list[Claim],
                           new_claim_words: Counter[str]) -> dict[str, str]:
        new_claims = [c for con in contributions.values() for c in con.claims.values()]
        self.old_terms = list(self.ledger.meta.get("terms", []))  # as the last run left them
        self.term_entities, retermed = await gather_terms(self.ledger, self.store, terms, new_claims, old_claims,
                                                          new_claim_words, self.gone_claim_words)
        return retermed

    def _unchanged_evidence(self, ids: Sequence[str], terms: list[Term], cluster_of: dict[int, int],
                            old_entities: dict[str, Entity]) -> dict[int, Entity]:
        """Clusters built from the same signatures as the stored entity of their id, none of
        whose evidence changed, whose term gathers claims of the same chunks: the stored
        entity's chunks, documents and fingerprint stand (sorting them is most of the cost)."""
        if self.ledger.fresh:
            return {}
        before: dict[str, set[str]] = {}
        for k, eid in self.ledger.meta.get("sig_entity", {}).items():
            before.setdefault(eid, set()).add(k)
        now: dict[str, set[str]] = {}
        for k, eid in self.sig_entity.items():
            now.setdefault(eid, set()).add(k)
        gathered_before = {t["e"]: sorted({(w[1], w[2]) for w in t["w"]}) for t in self.old_terms}
        gathered = {cluster_of[k]: sorted({(w[1], w[2]) for w in t.window}) for k, t in enumerate(terms)}
        out: dict[int, Entity] = {}
        for i, eid in enumerate(ids):
            old = old_entities.get(eid)
            if (old is not None and now.get(eid) == before.get(eid) and not (now[eid] & self.touched_sigs)
                    and gathered.get(i, []) == gathered_before.get(eid, [])):
                out[i] = old
        return out

    async def finish(
        self, clusters: Sequence[Evidence], ids: Sequence[str], contributions: dict[str, Contribution],
        old_claims: list[Claim], terms: list[Term], cluster_of: dict[int, int], spelled: dict[int, str],
        retermed: dict[str, str], engine: str, vectors: Sequence[np.ndarray | None] | None,
        old_entities: dict[str, Entity],
    ) -> Outcome:
        ledger, store = self.ledger, self.store
        # Claims whose terms changed in chunks not redone: their chunks' claims are built again.
        again = sorted({chunk for chunk in retermed.values() if chunk not in contributions})
        if again:
            await self.read_extracts(again)
            old_claims = old_claims + await _claims_of(store, again)
            for cid in again:
                if cid in self.extracts:
                    contributions[cid] = contribution(self.extracts[cid], self.mentions[cid], self.sig_entity, self.best)
        claims: dict[str, Claim] = {}
        for con in contributions.values():
            for c in con.claims.values():
                for eid in self.term_entities.get(c.id, ()):
                    if eid not in c.entity_ids:
                        c.entity_ids.append(eid)
                claims[c.id] = c
        old = {c.id: c for c in old_claims}
        in_order = [claims[cid] for cid in sorted(claims)]
        # A claim not stored before is written without comparing it (a Python __eq__ per claim)
        write_claims = [c for c in in_order if (was := old.get(c.id)) is None or was != c]
        removed_claims = sorted(set(old) - set(claims))

        # Relations: the merged ones the redone chunks touched, beside every stored one.
        stored: dict[str, Relation] = {}
        if store is not None:
            stored = {r.id: r async for r in store.scan(Relation)}  # type: ignore[misc]
        touched = sorted(self.touched_relations | set(stored) if ledger.fresh else self.touched_relations)
        relations = dict(stored)
        write_relations: list[Relation] = []
        removed_relations: list[str] = []
        for rid in touched:
            value = ledger.relations.get(rid)
            if value is None:
                if relations.pop(rid, None) is not None:
                    removed_relations.append(rid)
                continue
            texts = value["x"]
            rel = Relation(id=rid, source=value["s"], target=value["d"], type=value["t"],
                           description=min(texts, key=lambda t: (-texts[t], -len(t), t)) if texts else "",
                           strength=len(value["c"]), chunk_ids=sorted(value["c"]))
            relations[rid] = rel
            if stored.get(rid) != rel:
                write_relations.append(rel)

        # Entities, every one: their chunks (with the chunks of the claims their term gathers),
        # neighbours and importance relative to the most important.
        index = {eid: i for i, eid in enumerate(ids)}
        neighbours: list[set[int]] = [set() for _ in clusters]
        for r in relations.values():
            a, b = index.get(r.source), index.get(r.target)
            if a is not None and b is not None:
                neighbours[a].add(b)
                neighbours[b].add(a)
        more_chunks: dict[int, set[str]] = {}
        more_documents: dict[int, set[str]] = {}
        for k, t in enumerate(terms):
            i = cluster_of[k]
            for _cid, chunk, doc in t.window:
                more_chunks.setdefault(i, set()).add(chunk)
                if doc:
                    more_documents.setdefault(i, set()).add(doc)
        kept = self._unchanged_evidence(ids, terms, cluster_of, old_entities)
        entities: list[Entity] = []
        for i, c in enumerate(clusters):
            was = kept.get(i)
            entities.append(Entity(
                id=ids[i], name=spelled.get(i, c.name), type=c.type, category=c.category, description="",
                aliases=[c.name, *c.aliases] if i in spelled else c.aliases,
                chunk_ids=was.chunk_ids if was else sorted(c.chunk_ids | more_chunks.get(i, set())),
                document_ids=was.document_ids if was else sorted(c.document_ids | more_documents.get(i, set())),
                fingerprint=was.fingerprint if was else fingerprint(c.fingerprint_parts()), engine=engine,
                embedding=None if vectors is None else vectors[i],
            ))
        raw = [math.log1p(len(e.chunk_ids)) + math.log1p(len(n)) for e, n in zip(entities, neighbours, strict=True)]
        top = max(raw, default=0.0) or 1.0
        for e, n, r in zip(entities, neighbours, raw, strict=True):
            e.degree, e.importance = len(n), round(r / top, 4)
        totals = ledger.meta.get("totals", [0, 0])
        ledger.meta["sig_entity"] = self.sig_entity
        ledger.meta["best"] = self.best
        return Outcome(
            entities=entities, relations=sorted(relations.values(), key=lambda r: r.id),
            write_relations=write_relations, removed_relations=removed_relations,
            write_claims=write_claims, removed_claims=removed_claims,
            old_claims=[old[c.id] for c in write_claims if c.id in old] + [old[c] for c in removed_claims],
            claims=in_order if ledger.fresh else None,
            chunks_redone=len(contributions), dropped=totals[0], loops=totals[1],
        )
