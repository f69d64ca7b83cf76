"""What the phases ask of an engine and what it answers: the seam between phases and engines.

Replies that come from a model are pydantic models, so their JSON schema is what we send as
the structured-output format and what we validate the reply against.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator


class Reply(BaseModel):
    # Extras ignored. The schema sent marks every field required (strict structured outputs
    # ask for it, and a grammar then writes them all); a default here only lets a reply that
    # left a field out (json_object or plain servers) still be read.
    model_config = ConfigDict(extra="ignore")


def bound(items: int | None = None, chars: int | None = None) -> Any:
    """Schema bounds a model sees (maxItems, maxLength), so a grammar cannot loop in a list or a
    string; not enforced when reading (MAP caps items per chunk itself)."""
    extra: dict[str, int] = {}
    if items is not None:
        extra["maxItems"] = items
    if chars is not None:
        extra["maxLength"] = chars
    return extra


NAME_CHARS = 100
SENTENCE_CHARS = 400


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


# "chunk" may be left out: the engine infers it when the batch has one chunk, or when the
# item's text is found in exactly one chunk (MAP). The lists' maxItems are per batch; the
# engine raises them for a batch of several chunks (extraction_schema).
class EntityItem(Reply):
    chunk: str = Field("", json_schema_extra=bound(chars=12))
    name: str = Field(json_schema_extra=bound(chars=NAME_CHARS))
    type: str = Field("", json_schema_extra=bound(chars=40))
    description: str = Field("", json_schema_extra=bound(chars=SENTENCE_CHARS))
    aliases: list[str] = Field(default_factory=list, json_schema_extra=bound(items=5))


class ConceptItem(Reply):
    chunk: str = Field("", json_schema_extra=bound(chars=12))
    term: str = Field(json_schema_extra=bound(chars=NAME_CHARS))
    definition: str = Field("", json_schema_extra=bound(chars=SENTENCE_CHARS))


class ClaimItem(Reply):
    chunk: str = Field("", json_schema_extra=bound(chars=12))
    text: str = Field(json_schema_extra=bound(chars=SENTENCE_CHARS))
    entities: list[str] = Field(default_factory=list, json_schema_extra=bound(items=6))


class RelationItem(Reply):
    chunk: str = Field("", json_schema_extra=bound(chars=12))
    source: str = Field(json_schema_extra=bound(chars=NAME_CHARS))
    target: str = Field(json_schema_extra=bound(chars=NAME_CHARS))
    type: str = Field("related_to", json_schema_extra=bound(chars=40))
    description: str = Field("", json_schema_extra=bound(chars=SENTENCE_CHARS))
    strength: float = 5.0


class TopicItem(Reply):
    chunk: str = Field("", json_schema_extra=bound(chars=12))
    name: str = Field(json_schema_extra=bound(chars=NAME_CHARS))


# Items per list of one chunk, as the schema states them (a batch of n chunks: n times these).
ITEMS_PER_CHUNK = {"entities": 12, "concepts": 8, "claims": 12, "relations": 10, "topics": 3}
# A list item a model may write as a bare string: the field the string fills.
_STRING_ITEM = {"entities": "name", "concepts": "term", "claims": "text", "topics": "name"}


_KINDS = ("entities", "concepts", "claims", "relations", "topics")


def _ungrouped(data: dict[str, Any]) -> dict[str, Any]:
    """A reply grouped by chunk ({"c1": {"claims": [...], "entities": [...]}, ...}, the shape a
    model of small context is asked for: model_profile.grouped_schema) as flat lists whose items
    name their group's chunk. A flat reply is returned as it is."""
    if not data or any(kind in data for kind in _KINDS) or not all(isinstance(v, dict) for v in data.values()):
        return dict(data)
    out: dict[str, Any] = {kind: [] for kind in _KINDS}
    for label, group in data.items():
        for kind in _KINDS:
            items = group.get(kind)
            for item in items if isinstance(items, list) else []:
                if isinstance(item, str) and kind in _STRING_ITEM and item.strip():
                    item = {_STRING_ITEM[kind]: item}
                if isinstance(item, dict):
                    out[kind].append({**item, "chunk": label})
    return out


