"""Entity resolution for REDUCE: union-find, tier-1 groups and canonical clusters (the mentions and
their name keys are mentions.py's, the guard on tier-3 answers name_overlap.py's)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..fingerprint import short_id
from .mentions import CONCEPT, GENERIC_TYPES, Mention, collect_mentions, normalize_name, type_key

# Imported from here by the rest of REDUCE.
__all__ = [
    "CONCEPT", "Evidence", "Mention", "assign_ids", "build_groups", "clip", "collect_mentions",
    "connected_labels", "embedding_text", "exact_labels", "join_descriptions",
    "merge_evidence", "normalize_name", "split_pairs", "tier1_distinct", "tier1_labels", "type_key",
]

def connected_labels(n: int, a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray) -> np.ndarray:
    """Union-find over index pairs on arrays: each item's label is the smallest index of its set.

    Hooks roots onto smaller roots, then compresses paths by pointer jumping, until no pair
    spans two sets; a few vectorised rounds instead of a Python loop per pair.
    """
    parent = np.arange(n, dtype=np.int64)
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    while len(a):
        pa, pb = parent[a], parent[b]
        differ = pa != pb
        if not differ.any():
            break
        a, b, pa, pb = a[differ], b[differ], pa[differ], pb[differ]
        np.minimum.at(parent, np.maximum(pa, pb), np.minimum(pa, pb))
        while True:
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped
    return parent


def exact_labels(keys: Sequence[Iterable[str]]) -> np.ndarray:
    """Tier 1: items sharing any key end in one set. Returns a label per item."""
    first: dict[str, int] = {}
    a: list[int] = []
    b: list[int] = []
    for i, item_keys in enumerate(keys):
        for key in item_keys:
            j = first.setdefault(key, i)
            if j != i:
                a.append(i)
                b.append(j)
    return connected_labels(len(keys), a, b)


def _distinct(mentions: Sequence[Mention]) -> tuple[list[Mention], np.ndarray, np.ndarray]:
    """One mention per signature (in first-seen order), each mention's signature index, and
    how many mentions have each: a name is written the same way in thousands of chunks."""
    index: dict[tuple[str, str, str, tuple[str, ...]], int] = {}
    firsts: list[Mention] = []
    of = np.empty(len(mentions), dtype=np.int64)
    for i, m in enumerate(mentions):
        sig = (m.category, m.type, m.name, tuple(m.aliases))
        j = index.get(sig)
        if j is None:
            j = index[sig] = len(firsts)
            firsts.append(m)
        of[i] = j
    return firsts, of, np.bincount(of, minlength=len(firsts))


def tier1_labels(mentions: Sequence[Mention]) -> tuple[np.ndarray, int]:
    """Tier-1 group label per mention (the smallest index of its group's mentions), and how many
    concepts joined an entity of the same name.

    Mentions sharing a (normalised name or alias, type) key join; a concept whose term equals
    an entity's name joins that entity (the type that name is most often given). A name the
    text itself declares as an alias ("Write-Ahead Log (WAL)") lends its type to mentions of
    that name typed only generically ("concept"): extractors type a bare acronym and its
    expansion differently, but the text says they are one thing. Specific types never mix.
    Worked out once per distinct signature, weighted by how often it occurs.
    """
    distinct, of, counts = _distinct(mentions)
    first_mention = np.full(len(distinct), len(mentions), dtype=np.int64)
    np.minimum.at(first_mention, of, np.arange(len(mentions), dtype=np.int64))
    labels, joined = tier1_distinct(distinct, counts.tolist())
    return first_mention[labels][of], joined


def tier1_distinct(mentions: Sequence[Mention], weight: Sequence[int]) -> tuple[np.ndarray, int]:
    keys = [m.keys() for m in mentions]
    entity_types: dict[str, dict[str, int]] = {}
    for m, ks, w in zip(mentions, keys, weight, strict=True):
        if m.category != CONCEPT:
            for k in ks:
                kind, _, norm = k.partition("|")
                counts = entity_types.setdefault(norm, {})
                counts[kind] = counts.get(kind, 0) + w
    joined = 0
    for m, ks, w in zip(mentions, keys, weight, strict=True):
        if m.category == CONCEPT:
            norm = ks[0].partition("|")[2]
            counts = entity_types.get(norm)
            if counts:
                kind = min(counts, key=lambda t: (-counts[t], t))
                ks.append(f"{kind}|{norm}")
                joined += w
    # Names the text declares as aliases, with the specific type their declarations give.
    declared: dict[str, set[str]] = {}
    for m in mentions:
        if m.aliases and m.category != CONCEPT and type_key(m.type) not in GENERIC_TYPES:
            for n in (m.name, *m.aliases):
                declared.setdefault(normalize_name(n), set()).add(type_key(m.type))
    for m, ks in zip(mentions, keys, strict=True):
        if m.category == CONCEPT or type_key(m.type) in GENERIC_TYPES:
            for n in {normalize_name(x) for x in (m.name, *m.aliases)}:
                kinds = declared.get(n, set())
                if len(kinds) == 1:  # one unambiguous declaration: take its type
                    ks.append(f"{next(iter(kinds))}|{n}")
    return exact_labels(keys), joined


def _support(table: dict[str, set[str]], key: str) -> int:
    return len(table[key])


def _best_supported(table: dict[str, set[str]], seen: set[str]) -> list[str]:
    """The table's texts, most supported (then longest) first, one per case-insensitive form;
    forms already in `seen` are left out."""
    out: list[str] = []
    for text in sorted(table, key=lambda t: (-_support(table, t), -len(t), t)):
        if text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return out


@dataclass(slots=True)
class Evidence:
    """What a tier-1 group or a final cluster is built from: surface forms with their chunks."""

    names: dict[str, set[str]] = field(default_factory=dict)
    types: dict[str, set[str]] = field(default_factory=dict)
    descriptions: dict[str, set[str]] = field(default_factory=dict)
    chunk_ids: set[str] = field(default_factory=set)
    document_ids: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    norms: set[str] = field(default_factory=set)
    categories: set[str] = field(default_factory=set)

    def add(self, m: Mention) -> None:
        for surface in (m.name, *m.aliases):
            self.names.setdefault(surface, set()).add(m.chunk_id)
            self.norms.add(normalize_name(surface))
        if m.category != CONCEPT and m.type:
            self.types.setdefault(m.type, set()).add(m.chunk_id)
        if m.description:
            self.descriptions.setdefault(m.description, set()).add(m.chunk_id)
        self.chunk_ids.add(m.chunk_id)
        if m.document_id:
            self.document_ids.add(m.document_id)
        self.keys.update(m.keys())
        self.categories.add(m.category)

    def add_all(self, m: Mention, chunks: list[str], documents: set[str], descriptions: dict[str, list[str]]) -> None:
        """Mentions alike but for their chunk, document and description, as many add() calls."""
        for surface in (m.name, *m.aliases):
            self.names.setdefault(surface, set()).update(chunks)
            self.norms.add(normalize_name(surface))
        if m.category != CONCEPT and m.type:
            self.types.setdefault(m.type, set()).update(chunks)
        for description, where in descriptions.items():
            self.descriptions.setdefault(description, set()).update(where)
        self.chunk_ids.update(chunks)
        self.document_ids |= documents
        self.keys.update(m.keys())
        self.categories.add(m.category)

    def absorb(self, other: Evidence) -> None:
        for mine, theirs in ((self.names, other.names), (self.types, other.types), (self.descriptions, other.descriptions)):
            for key, chunks in theirs.items():
                mine.setdefault(key, set()).update(chunks)
        self.chunk_ids |= other.chunk_ids
        self.document_ids |= other.document_ids
        self.keys |= other.keys
        self.norms |= other.norms
        self.categories |= other.categories

    @property
    def category(self) -> str:
        return "entity" if "entity" in self.categories else CONCEPT

    @property
    def name(self) -> str:
        """The most supported surface form; ties: the longer, then alphabetical."""
        return min(self.names, key=lambda n: (-_support(self.names, n), -len(n), n))

    @property
    def type(self) -> str:
        if not self.types:
            return CONCEPT if self.category == CONCEPT else "thing"
        # A specific type wins over a generic one ("component" over "concept") whatever the support.
        return min(
            self.types,
            key=lambda t: (type_key(t) in GENERIC_TYPES, -_support(self.types, t), t),
        )

    @property
    def aliases(self) -> list[str]:
        """Other surface forms, most supported first, deduplicated case-insensitively."""
        return _best_supported(self.names, {self.name.casefold()})

    def ranked_descriptions(self) -> list[str]:
        """Distinct descriptions (case-insensitive), best supported first."""
        return _best_supported(self.descriptions, set())

    def identity(self) -> list[str]:
        """What a tier-3 decision about this group depends on (cache key material)."""
        short = self.ranked_descriptions()[:1]
        return [normalize_name(self.name), type_key(self.type), short[0] if short else ""]

    def fingerprint_parts(self) -> list[Any]:
        return [sorted(self.names), sorted(self.descriptions), sorted(self.chunk_ids)]


def build_groups(mentions: Sequence[Mention], labels: np.ndarray) -> tuple[list[Evidence], np.ndarray]:
    """One Evidence per distinct label, and each mention's index into that list.

    Mentions of one signature in one group are added together: their keys and name forms are
    worked out once, and only their chunks, documents and descriptions differ."""
    uniq, index = np.unique(labels, return_inverse=True)
    groups = [Evidence() for _ in range(len(uniq))]
    together: dict[tuple[Any, ...], tuple[Mention, list[str], set[str], dict[str, list[str]]]] = {}
    for m, g in zip(mentions, index.tolist(), strict=True):
        key = (g, m.category, m.type, m.name, *m.aliases)
        bulk = together.get(key)
        if bulk is None:
            bulk = together[key] = (m, [], set(), {})
        bulk[1].append(m.chunk_id)
        if m.document_id:
            bulk[2].add(m.document_id)
        if m.description:
            bulk[3].setdefault(m.description, []).append(m.chunk_id)
    for key, (m, chunks, documents, descriptions) in together.items():
        groups[key[0]].add_all(m, chunks, documents, descriptions)
    return groups, index


def merge_evidence(groups: Sequence[Evidence], labels: np.ndarray) -> tuple[list[Evidence], np.ndarray]:
    """Clusters from groups sharing a final label; returns clusters and each group's cluster."""
    uniq, index = np.unique(labels, return_inverse=True)
    clusters = [Evidence() for _ in range(len(uniq))]
    for g, c in zip(groups, index.tolist(), strict=True):
        clusters[c].absorb(g)
    return clusters, index


def embedding_text(group: Evidence) -> str:
    """What tier 2 embeds: the name alone.

    A description would dominate the offline embedder's vector: things sharing a description
    sentence auto-merged, and spelling variants with different descriptions fell below the
    review band. Types are a separate rule (split_pairs) and descriptions go to the tier-3 judge.
    """
    return group.name


def clip(text: str, max_chars: int) -> str:
    """Text cut at a word boundary to at most max_chars, marked with an ellipsis when cut."""
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1].rsplit(" ", 1)[0].rstrip(" ,;:.")
    return (cut or text[: max_chars - 1]) + "…"


