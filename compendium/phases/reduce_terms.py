"""Defined terms for REDUCE: which clusters are terms, and the claims each one gathers, kept per
spelling in the ledger and brought up to date from the claims of the chunks redone.

A term's claims are those naming one of its spellings as whole words, anywhere in the KB. A new
spelling is looked for among the other chunks' claims only when the ledger's word counts say
some claim outside the redone chunks can name it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..storage.base import Store
from ..storage.records import Claim
from .common_words import spellings_from_counts
from .reduce_state import Ledger, get_in_batches
from .resolution import CONCEPT, Evidence
from .term_mentions import (
    SpellingHits,
    could_name,
    is_term,
    plural_forms,
    spelling_hits,
    term_window,
)


@dataclass
class Term:
    """A defined term: its entity, spellings, whether only ever met as code, and its claims."""

    entity_id: str
    spellings: list[str]
    code_only: bool
    window: list[list[str]] = field(default_factory=list)  # [claim id, chunk id, document id], in id order

    def same_as(self, other: dict[str, Any] | None) -> bool:
        return other is not None and other["s"] == self.spellings and other["k"] == self.code_only

    def to_json(self) -> dict[str, Any]:
        return {"e": self.entity_id, "s": self.spellings, "k": self.code_only, "w": self.window}


def defined_terms(ledger: Ledger, clusters: Sequence[Evidence], ids: Sequence[str]) -> tuple[dict[int, str], list[Term], dict[int, int]]:
    """The corpus's lowercase spelling of capitalised common words, and the defined terms in
    cluster order (with each term's cluster)."""
    words = ledger.words
    # "Exception" where the corpus writes "exception": the entity takes the corpus's spelling,
    # keeping the capitalised one first among its aliases (PLAN reads it as a common word).
    # A defined term's other spellings count too: the glossary's "Tablespace" in a cluster named
    # after the TABLESPACE keyword is the "tablespace" of the prose.
    other = [(i, n) for i, c in enumerate(clusters) if CONCEPT in c.categories for n in c.names if n != c.name]
    found = spellings_from_counts([c.name for c in clusters] + [n for _, n in other], lambda w: words.get(w, 0))
    spelled = {i: n for i, n in found.items() if i < len(clusters)}
    also: dict[int, set[str]] = {}
    for k, n in found.items():
        if k >= len(clusters):
            also.setdefault(other[k - len(clusters)][0], set()).add(n)
    # Defined terms in the claims of every chunk, not only the ones MAP named them in. A term
    # only ever written as inline code (`current`, `always`) is a name only where so written.
    terms: list[Term] = []
    cluster_of: dict[int, int] = {}
    for i, c in enumerate(clusters):
        if not c.descriptions:
            continue
        # A name defined as code ("`Attributes`: The attributes of an Element.") is a term only
        # as written: the prose's lowercase word ("all of the element's attributes") is not it.
        corpus = () if _named_as_code(c) else (spelled.get(i, ""), *also.get(i, ()))
        spellings = sorted({n.lower() for n in (*c.names, *corpus) if n.islower() and is_term(n)})
        if spellings:
            cluster_of[len(terms)] = i
            terms.append(Term(ids[i], spellings, CONCEPT not in c.categories))
    return spelled, terms, cluster_of

def _named_as_code(cluster: Evidence) -> bool:
    """Whether a description of the cluster opens with its name, as written, in code marks
    ("`Attributes`: ...")."""
    name = cluster.name
    return any(d.startswith((f"`{name}`", f"`{name}<")) for d in cluster.descriptions)


async def gather_terms(ledger: Ledger, store: Store | None, terms: list[Term], new_claims: list[Claim],
                   old_claims: list[Claim], new_claim_words: Counter[str], gone_claim_words: Counter[str],
                   ) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Each term's window of claims, brought up to date from the redone chunks' claims (new and
    as stored). Returns claim id -> the term entities it carries, and claim id -> its chunk for
    the claims whose terms changed."""
    touched_words = set(new_claim_words) | set(gone_claim_words)
    known = set(ledger.meta.get("spellings", []))
    wanted = {s for t in terms for s in t.spellings}
    old_terms = {t["e"]: t for t in ledger.meta.get("terms", [])}

    def touched(s: str) -> bool:
        return any(f in touched_words for w in s.split() for f in plural_forms(w))

    redo_terms = [t for t in terms if not t.same_as(old_terms.get(t.entity_id)) or any(
        s not in known or touched(s) for s in t.spellings)]
    load = sorted({s for t in redo_terms for s in t.spellings} | {s for s in known - wanted})
    if store is not None and not ledger.fresh:
        await ledger.spellings.load(store, load)
    hits: dict[str, SpellingHits] = {}
    fresh = sorted({s for t in redo_terms for s in t.spellings if s not in known})
    for s in sorted({s for t in redo_terms for s in t.spellings} & known):
        value = ledger.spellings.get(s)
        h = hits[s] = SpellingHits.from_json(value) if value else SpellingHits()
        if touched(s):
            for c in old_claims:
                h.add(c.id, c.text, s, -1)
            for c in new_claims:
                h.add(c.id, c.text, s, 1)
    if fresh:
        redone = {c.chunk_id for c in old_claims} | {c.chunk_id for c in new_claims}
        # Claims of chunks not redone can name a new spelling only if its words occur outside them.
        outside = lambda w: ledger.claim_words.get(w, 0) - new_claim_words.get(w, 0)  # noqa: E731
        scan = [s for s in fresh if could_name(s, outside)]
        pool: list[Claim] = list(new_claims)
        if scan and store is not None:
            pool += [c async for c in store.scan(Claim) if c.chunk_id not in redone]  # type: ignore[misc]
        hits.update(spelling_hits(fresh, pool))
    for s in known - wanted:
        ledger.spellings.pop(s)
    for s, h in hits.items():
        ledger.spellings.set(s, h.to_json())
    ledger.meta["spellings"] = sorted(wanted)

    # Windows: redone terms from their hits, the others as stored.
    where = {c.id: [c.chunk_id, c.document_id] for c in new_claims}
    for t in old_terms.values():
        for cid, chunk, doc in t["w"]:
            where.setdefault(cid, [chunk, doc])
    redo_ids = {t.entity_id for t in redo_terms}
    for t in terms:
        if t.entity_id in redo_ids:
            t.window = [[c] for c in term_window(t.spellings, hits, t.code_only)]
        else:
            t.window = [list(w) for w in old_terms[t.entity_id]["w"]]
    unknown = sorted({w[0] for t in terms for w in t.window if w[0] not in where})
    for c in await get_in_batches(store, Claim, unknown):
        where[c.id] = [c.chunk_id, c.document_id]
    for t in terms:
        t.window = [[w[0], *where[w[0]]] for w in t.window]
    ledger.meta["terms"] = [t.to_json() for t in terms]

    def carried(windows: Sequence[dict[str, Any]] | Sequence[Term]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for t in windows:
            eid, window = (t.entity_id, t.window) if isinstance(t, Term) else (t["e"], t["w"])
            for w in window:
                out.setdefault(w[0], []).append(eid)
        return out

    before, after = carried(list(old_terms.values())), carried(terms)
    chunk_of = {w[0]: w[1] for t in (*old_terms.values(), *(t.to_json() for t in terms)) for w in t["w"]}
    return after, {c: chunk_of[c] for c in {*before, *after} if before.get(c) != after.get(c)}
