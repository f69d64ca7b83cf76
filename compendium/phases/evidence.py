"""Evidence packs: the claims, relations and source excerpts a page is written from, under a budget."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..engines.tasks import EvidenceItem

EXCERPT_WORDS = 90
_SPACE = re.compile(r"\s+")


def estimate_tokens(text: str) -> int:
    """About four characters per token: close enough to budget a pack."""
    return max(1, (len(text) + 3) // 4)


@dataclass
class Source:
    """A chunk a piece of evidence comes from."""

    chunk_id: str
    text: str
    document: str = ""
    heading_path: list[str] = field(default_factory=list)
    about: list[str] = field(default_factory=list)  # slugs of entities with pages mentioned there


@dataclass
class Statement:
    """A claim or relation sentence and every chunk that supports it."""

    text: str
    chunk_ids: list[str]
    about: list[str] = field(default_factory=list)
    kind: str = "claim"  # claim (verbatim from its chunk) | relation (written from a graph edge)


def build_evidence(
    statements: Sequence[Statement],
    sources: dict[str, Source],
    names: Sequence[str],
    budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> list[EvidenceItem]:
    """Most supported first, numbered 1..N, within `budget` tokens.

    Identical statements from several chunks count once with their support summed; every
    source chunk also offers an excerpt around the first mention of one of `names`. Items
    that do not fit are skipped, so smaller ones later in line may still get in.
    """
    merged: dict[str, Statement] = {}
    for s in statements:
        key = _SPACE.sub(" ", s.text.strip().lower())
        if not key:
            continue
        if key in merged:
            known = merged[key]
            known.chunk_ids = list(dict.fromkeys([*known.chunk_ids, *s.chunk_ids]))
            known.about = list(dict.fromkeys([*known.about, *s.about]))
        else:
            merged[key] = Statement(s.text.strip(), list(dict.fromkeys(s.chunk_ids)), list(s.about), s.kind)

    claims_per_chunk: dict[str, int] = {}
    candidates: list[tuple[int, int, tuple[int, str], EvidenceItem]] = []
    for s in merged.values():
        known_chunks = [c for c in s.chunk_ids if c in sources]
        if not known_chunks:
            continue
        first = sources[known_chunks[0]]
        for c in known_chunks:
            claims_per_chunk[c] = claims_per_chunk.get(c, 0) + 1
        item = _item(s.text, first, len(known_chunks), list(dict.fromkeys([*s.about, *first.about])), s.kind)
        candidates.append((-len(known_chunks), 0, (0, first.chunk_id), item))
    for chunk_id, source in sources.items():
        excerpt = excerpt_around(source.text, names)
        if excerpt:
            # One passage is one source; among excerpts, those holding more of the page's claims first.
            rank = (-claims_per_chunk.get(chunk_id, 0), chunk_id)
            candidates.append((-1, 1, rank, _item(excerpt, source, 1, list(source.about), "excerpt")))

    chosen: list[EvidenceItem] = []
    left = budget
    for _support, _kind, _rank, item in sorted(candidates, key=lambda c: (c[0], c[1], c[2], c[3].text)):
        cost = count_tokens(item.text) + 8  # the ref number, document and headings around it
        if cost <= left:
            chosen.append(item)
            left -= cost
    for n, item in enumerate(chosen, start=1):
        item.ref = n
    return chosen


def _item(text: str, source: Source, support: int, about: list[str], kind: str) -> EvidenceItem:
    return EvidenceItem(
        kind=kind,
        ref=0,
        text=text,
        chunk_id=source.chunk_id,
        document=source.document,
        heading_path=list(source.heading_path),
        support=support,
        about=about,
    )


def excerpt_around(text: str, names: Sequence[str], words: int = EXCERPT_WORDS) -> str:
    """Up to `words` words of `text`, starting near the first mention of any name."""
    flat = _SPACE.sub(" ", text).strip()
    if not flat:
        return ""
    lower = flat.lower()
    hits = [i for i in (lower.find(n.lower()) for n in names if n.strip()) if i >= 0]
    start = 0
    if hits:
        at = min(hits)
        # Back up to the start of the sentence holding the mention.
        start = max(flat.rfind(". ", 0, at) + 2, 0) if flat.rfind(". ", 0, at) >= 0 else 0
    tokens = flat[start:].split(" ")
    excerpt = " ".join(tokens[:words])
    return excerpt + (" …" if len(tokens) > words else "")
