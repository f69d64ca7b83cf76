"""Typed records kept in a Store, and what each kind declares for backends (filters, vectors)."""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np

Vector = np.ndarray  # float32, shape (d,), L2-normalised when used for KNN


@dataclass(slots=True)
class Record:
    """Base of every stored record.

    KIND names the collection (table/index). FILTERS are the scalar fields a backend must index
    so that `scan`/`delete`/`knn` can filter on them. VECTOR names the one field holding an
    embedding (or None). TEXT names the fields indexed for `search_text`, each with its BM25
    weight. Every other field is stored as JSON and returned as it was written.
    """

    KIND: ClassVar[str] = ""
    FILTERS: ClassVar[tuple[str, ...]] = ()
    VECTOR: ClassVar[str | None] = None
    TEXT: ClassVar[tuple[tuple[str, float], ...]] = ()

    id: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready fields (the vector is left as it is: backends encode it)."""
        names, values = _getter(type(self))
        return dict(zip(names, values(self), strict=True))

    @classmethod
    def from_dict(cls: type[R], data: dict[str, Any]) -> R:
        names = _field_names(cls)
        if names.issuperset(data):  # as stored: no field the record no longer has
            return cls(**data)
        return cls(**{k: v for k, v in data.items() if k in names})


R = TypeVar("R", bound=Record)
_FIELD_CACHE: dict[type, frozenset[str]] = {}


_ORDER_CACHE: dict[type, tuple[str, ...]] = {}


def _field_order(cls: type) -> tuple[str, ...]:
    # dataclasses.fields() rebuilds its tuple on every call: a third of a record's encoding time.
    names = _ORDER_CACHE.get(cls)
    if names is None:
        names = _ORDER_CACHE[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_GETTER_CACHE: dict[type, tuple[tuple[str, ...], Any]] = {}


def _getter(cls: type) -> tuple[tuple[str, ...], Any]:
    """The field names and one attrgetter returning all their values (a record's encoding is
    most of what a bulk write costs)."""
    found = _GETTER_CACHE.get(cls)
    if found is None:
        names = _field_order(cls)
        getter = operator.attrgetter(*names)
        found = _GETTER_CACHE[cls] = (names, (lambda r: (getter(r),)) if len(names) == 1 else getter)
    return found


def _field_names(cls: type) -> frozenset[str]:
    names = _FIELD_CACHE.get(cls)
    if names is None:
        names = _FIELD_CACHE[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    return names


@dataclass(slots=True)
class Document(Record):
    KIND: ClassVar[str] = "document"
    FILTERS: ClassVar[tuple[str, ...]] = ("path", "content_hash")

    path: str = ""  # relative to the workspace's documents folder, '/'-separated
    title: str = ""
    content_hash: str = ""
    format: str = ""  # markdown | rest | text | html | pdf | docx
    size: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    template: str = ""  # template assigned by the template group
    chunk_ids: list[str] = field(default_factory=list)
    updated_at: float = 0.0


@dataclass(slots=True)
class Chunk(Record):
    KIND: ClassVar[str] = "chunk"
    FILTERS: ClassVar[tuple[str, ...]] = ("document_id",)
    TEXT: ClassVar[tuple[tuple[str, float], ...]] = (("text", 1.0), ("heading_path", 2.0))

    document_id: str = ""
    ordinal: int = 0
    text: str = ""
    heading_path: list[str] = field(default_factory=list)
    start: int = 0  # character span in the document's normalised text
    end: int = 0
    tokens: int = 0
    content_hash: str = ""
    # [kind, start, end] of each block in `text` (heading, paragraph, item, term, definition,
    # quote, code, table); empty for chunks stored before blocks were recorded.
    blocks: list[list[Any]] = field(default_factory=list)
    # [name, where in `text` its example ends (0: before the chunk)] of each code name of `text`
    # that an example of its section made up (ingest.examples)
    examples: list[list[Any]] = field(default_factory=list)
    # its text starts in the paragraphs after a code block that a chunk before it holds
    follows_code: bool = False


@dataclass(slots=True)
class Extract(Record):
    """MAP output for one chunk; id == chunk id."""

    KIND: ClassVar[str] = "extract"
    # None: extracts are read by id (a chunk's) or all at once, and an index on a field costs
    # every MAP commit a rewritten B-tree page per extract (a quarter of MAP's SQLite time).
    FILTERS: ClassVar[tuple[str, ...]] = ()

    chunk_id: str = ""
    document_id: str = ""
    fingerprint: str = ""  # MAP fingerprint of the chunk it was extracted under
    status: str = "done"  # done | failed
    engine: str = ""
    entities: list[dict[str, Any]] = field(default_factory=list)
    concepts: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    dropped: int = 0
    error: str = ""


@dataclass(slots=True)
class Entity(Record):
    """A canonical entity or concept after REDUCE."""

    KIND: ClassVar[str] = "entity"
    FILTERS: ClassVar[tuple[str, ...]] = ("category", "type", "name")
    VECTOR: ClassVar[str | None] = "embedding"
    TEXT: ClassVar[tuple[tuple[str, float], ...]] = (("name", 3.0), ("aliases", 2.0), ("description", 1.0))

    name: str = ""
    type: str = ""
    category: str = "entity"  # entity | concept
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    chunk_ids: list[str] = field(default_factory=list)
    document_ids: list[str] = field(default_factory=list)
    degree: int = 0
    importance: float = 0.0
    fingerprint: str = ""  # of the evidence it was built from
    engine: str = ""
    embedding: Vector | None = None


@dataclass(slots=True)
class Relation(Record):
    KIND: ClassVar[str] = "relation"
    FILTERS: ClassVar[tuple[str, ...]] = ("source", "target", "type")
    TEXT: ClassVar[tuple[tuple[str, float], ...]] = (("description", 1.0),)

    source: str = ""  # entity id
    target: str = ""
    type: str = ""
    description: str = ""
    strength: int = 0  # number of supporting chunks
    chunk_ids: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Claim(Record):
    KIND: ClassVar[str] = "claim"
    # By chunk only: nothing asks for a document's claims, and each index costs every claim written.
    FILTERS: ClassVar[tuple[str, ...]] = ("chunk_id",)
    # No full-text index: a claim is a sentence of its chunk, and search finds it there (retrieval,
    # API and UI search chunks, never claims); indexing ~10 claims a chunk was most of REDUCE's write.

    text: str = ""
    chunk_id: str = ""
    document_id: str = ""
    entity_ids: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Topic(Record):
    KIND: ClassVar[str] = "topic"
    FILTERS: ClassVar[tuple[str, ...]] = ("slug",)
    TEXT: ClassVar[tuple[tuple[str, float], ...]] = (("title", 3.0), ("summary", 1.0))

    slug: str = ""
    title: str = ""
    summary: str = ""
    members: list[str] = field(default_factory=list)  # entity ids
    fingerprint: str = ""  # of the membership
    # The member whose page is this topic's page, when the topic is named like it (see
    # phases/page_titles.member_named_like); empty: the topic has a page of its own.
    page_subject: str = ""

    def subject_of_page(self) -> str:
        """The subject whose page is this topic's: the member it is named like, else itself."""
        return self.page_subject or self.id


