"""The template schema: what a compilation template may say, validated strictly."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..fingerprint import fingerprint

Artifact = Literal["wiki_pages", "entity_graph", "topics", "outline"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TypeSpec(Strict):
    """An entity or relation type the extractors may use."""

    name: str = Field(min_length=1)
    description: str = ""
    # Offline engine: regular expressions that give a name this type (first match wins).
    patterns: list[str] = Field(default_factory=list)


class Models(Strict):
    llm: str | None = None  # None: the model named in settings (COMPENDIUM_LLM_MODEL)
    embedding: str = "offline"  # "offline" or an embedding model name served by the endpoint
    temperature: float = 0.0


class Chunking(Strict):
    max_tokens: int = Field(400, ge=32, le=8192)
    overlap_tokens: int = Field(40, ge=0, le=1024)


class MapSettings(Strict):
    batch_chunks: int = Field(8, ge=1, le=64)
    batch_tokens: int = Field(4000, ge=256)
    concurrency: int = Field(4, ge=1, le=64)
    max_items_per_chunk: int = Field(40, ge=1)
    system: str = ""
    prompt: str = ""  # Jinja2; empty: the built-in MAP prompt


class ReduceSettings(Strict):
    auto_merge: float = Field(0.95, ge=0.0, le=1.0)
    review_band: tuple[float, float] = (0.85, 0.95)
    judge_batch: int = Field(20, ge=1, le=200)
    description_max_chars: int = Field(800, ge=80)
    summarize_over: int = Field(4, ge=1)  # LLM-summarise descriptions when a cluster has more
    prompt: str = ""
    summary_prompt: str = ""

    @model_validator(mode="after")
    def _band(self) -> ReduceSettings:
        low, high = self.review_band
        if not 0.0 <= low <= high <= self.auto_merge:
            raise ValueError("review_band must be [low, high] with low <= high <= auto_merge")
        return self


class TopicSettings(Strict):
    resolution: float = Field(1.0, gt=0)
    min_size: int = Field(3, ge=2)
    max_topics: int = Field(200, ge=1)
    max_size: int = Field(60, ge=3)  # members past which a community is partitioned again on its own edges

    @model_validator(mode="after")
    def _sizes(self) -> TopicSettings:
        if self.max_size < self.min_size:
            raise ValueError(f"max_size must be at least min_size ({self.min_size}); it is {self.max_size}")
        return self


class PlanSettings(Strict):
    min_support: int = Field(2, ge=1)  # chunks mentioning a subject before it earns a page
    min_facts: int = Field(1, ge=0)  # cited facts (claims naming the subject) a page needs
    update_threshold: float = Field(0.92, ge=0.0, le=1.0)
    maybe_band: tuple[float, float] = (0.85, 0.92)
    judge_batch: int = Field(20, ge=1, le=200)
    max_pages: int = Field(5000, ge=1)
    topics: TopicSettings = TopicSettings()
    prompt: str = ""

    @model_validator(mode="after")
    def _band(self) -> PlanSettings:
        low, high = self.maybe_band
        if not 0.0 <= low <= high <= self.update_threshold:
            raise ValueError("maybe_band must be [low, high] with low <= high <= update_threshold")
        return self


class RefineSettings(Strict):
    concurrency: int = Field(4, ge=1, le=64)
    context_budget: int = Field(3000, ge=200)  # tokens of evidence per page
    max_page_tokens: int = Field(1200, ge=100)
    min_keep_ratio: float = Field(0.6, ge=0.0, le=1.0)
    system: str = ""
    writer_prompt: str = ""
    writer_example: str = ""
    page_template: str = ""  # Jinja2 layout of an assembled page; empty: the built-in one


class Template(Strict):
    name: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9_-]*$")
    version: int = Field(1, ge=1)
    description: str = ""
    artifacts: list[Artifact] = Field(default_factory=lambda: ["wiki_pages", "entity_graph", "topics"])
    entity_types: list[TypeSpec] = Field(default_factory=list)
    relation_types: list[TypeSpec] = Field(default_factory=list)
    models: Models = Models()
    chunking: Chunking = Chunking()
    map: MapSettings = MapSettings()
    reduce: ReduceSettings = ReduceSettings()
    plan: PlanSettings = PlanSettings()
    refine: RefineSettings = RefineSettings()

    def phase_fingerprint(self, phase: str) -> str:
        """Fingerprint of exactly the fields `phase` reads, so editing one phase reruns only it
        and the phases after it."""
        return fingerprint(phase, _PHASE_INPUTS[phase](self))

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.model_dump(mode="json"))

    def builds(self, artifact: str) -> bool:
        return artifact in self.artifacts


def _types(t: Template) -> list[dict[str, Any]]:
    return [x.model_dump(mode="json") for x in (*t.entity_types, *t.relation_types)]


_PHASE_INPUTS: dict[str, Any] = {
    "ingest": lambda t: t.chunking.model_dump(mode="json"),
    "map": lambda t: [_types(t), t.map.model_dump(mode="json", exclude={"concurrency"}), t.models.llm],
    "reduce": lambda t: [t.reduce.model_dump(mode="json"), t.models.model_dump(mode="json")],
    "plan": lambda t: [t.plan.model_dump(mode="json"), t.artifacts, t.models.model_dump(mode="json")],
    "refine": lambda t: [
        t.refine.model_dump(mode="json", exclude={"concurrency"}),
        t.artifacts,
        t.models.llm,
        t.models.temperature,
    ],
}
