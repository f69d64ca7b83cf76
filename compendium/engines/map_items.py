"""What a MAP reply keeps: each item placed in the chunk it comes from, and the items its chunk
does not hold or that were copied from the example taken out."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..statements import read_evidence, statement_problem
from ..support import SUPPORT_THRESHOLD, content_words, overlap
from .map_example import EXAMPLE_LABEL, EXAMPLE_NAMES
from .prompt_text import folded
from .replies import label_key
from .tasks import ExtractionBatch, ExtractionReply


def place_items(reply: ExtractionReply, batch: ExtractionBatch) -> int:
    """Give each item of a MAP reply the chunk it comes from; returns how many were moved.

    A claim whose text is found in exactly one chunk belongs to that chunk whatever label it
    carries: a document cannot make its sentences count for another chunk by writing a label
    into itself. An item with no label (or a heading where the label goes) takes the batch's
    one chunk, else the one chunk its name or text is found in; an item whose label names no
    chunk of the batch is placed only by its text. The example's label (c0) is never placed."""
    labels = [c.label for c in batch.chunks]
    if not labels:
        return 0
    known = {label_key(x) for x in labels}
    texts = {c.label: folded(c.text) for c in batch.chunks}
    moved = 0
    everything = " ".join(texts.values())
    copied = {n for n in EXAMPLE_NAMES if not re.search(rf"\b{re.escape(n)}\b", everything)}
    if copied:
        _drop_copied(reply, copied)

    def where(text: str) -> str | None:
        quoted = folded(text).rstrip(".")
        if len(quoted) < 3:
            return None
        found = [label for label, body in texts.items() if quoted in body]
        return found[0] if len(found) == 1 else None

    for claim in reply.claims:
        home = where(claim.text)
        if home is not None and claim.chunk != home and label_key(claim.chunk or "") != EXAMPLE_LABEL:
            claim.chunk, moved = home, moved + 1
    for item in _items(reply):
        key = label_key(item.chunk or "")
        if key in known or key == EXAMPLE_LABEL:
            continue
        if key is None and len(labels) == 1:  # no label at all: the batch has one chunk
            item.chunk, moved = labels[0], moved + 1
            continue
        text = getattr(item, "name", None) or getattr(item, "term", None) or getattr(item, "source", None) or ""
        home = where(text) or where(getattr(item, "text", "") or "")
        if home is not None:
            item.chunk, moved = home, moved + 1
    return moved


NAME_HELD = 0.5  # of a name's content words its chunk must hold


def drop_unheld(reply: ExtractionReply, batch: ExtractionBatch) -> int:
    """Take out the claims their chunk does not say (support.overlap under SUPPORT_THRESHOLD,
    REFINE's own check of a sentence against its evidence) and the names their chunk does not
    hold; returns how many went. A 1.5B model wrote "The Write-Ahead Log uses Raft, a consensus
    algorithm, to elect a leader." for a chunk on full-page writes, after the prompt's example:
    stored as a claim, it was the evidence that later supported the same sentence on a page."""
    words = {label_key(c.label): content_words(c.text) for c in batch.chunks}
    texts = {label_key(c.label): c.text for c in batch.chunks}
    read: dict[str, Any] = {}

    def held(label: str | None, text: str, share: float) -> bool:
        found = words.get(label_key(label or ""))
        said = content_words(text)
        return found is None or not said or overlap(said, found) >= share  # unplaced: label_problem judges

    def stated(label: str | None, text: str) -> bool:
        """The chunk says the claim in one statement, with its names and its actor: "The Harvard
        Mark I wrote the first compiler for Grace Hopper" holds every word and says the opposite."""
        key = label_key(label or "")
        if key not in texts:
            return True
        if key not in read:
            read[key] = read_evidence(texts[key])
        return statement_problem(text, read[key], SUPPORT_THRESHOLD) is None

    gone: dict[str, int] = reply._unheld

    def keep(items: list[Any], *fields: tuple[str, float], statement: bool = False) -> list[Any]:
        kept = []
        for item in items:
            if all(held(item.chunk, getattr(item, field), share) for field, share in fields) and (
                    not statement or stated(item.chunk, item.text)):
                kept.append(item)
            else:
                label = label_key(item.chunk or "") or item.chunk
                gone[label] = gone.get(label, 0) + 1
        return kept

    before = sum(gone.values())
    reply.claims = keep(reply.claims, ("text", SUPPORT_THRESHOLD), statement=True)
    reply.entities = keep(reply.entities, ("name", NAME_HELD))
    reply.concepts = keep(reply.concepts, ("term", NAME_HELD))
    reply.relations = keep(reply.relations, ("source", NAME_HELD), ("target", NAME_HELD))
    return sum(gone.values()) - before


def _drop_copied(reply: ExtractionReply, copied: set[str]) -> None:
    """Take out the items that name one of the example's names the batch does not hold."""
    def named(*values: str) -> bool:
        return any(folded(v) in copied for v in values if v)

    reply.entities = [e for e in reply.entities if not named(e.name)]
    reply.concepts = [c for c in reply.concepts if not named(c.term)]
    reply.relations = [r for r in reply.relations if not named(r.source, r.target)]
    reply.claims = [c for c in reply.claims if not (c.entities and all(named(x) for x in c.entities))
                    and folded(c.text) != "the cluster manager uses raft to elect a leader."]
    reply.topics = [t for t in reply.topics if not named(t.name)]


def _items(reply: ExtractionReply) -> Iterable[Any]:
    for group in (reply.entities, reply.concepts, reply.claims, reply.relations, reply.topics):
        yield from group


def labels_of(reply: ExtractionReply) -> list[str]:
    """The chunk label of every item of a MAP reply."""
    groups: tuple[list[Any], ...] = (reply.entities, reply.concepts, reply.claims, reply.relations, reply.topics)
    return [item.chunk for group in groups for item in group]
