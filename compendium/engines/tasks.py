"""What the phases ask of an engine and what it answers: the seam between phases and engines.

Replies that come from a model are pydantic models, so their JSON schema is what we send as
the structured-output format and what we validate the reply against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict


class Reply(BaseModel):
    # Every field required and no extras: what strict structured outputs accept.
    model_config = ConfigDict(extra="ignore")


# ---- MAP ---------------------------------------------------------------------------------


@dataclass(slots=True)
class ChunkInput:
    label: str  # short local label used in the prompt ("c1"), mapped back to the chunk id
    text: str
    heading_path: list[str] = field(default_factory=list)
    document_title: str = ""
    blocks: list[list[Any]] = field(default_factory=list)  # [kind, start, end] in text


@dataclass(slots=True)
class ExtractionBatch:
    chunks: list[ChunkInput]


class EntityItem(Reply):
    chunk: str
    name: str
    type: str
    description: str
    aliases: list[str]


class ConceptItem(Reply):
    chunk: str
    term: str
    definition: str


class ClaimItem(Reply):
    chunk: str
    text: str
    entities: list[str]


class RelationItem(Reply):
    chunk: str
    source: str
    target: str
    type: str
    description: str
    strength: float


class TopicItem(Reply):
    chunk: str
    name: str


class ExtractionReply(Reply):
    entities: list[EntityItem]
    concepts: list[ConceptItem]
    claims: list[ClaimItem]
    relations: list[RelationItem]
    topics: list[TopicItem]


# ---- REDUCE ------------------------------------------------------------------------------


@dataclass(slots=True)
class EntitySketch:
    name: str
    type: str
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)  # a few source sentences


@dataclass(slots=True)
class PairQuestion:
    label: str  # "p1"
    a: EntitySketch
    b: EntitySketch
    similarity: float = 0.0


class PairDecision(Reply):
    pair: str
    same: bool


class PairReply(Reply):
    decisions: list[PairDecision]


@dataclass(slots=True)
class DescriptionRequest:
    name: str
    type: str
    descriptions: list[str]
    max_chars: int


class DescriptionReply(Reply):
    description: str


# ---- PLAN --------------------------------------------------------------------------------


@dataclass(slots=True)
class MatchQuestion:
    label: str
    candidate: EntitySketch
    page_title: str
    page_summary: str
    similarity: float = 0.0


class MatchDecision(Reply):
    question: str
    same: bool


class MatchReply(Reply):
    decisions: list[MatchDecision]


@dataclass(slots=True)
class TopicRequest:
    members: list[EntitySketch]  # most important first
    claims: list[str] = field(default_factory=list)
    # Source headings the central members sit under, with how many of those members each
    # covers, most first: what the documents themselves call this subject.
    headings: list[tuple[str, int]] = field(default_factory=list)
    taken_titles: list[str] = field(default_factory=list)  # titles other topics already carry


class TopicReply(Reply):
    title: str
    summary: str


# ---- REFINE ------------------------------------------------------------------------------


@dataclass(slots=True)
class EvidenceItem:
    ref: int  # the number the page cites it by: [^ref]
    text: str  # a claim sentence or a chunk excerpt
    chunk_id: str
    document: str = ""
    heading_path: list[str] = field(default_factory=list)
    support: int = 1
    about: list[str] = field(default_factory=list)  # slugs of the entities it mentions
    # claim | excerpt: text taken verbatim from the chunk; relation: a summary of a graph edge
    kind: str = "claim"


@dataclass(slots=True)
class LinkTarget:
    slug: str
    title: str


@dataclass(slots=True)
class PageRequest:
    slug: str
    title: str
    kind: str  # entity | concept | topic
    description: str
    aliases: list[str]
    evidence: list[EvidenceItem]
    links: list[LinkTarget]
    existing_markdown: str = ""  # UPDATE: the page as it stands
    removed_refs: list[str] = field(default_factory=list)  # UPDATE: chunk ids no longer valid
    max_tokens: int = 1200
    # UPDATE: refs of the evidence items new since the page was written. When set, the existing
    # page already cites the other items by these refs, so an LLM is sent only the new ones;
    # an extractive writer may ignore it and rebuild from `evidence`.
    new_refs: list[int] = field(default_factory=list)


class PageAddition(Reply):
    page: str  # the label of a page in a grouped update ("u1")
    markdown: str  # the new sentences only, under the "## Heading" they belong to


class PageAdditionsReply(Reply):
    pages: list[PageAddition]
