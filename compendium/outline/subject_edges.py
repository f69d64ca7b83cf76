"""Edges between the outline's subjects, from the relations between their entities."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence


def subject_edges(entity_of: dict[str, Sequence[str]],
                  relations: Iterable[tuple[str, str, float]]) -> list[tuple[str, str, float]]:
    """Edges between subjects from relations between their entities (a topic subject stands for
    its members)."""
    owners: dict[str, list[str]] = defaultdict(list)
    for subject, entities in entity_of.items():
        for e in entities:
            owners[e].append(subject)
    out = []
    for a, b, w in relations:
        for sa in owners.get(a, ()):
            for sb in owners.get(b, ()):
                if sa != sb:
                    out.append((sa, sb, w))
    return out
