"""What a page is planned from: its subject, and its entry in the page plan."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Subject:
    """Something that earns a page: a canonical entity or concept, or a topic."""

    id: str
    title: str
    kind: str  # entity | concept | topic
    type: str = ""
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    entity_ids: list[str] = field(default_factory=list)  # itself, or a topic's members
    chunk_ids: list[str] = field(default_factory=list)
    importance: float = 0.0


@dataclass
class PagePlan:
    """One page's entry in the plan; stored as a dict so REFINE can resume after a crash."""

    slug: str
    title: str
    kind: str
    subject_id: str
    action: str
    reason: str = ""
    entity_ids: list[str] = field(default_factory=list)
    claim_ids: list[str] = field(default_factory=list)
    relation_ids: list[str] = field(default_factory=list)
    chunk_ids: list[str] = field(default_factory=list)  # sorted (REFINE looks chunks up by bisection)
    links: list[str] = field(default_factory=list)
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    evidence_fingerprint: str = ""
    inputs: str = ""  # what the evidence fingerprint was made from, with claim ids for claims
    furniture: list[str] = field(default_factory=list)  # text keys of sentences its passages leave out
    moved_from: str = ""  # the slug of the page this one is updated from (its subject's title changed)


    def to_dict(self) -> dict[str, Any]:
        # Shallow: fields are strings and lists of strings (asdict's deep copy is slow at scale).
        return {k: list(v) if isinstance(v, list) else v for k, v in vars(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PagePlan:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


def sorted_unique(ids: Sequence[str]) -> list[str]:
    """sorted(set(ids)), with a pass in C when they already are (REDUCE stores an entity's
    chunks so; a set and sort of 100k ids is what it saves)."""
    if all(map(operator.lt, ids, itertools.islice(ids, 1, None))):
        return list(ids)
    return sorted(set(ids))