def join_descriptions(descriptions: Sequence[str], max_chars: int) -> str:
    """The distinct descriptions, best first, joined while they fit in max_chars."""
    out: list[str] = []
    used = 0
    for d in descriptions:
        d = d if d.endswith((".", "!", "?")) else d + "."
        extra = len(d) + (1 if out else 0)
        if used + extra > max_chars:
            if not out:
                return clip(d, max_chars)
            continue
        out.append(d)
        used += extra
    return " ".join(out)


def split_pairs(
    sims: np.ndarray, same_type: np.ndarray, auto_merge: float, band: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Masks over tier-2 candidate pairs: merged at once, and sent to tier 3.

    Same-type pairs at or above auto_merge merge; pairs in the review band, and pairs of
    different types above its floor, are escalated (types differ: only a judge may merge).
    """
    low, high = band
    merge = (sims >= auto_merge) & same_type
    review = ~merge & (sims >= low) & ((sims <= high) | ~same_type)
    return merge, review


def canonical_key(cluster: Evidence) -> str:
    return f"{cluster.category}|{type_key(cluster.type)}|{normalize_name(cluster.name)}"


def assign_ids(clusters: Sequence[Evidence]) -> list[str]:
    """Entity ids from the clusters alone: each from its canonical key (category, type, name),
    suffixed when a larger cluster took it first. The same extracts give the same ids however
    they arrived, so a recompile names its entities as a compile from scratch does."""
    ids = [""] * len(clusters)
    taken: set[str] = set()
    order = sorted(range(len(clusters)), key=lambda i: (-len(clusters[i].chunk_ids), canonical_key(clusters[i]),
                                                        sorted(clusters[i].keys)))
    for i in order:
        key = canonical_key(clusters[i])
        candidate, n = short_id("entity", key), 1
        while candidate in taken:
            n += 1
            candidate = short_id("entity", key, n)
        ids[i] = candidate
        taken.add(candidate)
    return ids


