"""MAP batches: pack chunks into labelled batches and turn a reply back into per-chunk items."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol, TypeVar

from ..engines.replies import LabelReader
from ..engines.tasks import ChunkInput, ExtractionBatch, ExtractionReply
from ..spacing import single_spaced
from ..storage.records import Chunk
from ..templates.schema import Template

MAX_NAME_CHARS = 100

_UUID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.I)
_HEX = re.compile(r"^(0x)?[0-9a-f]+$", re.I)
_NUMBER = re.compile(r"^[+-]?[\d.,\s%]+$")
_LABEL = re.compile(r"^c\d+$", re.I)  # a chunk label echoed back as a name
_HAS_WORD = re.compile(r"\w", re.UNICODE)


def pack_batches(chunks: Sequence[Chunk], max_chunks: int, max_tokens: int) -> list[list[Chunk]]:
    """Pack chunks in (document, ordinal) order into the fewest batches within the count and
    token bounds; among packings with that fewest number, the one splitting fewest documents
    across batches (the model sees a document's chunks together where it costs no extra call).
    A chunk larger than `max_tokens` travels alone.

    Dynamic programming over contiguous cuts: O(n × max_chunks).
    """
    ordered = sorted(chunks, key=lambda c: (c.document_id, c.ordinal, c.id))
    n = len(ordered)
    if n == 0:
        return []
    sizes = [max(c.tokens, 1) for c in ordered]
    # A cut before position i splits a document when i continues the previous chunk's document.
    splits = [0] + [int(ordered[i].document_id == ordered[i - 1].document_id) for i in range(1, n)]
    best: list[tuple[int, int]] = [(0, 0)] + [(n + 1, n + 1)] * n  # (batches, split documents)
    cut = [0] * (n + 1)
    for end in range(1, n + 1):
        used = 0
        for start in range(end - 1, max(end - max_chunks, 0) - 1, -1):
            used += sizes[start]
            if used > max_tokens and start < end - 1:
                break
            batches, split = best[start]
            candidate = (batches + 1, split + (splits[start] if start else 0))
            if candidate < best[end]:
                best[end], cut[end] = candidate, start
            if used > max_tokens:  # an oversized chunk alone
                break
    bounds = []
    end = n
    while end:
        bounds.append((cut[end], end))
        end = cut[end]
    return [ordered[a:b] for a, b in reversed(bounds)]


def label_batch(chunks: Sequence[Chunk], titles: dict[str, str]) -> tuple[ExtractionBatch, dict[str, str]]:
    """The engine's view of a batch (chunks labelled c1..cN) and the label -> chunk id map."""
    inputs: list[ChunkInput] = []
    labels: dict[str, str] = {}
    for n, chunk in enumerate(chunks, start=1):
        label = f"c{n}"
        labels[label] = chunk.id
        inputs.append(
            ChunkInput(
                label=label,
                text=chunk.text,
                heading_path=list(chunk.heading_path),
                document_title=titles.get(chunk.document_id, ""),
                blocks=chunk.blocks,
            )
        )
    return ExtractionBatch(chunks=inputs), labels


@lru_cache(maxsize=1 << 14)
def is_real_name(name: str) -> bool:
    """False for names that name nothing: empty, ids, hashes, numbers, punctuation, too long.

    Cached: a batch repeats its entity names in every claim and relation."""
    text = name.strip()
    if not text or len(text) > MAX_NAME_CHARS or not _HAS_WORD.search(text):
        return False
    if _UUID.match(text) or _LABEL.match(text) or _NUMBER.match(text):
        return False
    if _HEX.match(text) and (len(text) >= 16 or (len(text) >= 8 and any(ch.isdigit() for ch in text))):
        return False
    return not all(ch == "_" or not ch.isalnum() for ch in text)


@dataclass
class ChunkItems:
    """What MAP keeps for one chunk, as the plain dicts stored on its Extract."""

    entities: list[dict[str, Any]] = field(default_factory=list)
    concepts: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    dropped: int = 0
    retyped: int = 0


@dataclass
class SplitCounts:
    dropped: int = 0
    retyped: int = 0
    unknown_labels: int = 0
    items: int = 0  # items the reply gave
    capped: int = 0  # of the dropped: over max_items_per_chunk (the model said too much, not wrong)


def type_resolver(template: Template):  # type: ignore[no-untyped-def]
    """A function mapping a model's entity type to a declared one: (type, was_retyped)."""
    declared = [t.name for t in template.entity_types]
    if not declared:
        return lambda value: ((value.strip() or "other"), False)
    by_lower = {name.lower(): name for name in declared}
    fallback = by_lower.get("concept") or by_lower.get("other") or declared[0]

    def resolve(value: str) -> tuple[str, bool]:
        found = by_lower.get(value.strip().lower())
        return (found, False) if found else (fallback, True)

    return resolve


def _clean_str(value: Any) -> str:
    if value is None:
        return ""
    # Replies are almost all str already: skip str() for them (called per field of every item).
    return single_spaced(value if type(value) is str else str(value))


class _Cleaned(dict[str, str]):
    """raw text -> its cleaned form, each worked out once: a batch's items name the same
    entities, types and labels again and again (in claims, relations, aliases)."""

    def __missing__(self, raw: str) -> str:
        value = self[raw] = _clean_str(raw)
        return value


class _Ends(dict[str, tuple[str, str]]):
    """raw relation end -> (its cleaned form, lowercased)."""

    def __init__(self, cleaned: _Cleaned):
        super().__init__()
        self._cleaned = cleaned

    def __missing__(self, raw: str) -> tuple[str, str]:
        name = self._cleaned[raw]
        value = self[raw] = (name, name.lower())
        return value


class _RealNames(dict[str, str | None]):
    """raw name -> its cleaned form when it names something (is_real_name), else None."""

    def __init__(self, cleaned: _Cleaned):
        super().__init__()
        self._cleaned = cleaned

    def __missing__(self, raw: str) -> str | None:
        name = self._cleaned[raw]
        value = self[raw] = name if is_real_name(name) else None
        return value


class _Labelled(Protocol):
    chunk: Any  # the label the model wrote


_Item = TypeVar("_Item", bound=_Labelled)


class _Slots(dict[Any, "_Slot | None"]):
    """label as written -> its chunk's slot (None: it names no chunk of the batch), each read
    once: a batch's items name its few labels again and again."""

    def __init__(self, reader: LabelReader, labels: dict[str, str], by_chunk: dict[str, _Slot]):
        super().__init__()
        self._reader, self._labels, self._by_chunk = reader, labels, by_chunk
        self.unknown = 0  # items naming no chunk of the batch

    def __missing__(self, label: Any) -> _Slot | None:
        found = self._reader.read(label) if isinstance(label, str) else None
        slot = self[label] = self._by_chunk[self._labels[found]] if found is not None else None
        return slot

    def placed(self, items: Iterable[_Item]) -> Iterator[tuple[_Item, _Slot]]:
        """Each item with its chunk's slot; one naming no chunk of the batch is counted in
        `unknown` and left out."""
        for item in items:
            slot = self[item.chunk]
            if slot is None:
                self.unknown += 1
            else:
                yield item, slot


@dataclass
class _Slot:
    """One chunk's items while a reply is split, with what the checks remember about it."""

    items: ChunkItems
    entities: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (lower name, type) ->
    terms: set[str] = field(default_factory=set)  # lowercased
    known: set[str] | None = None  # names relations may join, once its entities are all in


def split_reply(reply: ExtractionReply, labels: dict[str, str], template: Template) -> tuple[dict[str, ChunkItems], SplitCounts]:
    """Validate a batch's reply and give each chunk id its items (every labelled chunk gets one)."""
    out = {chunk_id: ChunkItems() for chunk_id in labels.values()}
    counts = SplitCounts()
    resolve = type_resolver(template)
    reader = LabelReader(labels)  # "[c3]", "C3", "chunk c3", "c3:" all name c3
    cleaned = _Cleaned()
    real = _RealNames(cleaned)
    types: dict[str, tuple[str, bool]] = {}  # raw entity type -> (declared type, retyped)
    slot_of = _Slots(reader, labels, {chunk_id: _Slot(items) for chunk_id, items in out.items()})

    for item, slot in slot_of.placed(reply.entities):
        items = slot.items
        name = real[item.name]
        if name is None:
            items.dropped += 1
            continue
        raw_type = item.type
        if raw_type not in types:
            types[raw_type] = resolve(cleaned[raw_type])
        etype, retyped = types[raw_type]
        items.retyped += retyped
        lower = name.lower()
        aliases = [a for a in map(real.__getitem__, item.aliases) if a is not None and a.lower() != lower] if item.aliases else []
        key = (lower, etype)
        seen = slot.entities
        if key in seen:  # the same entity twice in one chunk: merge, do not double count
            known = seen[key]
            known["aliases"] = sorted({*known["aliases"], *aliases}, key=str.lower)
            if not known["description"]:
                known["description"] = _clean_str(item.description)
            continue
        entity = {"name": name, "type": etype, "description": _clean_str(item.description), "aliases": aliases}
        seen[key] = entity
        items.entities.append(entity)

    for concept, slot in slot_of.placed(reply.concepts):
        term = real[concept.term]
        if term is None or term.lower() in slot.terms:
            slot.items.dropped += 1
            continue
        slot.terms.add(term.lower())
        slot.items.concepts.append({"term": term, "definition": _clean_str(concept.definition)})

    for claim, slot in slot_of.placed(reply.claims):
        text = _clean_str(claim.text)
        if not text:
            slot.items.dropped += 1
            continue
        # Names that name something, each once (`real` gives None for the others, never "").
        names = list(dict.fromkeys(filter(None, map(real.__getitem__, claim.entities))))
        slot.items.claims.append({"text": text, "entities": names})

    ends = _Ends(cleaned)
    for relation, slot in slot_of.placed(reply.relations):
        items = slot.items
        known = slot.known
        if known is None:  # its entities are all in by now
            known = slot.known = _known_names(items)
        (source, source_key), (dest, dest_key) = ends[relation.source], ends[relation.target]
        if source_key not in known or dest_key not in known or source_key == dest_key:
            items.dropped += 1
            continue
        strength = float(relation.strength) if relation.strength == relation.strength else 1.0  # NaN guard
        strength = 0.0 if strength < 0.0 else 10.0 if strength > 10.0 else strength  # as min(max(s, 0), 10)
        items.relations.append(
            {
                "source": source,
                "target": dest,
                "type": cleaned[relation.type] or "related_to",
                "description": _clean_str(relation.description),
                "strength": strength,
            }
        )

    for topic, slot in slot_of.placed(reply.topics):
        name = real[topic.name]
        if name is None or name in slot.items.topics:
            slot.items.dropped += 1
            continue
        slot.items.topics.append(name)

    counts.items = sum(map(len, (reply.entities, reply.concepts, reply.claims, reply.relations, reply.topics)))
    counts.unknown_labels = counts.dropped = slot_of.unknown
    cap = template.map.max_items_per_chunk
    for items in out.values():
        before = items.dropped
        _cap(items, cap)
        counts.capped += items.dropped - before
        counts.dropped += items.dropped
        counts.retyped += items.retyped
    return out, counts


def _known_names(items: ChunkItems) -> set[str]:
    # Relations may join the chunk's entities (by name or alias) and its concepts.
    names = {e["name"].lower() for e in items.entities}
    names.update(a.lower() for e in items.entities for a in e["aliases"])
    names.update(c["term"].lower() for c in items.concepts)
    return names


def _cap(items: ChunkItems, cap: int) -> None:
    """Keep at most `cap` items of each kind per chunk (claims are what pages are written from,
    so a dense chunk's entities must not crowd them out)."""
    for kind in ("entities", "concepts", "relations", "claims"):
        kept: list[dict[str, Any]] = getattr(items, kind)
        if len(kept) > cap:
            items.dropped += len(kept) - cap
            setattr(items, kind, kept[:cap])
    # Relations must still point at kept entities after the cap.
    known = _known_names(items)
    valid = [r for r in items.relations if r["source"].lower() in known and r["target"].lower() in known]
    items.dropped += len(items.relations) - len(valid)
    items.relations = valid