class ExtractionReply(Reply):
    entities: list[EntityItem] = Field(default_factory=list, json_schema_extra=bound(items=ITEMS_PER_CHUNK["entities"]))
    concepts: list[ConceptItem] = Field(default_factory=list, json_schema_extra=bound(items=ITEMS_PER_CHUNK["concepts"]))
    claims: list[ClaimItem] = Field(default_factory=list, json_schema_extra=bound(items=ITEMS_PER_CHUNK["claims"]))
    relations: list[RelationItem] = Field(default_factory=list, json_schema_extra=bound(items=ITEMS_PER_CHUNK["relations"]))
    topics: list[TopicItem] = Field(default_factory=list, json_schema_extra=bound(items=ITEMS_PER_CHUNK["topics"]))
    # Items the engine took out because their chunk does not hold them, by chunk label (MAP
    # counts them as dropped; see map_items.drop_unheld). Not part of the reply's schema.
    _unheld: dict[str, int] = PrivateAttr(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        """Read what small models write: a bare string for an item ("topics": ["WAL"]), null
        for a field they mean to leave out, a list given as null. Items that are neither a
        string nor an object are dropped."""
        if not isinstance(data, dict):
            return data
        out = _ungrouped(data)
        for kind in _KINDS:
            items = out.get(kind)
            if items is None:
                out.pop(kind, None)
                continue
            if not isinstance(items, list):
                continue
            fixed = []
            for item in items:
                if isinstance(item, str) and kind in _STRING_ITEM:
                    if item.strip():
                        fixed.append({_STRING_ITEM[kind]: item})
                elif isinstance(item, dict):
                    fixed.append({k: v for k, v in item.items() if v is not None})
                elif isinstance(item, BaseModel):  # built by an engine of rules, already valid
                    fixed.append(item)
            out[kind] = fixed
        return out


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
    pair: str = Field(json_schema_extra=bound(chars=12))
    same: bool


class PairReply(Reply):
    decisions: list[PairDecision] = Field(json_schema_extra=bound(items=64))


@dataclass(slots=True)
class DescriptionRequest:
    name: str
    type: str
    descriptions: list[str]
    max_chars: int


class DescriptionReply(Reply):
    description: str = Field(json_schema_extra=bound(chars=2000))


# ---- PLAN --------------------------------------------------------------------------------


@dataclass(slots=True)
class MatchQuestion:
    label: str
    candidate: EntitySketch
    page_title: str
    page_summary: str
    similarity: float = 0.0


class MatchDecision(Reply):
    question: str = Field(json_schema_extra=bound(chars=12))
    same: bool


class MatchReply(Reply):
    decisions: list[MatchDecision] = Field(json_schema_extra=bound(items=64))


@dataclass(slots=True)
class TopicRequest:
    members: list[EntitySketch]  # most important first
    claims: list[str] = field(default_factory=list)
    # Source headings the central members sit under, with how many of those members each
    # covers, most first: what the documents themselves call this subject.
    headings: list[tuple[str, int]] = field(default_factory=list)
    taken_titles: list[str] = field(default_factory=list)  # titles other topics already carry


class TopicReply(Reply):
    title: str = Field(json_schema_extra=bound(chars=80))
    summary: str = Field(json_schema_extra=bound(chars=600))


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
    # where the text starts in its document (its chunk's start, and its place in the chunk's
    # single-spaced words), -1 when not found there: a page orders what a document says as it does
    position: int = -1
    # (chunk, position) of the same sentence under the page's other headings (gettext's and
    # ngettext's "`-c`: Specify the context ..."): what follows it there leans on it there
    elsewhere: list[tuple[str, int]] = field(default_factory=list)
    # (start, end, term) of each entry (an option's or a method's text) the text runs through,
    # start and end as `position`. A sentence past an entry's first says nothing of what
    # without it, which names the entry's term: "With drop (the default), commits ... are dropped."
    entries: list[tuple[int, int, str]] = field(default_factory=list)
    # (from, name) of each code name in the text that an example (code before it in its section,
    # before any prose names it) made up, from the example's end (as `position`): a sentence
    # after it naming that name speaks of the example, which a page does not show
    examples: list[tuple[int, str]] = field(default_factory=list)
    # (start, end, intro) of each list the text runs through whose items continue the sentence
    # before them (stopped on a colon mid-clause), which starts at `intro` (all as `position`)
    intros: list[tuple[int, int, int]] = field(default_factory=list)
    # (start, end) of each paragraph the text runs through that follows a code block (as
    # `position`): a sentence there that walks through the code leans on it
    after_code: list[tuple[int, int]] = field(default_factory=list)

    def entry_at(self, at: int) -> tuple[int, str]:
        """(where it starts, its term) of the entry a sentence at `at` (as `position`) is a later
        sentence of; (-1, "") for none."""
        if at < 0:
            return -1, ""
        return next(((start, term) for start, end, term in self.entries if start < at < end), (-1, ""))

    def intro_at(self, at: int) -> int:
        """Where the sentence starts whose list the sentence at `at` is an item of, -1 for none."""
        if at < 0:
            return -1
        return next((intro for start, end, intro in self.intros if start <= at < end), -1)

    def follows_code(self, at: int) -> bool:
        """Whether a sentence at `at` is in the paragraphs after a code block."""
        return at >= 0 and any(start <= at < end for start, end in self.after_code)

    def opens_entry(self, at: int) -> bool:
        """Whether a sentence at `at` is the first of one of the entries."""
        return at >= 0 and any(start == at for start, _, _ in self.entries)


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
    page: str = Field(json_schema_extra=bound(chars=12))  # the label of a page in a grouped update ("u1")
    # the new sentences only, under the "## Heading" they belong to
    markdown: str = Field(json_schema_extra=bound(chars=4000))


class PageAdditionsReply(Reply):
    pages: list[PageAddition] = Field(json_schema_extra=bound(items=32))
