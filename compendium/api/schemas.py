"""Request and response bodies of the HTTP API (what OpenAPI documents)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..compiler.schedules import CRON_PATTERN

NAME = r"^[a-z0-9][a-z0-9-]{0,62}$"
TEMPLATE_NAME = r"^[a-z0-9][a-z0-9_-]{0,99}$"  # as a template's YAML `name:` allows

TemplateName = Annotated[str, Field(pattern=TEMPLATE_NAME, description="a built-in or your own template")]
# Not only blanks, in Python's sense of blank too (str.strip also takes U+001C-U+001F, U+0085).
Glob = Annotated[str, Field(min_length=1, max_length=500, pattern=r"[^\s\u001c-\u001f\u0085]",
                            description="a path glob inside documents/: *, ** and ? as in a shell")]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- requests ------------------------------------------------------------------------------


class TenantIn(Body):
    name: str = Field(pattern=NAME)


class KeyIn(Body):
    name: str = Field("", max_length=200)


# A string holding a template: YAML whose top level is a mapping of the template schema's keys
# (unknown keys are errors), with `name:` matching TEMPLATE_NAME and not a built-in's, and whose
# prompts render in the sandbox. JSON Schema cannot say this of a string, so it is named as the
# string's format; a client (and a fuzzer) that knows the format makes valid ones.
TEMPLATE_FORMAT = "compendium-template"
# The same under a URL that names the template: `name:` may be left out; if given, it is that name.
NAMED_TEMPLATE_FORMAT = "compendium-template-named"


class TemplateIn(Body):
    yaml: str = Field(min_length=1, max_length=200_000, json_schema_extra={"format": TEMPLATE_FORMAT},
                      description="the template as YAML text: a mapping with name: (letters, digits, - and _, "
                                  "not a built-in's name) and the template schema's keys; unknown keys, YAML "
                                  "that is no mapping and prompts that do not render are refused with 422")


class NamedTemplateIn(Body):
    yaml: str = Field(min_length=1, max_length=200_000, json_schema_extra={"format": NAMED_TEMPLATE_FORMAT},
                      description="the template as YAML text, as for POST /templates; name: may be left out "
                                  "(the URL names it), and if given is the URL's name")


class GroupIn(Body):
    template: TemplateName
    include: list[Glob] = Field(default_factory=lambda: ["**"], min_length=1)
    exclude: list[Glob] = Field(default_factory=list)


class KnowledgeBaseIn(Body):
    name: str = Field(pattern=NAME)
    description: str = Field("", max_length=2000)
    default_template: TemplateName = "wiki"
    engine: Literal["auto", "offline"] = Field(
        "auto", description="auto: the server's LLM when it has one; offline: rules and NLP only"
    )
    llm_model: str = Field("", max_length=200)
    token_budget: int | None = Field(None, ge=1, description="LLM tokens one compile may spend")
    groups: list[GroupIn] = Field(default_factory=list)


class KnowledgeBasePatch(Body):
    description: str | None = Field(None, max_length=2000)
    default_template: TemplateName | None = None
    engine: Literal["auto", "offline"] | None = None
    llm_model: str | None = Field(None, max_length=200)
    token_budget: int | None = Field(None, ge=1)
    groups: list[GroupIn] | None = None


class CompileIn(Body):
    template: TemplateName | None = Field(None, description="default: the knowledge base's default template")


class PageEdit(Body):
    markdown: str = Field(min_length=1, max_length=1_000_000)
    title: str | None = Field(None, min_length=1, max_length=300)


class PageRevert(Body):
    version: int = Field(ge=1, description="the kept version to bring back")


Cron = Annotated[str, Field(
    min_length=1, max_length=200, pattern=CRON_PATTERN,
    description="five-field cron, UTC (minute hour day-of-month month day-of-week: numbers, *, ranges, "
                "steps, lists, month and day names), or @hourly, @daily, @weekly, @monthly, @yearly; an "
                "expression naming no date that exists ('0 0 30 2 *') never fires",
)]


class ScheduleIn(Body):
    cron: Cron
    template: TemplateName | None = None
    enabled: bool = True


class SchedulePatch(Body):
    cron: Cron | None = None
    template: TemplateName | None = None
    enabled: bool | None = None


# ---- responses -----------------------------------------------------------------------------


class TenantOut(BaseModel):
    name: str
    created_at: float


class MeOut(BaseModel):
    tenant: str | None = Field(description="the key's tenant; null for the admin key")
    admin: bool
    key_id: str


class KeyOut(BaseModel):
    id: str
    tenant: str
    name: str
    created_at: float
    key: str | None = Field(None, description="the key itself: shown only when created")


class TemplateOut(BaseModel):
    name: str
    version: int
    description: str
    source: Literal["builtin", "tenant"]
    yaml: str | None = None
    updated_at: float = 0.0


class TemplateCheck(BaseModel):
    valid: bool
    name: str
    version: int


class KnowledgeBaseOut(BaseModel):
    name: str
    description: str
    default_template: str
    engine: str
    llm_model: str
    token_budget: int | None
    groups: list[dict[str, Any]]
    created_at: float
    updated_at: float
    workspace: str | None = Field(
        None, description="the served workspace's folder, for its own knowledge base: the CLI "
        "compiles the same documents into the same store")


class DocumentOut(BaseModel):
    path: str
    size: int
    format: str = ""
    title: str = ""
    chunks: int = 0
    compiled: bool = False
    status: Literal["new", "changed", "compiled", "failed"] = Field(
        "new", description="new: not compiled yet; changed: edited since the last compile read it; "
        "compiled: as the last compile read it; failed: the last compile could not read it (error says why)")
    error: str = ""


class JobOut(BaseModel):
    id: str
    knowledge_base: str
    template: str
    status: str = Field(description="queued, running, or how it ended: succeeded, partial (finished, some "
                        "items failed for good), failed, cancelled, budget_exceeded")
    phase: str
    progress: dict[str, Any]
    created_at: float
    started_at: float
    finished_at: float
    attempts: int
    trigger: str
    cancel_requested: bool
    error: str
    report: dict[str, Any]


class ScheduleOut(BaseModel):
    id: str
    knowledge_base: str
    template: str
    cron: str
    enabled: bool
    next_run_at: float
    last_run_at: float
    last_job_id: str


class PageSummary(BaseModel):
    slug: str
    title: str
    kind: str
    subject_id: str
    summary: str
    version: int
    edited: bool
    pending_update: bool
    status: str
    updated_at: float


class PageOut(PageSummary):
    markdown: str
    aliases: list[str]
    outlinks: list[str]
    cited_chunks: list[str]


class EntityOut(BaseModel):
    id: str
    name: str
    type: str
    category: str
    description: str
    aliases: list[str]
    chunk_ids: list[str]
    document_ids: list[str]
    degree: int
    importance: float
    page: str | None = None


class RelationOut(BaseModel):
    id: str
    source: str
    target: str
    type: str
    description: str
    strength: int
    chunk_ids: list[str]


class TopicOut(BaseModel):
    id: str
    slug: str
    title: str
    summary: str
    members: list[str]


class GraphNode(BaseModel):
    id: str
    label: str
    type: str
    category: str
    importance: float
    degree: int
    page: str | None
    x: float
    y: float
    group: str | None = None  # the root topic of the outline its page sits in


class OutlineOut(BaseModel):
    """A node of the outline; the root is "Contents", its children the root topics."""

    title: str
    slug: str | None
    pages: list[str]
    children: list[OutlineOut]


class OutlineReply(BaseModel):
    outline: OutlineOut
    titles: dict[str, str]  # page slug -> title, for drawing the tree


class GraphEdge(BaseModel):
    id: str
    source: str
    target: str
    type: str
    strength: int


class GraphOut(BaseModel):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    total_nodes: int
    total_edges: int
    truncated: bool
    next_cursor: str | None = None


class SearchHit(BaseModel):
    kind: Literal["page", "entity"]
    id: str
    title: str
    snippet: str
    score: float
    page: str | None = None


class ClaimOut(BaseModel):
    id: str
    text: str
    chunk_id: str
    document_id: str
    entity_ids: list[str]


class EntityDetail(EntityOut):
    relations: list[RelationOut]
    claims: list[ClaimOut] = Field(description="at most 200 claims about the entity")


class TopicMember(BaseModel):
    id: str
    name: str
    type: str


class TopicDetail(TopicOut):
    page: str | None = None
    member_entities: list[TopicMember]


class ChunkOut(BaseModel):
    id: str
    text: str
    heading_path: list[str]
    start: int
    end: int
    document_id: str
    document: str | None = Field(None, description="the document's path, while it exists")


class RelatedPage(BaseModel):
    slug: str
    title: str
    kind: str
    via: str = Field(description="why it is related: linked from this page, links here, related (TYPE)")


class RelatedOut(BaseModel):
    items: list[RelatedPage]


class HistoryItem(BaseModel):
    action: str
    reason: str
    at: float
    job_id: str | None = None
    template: str | None = None
    version: int | None = None


class HistoryOut(BaseModel):
    items: list[HistoryItem]
    version: int
    diff_available: bool


class DiffOut(BaseModel):
    from_version: int
    to_version: int
    by: str
    lines: list[str] = Field(description="a unified diff of the Markdown")
