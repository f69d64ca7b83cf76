"""What is remembered of a page's evidence pack between compiles, and how its citations move to the new pack."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..engines.tasks import EvidenceItem
from .evidence import evidence_key


def pack_key(slug: str) -> str:
    return f"pack:{slug}"


def pack_value(evidence: list[EvidenceItem], ranked: list[EvidenceItem]) -> dict[str, list]:
    """What is remembered of a page's evidence: the items chosen (key, chunk) and every key offered."""
    keys = {id(e): evidence_key(e) for e in ranked}  # chosen items are ranked ones: one key each
    return {
        "chosen": [[keys.get(id(e)) or evidence_key(e), e.chunk_id] for e in evidence],
        "offered": sorted(set(keys.values())),
    }


@dataclass
class PackDelta:
    """How a page's evidence moved since it was written."""

    ref_of: dict[str, int | None]  # the page's footnote number -> ref now carrying it (None: gone)
    added: list[EvidenceItem]
    removed_chunks: list[str]


def pack_delta(previous: list[list[str]], evidence: list[EvidenceItem], cited_chunks: list[str]) -> PackDelta:
    """Pure: map the page's citations (footnote n cites cited_chunks[n-1]) onto the new pack.

    A cited chunk keeps a ref if an item of the pack still comes from it, or if an item the
    page was written from (same key) now comes from another chunk (an edit re-chunked it).
    """
    old_keys = {key for key, _chunk in previous}
    keys_of_chunk: dict[str, list[str]] = defaultdict(list)
    for key, chunk in previous:
        keys_of_chunk[chunk].append(key)
    ref_of_chunk: dict[str, int] = {}
    ref_of_key: dict[str, int] = {}
    for item in evidence:
        ref_of_chunk.setdefault(item.chunk_id, item.ref)
        ref_of_key.setdefault(evidence_key(item), item.ref)
    ref_of: dict[str, int | None] = {}
    gone: list[str] = []
    for n, chunk in enumerate(cited_chunks, start=1):
        ref = ref_of_chunk.get(chunk)
        if ref is None:
            ref = next((ref_of_key[k] for k in keys_of_chunk.get(chunk, ()) if k in ref_of_key), None)
        ref_of[str(n)] = ref
        if ref is None:
            gone.append(chunk)
    added = [item for item in evidence if evidence_key(item) not in old_keys]
    return PackDelta(ref_of, added, gone)