@dataclass(slots=True)
class Page(Record):
    """A wiki page; id == slug."""

    KIND: ClassVar[str] = "page"
    FILTERS: ClassVar[tuple[str, ...]] = ("kind", "status", "subject_id")
    VECTOR: ClassVar[str | None] = "embedding"
    TEXT: ClassVar[tuple[tuple[str, float], ...]] = (
        ("title", 3.0), ("aliases", 2.0), ("summary", 1.0), ("markdown", 1.0),
    )

    slug: str = ""
    title: str = ""
    kind: str = "entity"  # entity | concept | topic
    subject_id: str = ""  # entity or topic id the page is about
    markdown: str = ""
    summary: str = ""
    aliases: list[str] = field(default_factory=list)
    outlinks: list[str] = field(default_factory=list)
    cited_chunks: list[str] = field(default_factory=list)
    version: int = 1
    created_at: float = 0.0
    updated_at: float = 0.0
    evidence_fingerprint: str = ""
    edited: bool = False  # a person edited it; never overwritten silently
    pending_update: bool = False
    status: str = "active"  # active | deleted
    engine: str = ""
    embedding: Vector | None = None


@dataclass(slots=True)
class ChunkEmbedding(Record):
    """A chunk's embedding, kept for retrieval's vector search; id == chunk id."""

    KIND: ClassVar[str] = "chunk_embedding"
    FILTERS: ClassVar[tuple[str, ...]] = ("document_id", "model")
    VECTOR: ClassVar[str | None] = "embedding"

    document_id: str = ""
    model: str = ""  # the embedder that made it: a new model means new vectors
    content_hash: str = ""  # of the chunk it was made from
    embedding: Vector | None = None


@dataclass(slots=True)
class PageVersion(Record):
    """One version of a page's text, written with every change to it; id == "slug@version"."""

    KIND: ClassVar[str] = "page_version"
    FILTERS: ClassVar[tuple[str, ...]] = ("slug",)

    slug: str = ""
    version: int = 0
    title: str = ""
    markdown: str = ""
    edited: bool = False  # written by a person
    at: float = 0.0

    @classmethod
    def of(cls, page: Page) -> PageVersion:
        return cls(
            id=f"{page.slug}@{page.version}",
            slug=page.slug,
            version=page.version,
            title=page.title,
            markdown=page.markdown,
            edited=page.edited,
            at=page.updated_at,
        )


