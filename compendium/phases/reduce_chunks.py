"""REDUCE chunk by chunk: what one chunk's extract adds to the ledger, and taking it out again.

A chunk contributes mentions (to its signatures' evidence), relation ends and claims resolved
among its own names first, then KB-wide. Its relation and claim results depend on the rest of
the KB only through the entity id of each of its mention signatures and the KB-wide best
entity of each name it does not name itself (its "foreign" names): while those stay the same,
the chunk's contribution does too, and only changed chunks are redone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from json.encoder import encode_basestring
from typing import Any

import xxhash

from ..storage.records import Claim, Extract
from .common_words import word_counts
from .reduce_state import BucketedMap, add_count, sig_key
from .resolution import Mention, collect_mentions, normalize_name
from .term_mentions import lowercase_counts


def claim_id(chunk_id: str, text: str) -> str:
    """short_id("claim", chunk_id, text), with the canonical JSON of two strings written directly
    (the general encoder is most of the cost over a KB's claims)."""
    return xxhash.xxh3_128_hexdigest(f'["claim",{encode_basestring(chunk_id)},{encode_basestring(text)}]'.encode())[:16]


def relation_id(source: str, target: str, type_: str) -> str:
    """short_id("rel", source, target, type_), written as claim_id is (a KB has a relation
    mention in most chunks, and most name a relation met before)."""
    return xxhash.xxh3_128_hexdigest(
        f'["rel",{encode_basestring(source)},{encode_basestring(target)},{encode_basestring(type_)}]'.encode()
    )[:16]


@lru_cache(maxsize=1 << 16)
def _sig(category: str, type_: str, name: str, aliases: tuple[str, ...]) -> str:
    return sig_key(category, type_, name, aliases)


def mention_sig(m: Mention) -> str:
    return _sig(m.category, m.type, m.name, tuple(m.aliases))


@dataclass
class Contribution:
    """What one chunk adds: relation mentions, claims (entity ids from its names only), names
    resolved KB-wide, and how many relation mentions were dropped or looped."""

    relations: list[tuple[str, str, str, str, str]] = field(default_factory=list)  # id, source, target, type, description
    claims: dict[str, Claim] = field(default_factory=dict)
    foreign: list[str] = field(default_factory=list)
    dropped: int = 0
    loops: int = 0


def contribution(ex: Extract, mentions: Sequence[Mention], sig_entity: dict[str, str], best: dict[str, str]) -> Contribution:
    """The chunk's relations and claims; `sig_entity`: signature -> entity id, `best`: name -> entity id."""
    own: dict[str, str] = {}
    for m in mentions:
        eid = sig_entity[mention_sig(m)]
        own.setdefault(normalize_name(m.name), eid)
        for surface in m.aliases:
            own.setdefault(normalize_name(surface), eid)
    foreign: set[str] = set()
    own_get, best_get = own.get, best.get

    def resolve(name: Any) -> str | None:
        norm = normalize_name(name) if isinstance(name, str) else ""
        found = own_get(norm)
        if found is None and norm:
            foreign.add(norm)
            found = best_get(norm)
        return found

    out = Contribution()
    relations = out.relations
    for rel in ex.relations:
        src, dst = resolve(rel.get("source")), resolve(rel.get("target"))
        if src is None or dst is None:
            out.dropped += 1
            continue
        if src == dst:
            out.loops += 1
            continue
        rtype = str(rel.get("type") or "related_to").strip()
        relations.append((relation_id(src, dst, rtype), src, dst, rtype, str(rel.get("description") or "").strip()))
    claims, chunk_id, document_id = out.claims, ex.id, ex.document_id
    for item in ex.claims:
        text = item.get("text")
        text = text.strip() if type(text) is str else str(text or "").strip()
        if not text:
            continue
        entity_ids: list[str] = []
        for n in item.get("entities") or ():
            # resolve(n), inline: a chunk's claims name ~20 entities
            norm = normalize_name(n) if isinstance(n, str) else ""
            eid = own_get(norm)
            if eid is None and norm:
                foreign.add(norm)
                eid = best_get(norm)
            if eid is not None and eid not in entity_ids:
                entity_ids.append(eid)
        cid = claim_id(chunk_id, text)
        # Positional (id, text, chunk_id, document_id, entity_ids): a KB has ~10 claims a chunk
        claims[cid] = Claim(cid, text, chunk_id, document_id, entity_ids)
    out.foreign = sorted(foreign)
    return out


def chunk_mentions(ex: Extract) -> list[Mention]:
    return collect_mentions([ex])


def add_mentions(sigs: BucketedMap, chunk_id: str, document_id: str, mentions: Sequence[Mention]) -> None:
    """The chunk's mentions into their signatures' evidence (position: order within the chunk)."""
    bucket = sigs.bucket
    for pos, m in enumerate(mentions):
        key = _sig(m.category, m.type, m.name, tuple(m.aliases))  # mention_sig(m)
        data = bucket(key)
        value = data.get(key)
        if value is None:
            value = data[key] = {"k": [m.category, m.type, m.name, list(m.aliases)], "c": {}, "n": {}, "d": {}, "s": {}}
        chunks = value["c"]
        if chunk_id not in chunks:
            chunks[chunk_id] = pos
            if document_id:
                documents = value["d"]
                documents[document_id] = documents.get(document_id, 0) + 1
        else:  # mentioned again in the chunk: counted (only counts above one are kept)
            again = value["n"]
            again[chunk_id] = again.get(chunk_id, 1) + 1
        if m.description:
            value["s"].setdefault(m.description, {})[chunk_id] = 1


def take_out_mentions(sigs: BucketedMap, chunk_id: str, entry: dict[str, Any]) -> None:
    """What add_mentions put in for this chunk, as its ledger entry recorded it."""
    document_id = entry["doc"]
    for key, descriptions in entry["m"]:
        value = sigs.get(key)
        if value is None or value["c"].pop(chunk_id, None) is None:
            continue
        value["n"].pop(chunk_id, None)
        if document_id:
            left = value["d"].get(document_id, 0) - 1
            if left > 0:
                value["d"][document_id] = left
            else:
                value["d"].pop(document_id, None)
        for d in descriptions:
            where = value["s"].get(d)
            if where is not None:
                where.pop(chunk_id, None)
                if not where:
                    del value["s"][d]
        if value["c"]:
            sigs.touch(key)
        else:
            sigs.pop(key)


def mention_entry(mentions: Sequence[Mention]) -> list[list[Any]]:
    """The ledger's record of a chunk's mentions: each signature with its descriptions there."""
    by_sig: dict[str, list[str]] = {}
    for m in mentions:
        descriptions = by_sig.setdefault(mention_sig(m), [])
        if m.description and m.description not in descriptions:
            descriptions.append(m.description)
    return [[k, d] for k, d in by_sig.items()]


def add_relations(part: BucketedMap, chunk_id: str, relations: Iterable[tuple[str, str, str, str, str]], sign: int) -> None:
    """Relation mentions into (sign 1) or out of (sign -1) the merged relations."""
    slot, mark = part.slot, part.mark
    for rid, src, dst, rtype, description in relations:
        b, data = slot(rid)
        value = data.get(rid)
        if value is None:
            if sign < 0:
                continue
            value = data[rid] = {"s": src, "d": dst, "t": rtype, "c": {}, "x": {}}
        mark(b)  # every path from here changes the relation
        add_count(value["c"], chunk_id, sign)
        if description:
            add_count(value["x"], description, sign)
        if not value["c"]:
            del data[rid]


def claim_counts(claims: Iterable[Claim]) -> tuple[Counter[str], Counter[str]]:
    """Words as written over the claims, and how often each lowercase word occurs in them."""
    text = "\n".join(c.text for c in claims)
    written = word_counts(text)
    return written, lowercase_counts(text, written)