@dataclass(slots=True)
class Job(Record):
    KIND: ClassVar[str] = "job"
    FILTERS: ClassVar[tuple[str, ...]] = ("status", "template", "tenant", "knowledge_base")

    template: str = ""
    status: str = "queued"  # queued | running | one of compiler.report.STATUSES
    phase: str = ""
    progress: dict[str, Any] = field(default_factory=dict)
    lease_owner: str = ""
    lease_expires_at: float = 0.0
    created_at: float = 0.0
    started_at: float = 0.0
    finished_at: float = 0.0
    report: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    cancel_requested: bool = False
    # Added for the job queue of the API (compiler/jobs.py).
    tenant: str = ""
    knowledge_base: str = ""  # the knowledge base's name inside its tenant
    heartbeat_at: float = 0.0
    attempts: int = 0  # leases taken; > 1 means the job was resumed after a lost worker
    trigger: str = "api"  # api | schedule | cli


@dataclass(slots=True)
class Tenant(Record):
    """An organisation using the service; id == its name. Lives in the "_system" scope."""

    KIND: ClassVar[str] = "tenant"

    name: str = ""
    created_at: float = 0.0


@dataclass(slots=True)
class ApiKey(Record):
    """An API key of a tenant; id is the key's public part, the secret is kept only hashed."""

    KIND: ClassVar[str] = "api_key"
    FILTERS: ClassVar[tuple[str, ...]] = ("tenant",)

    tenant: str = ""
    name: str = ""
    salt: str = ""
    hash: str = ""  # hex sha256(salt + secret)
    created_at: float = 0.0
    revoked: bool = False


@dataclass(slots=True)
class KnowledgeBase(Record):
    """A tenant's knowledge base and its compile settings; id == f"{tenant}__{name}"."""

    KIND: ClassVar[str] = "knowledge_base"
    FILTERS: ClassVar[tuple[str, ...]] = ("tenant",)

    tenant: str = ""
    name: str = ""
    description: str = ""
    default_template: str = "wiki"
    engine: str = "auto"  # auto: the LLM when the server has one | offline
    llm_model: str = ""  # "" : the server's model
    token_budget: int = 0  # LLM tokens per compile; 0: no budget of its own
    groups: list[dict[str, Any]] = field(default_factory=list)  # TemplateGroup dicts
    created_at: float = 0.0
    updated_at: float = 0.0
    # A served workspace's own knowledge base (tenancy.link_workspace): its folder, and the store
    # scope the CLI compiles it into. "" for a server knowledge base (DATA_DIR/kbs/, tenant__name).
    workspace: str = ""
    scope: str = ""


@dataclass(slots=True)
class StoredTemplate(Record):
    """A template uploaded by a tenant; id == f"{tenant}__{name}". Every update is a new version."""

    KIND: ClassVar[str] = "stored_template"
    FILTERS: ClassVar[tuple[str, ...]] = ("tenant", "name")

    tenant: str = ""
    name: str = ""
    version: int = 1
    yaml: str = ""
    description: str = ""
    history: list[dict[str, Any]] = field(default_factory=list)  # earlier {version, yaml, at}
    created_at: float = 0.0
    updated_at: float = 0.0


@dataclass(slots=True)
class Schedule(Record):
    """A cron expression that enqueues compiles of one knowledge base with one template."""

    KIND: ClassVar[str] = "schedule"
    FILTERS: ClassVar[tuple[str, ...]] = ("tenant", "knowledge_base")

    tenant: str = ""
    knowledge_base: str = ""
    template: str = ""
    cron: str = ""
    enabled: bool = True
    next_run_at: float = 0.0
    last_run_at: float = 0.0
    last_job_id: str = ""
    created_at: float = 0.0


@dataclass(slots=True)
class CacheEntry(Record):
    """A cached result under a fingerprint: LLM replies, embeddings, pair decisions, stage marks."""

    KIND: ClassVar[str] = "cache"
    FILTERS: ClassVar[tuple[str, ...]] = ("namespace",)
    VECTOR: ClassVar[str | None] = "vector"

    namespace: str = ""
    value: Any = None
    created_at: float = 0.0
    vector: Vector | None = None


RECORD_TYPES: dict[str, type[Record]] = {
    cls.KIND: cls
    for cls in (
        Document, Chunk, ChunkEmbedding, Extract, Entity, Relation, Claim, Topic, Page, PageVersion, Job, CacheEntry,
        Tenant, ApiKey, KnowledgeBase, StoredTemplate, Schedule,
    )
}
