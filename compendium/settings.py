"""Settings: loaded once at the edge (workspace compendium.yaml + environment), then passed down."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class LLMSettings:
    base_url: str | None = None  # None: the offline engine is used
    api_key: str | None = field(default=None, repr=False)  # value from the environment, never written
    model: str = "gpt-4o-mini"
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    timeout: float = 120.0
    max_retries: int = 5
    max_concurrency: int = 8
    price_per_1k_prompt: float = 0.0  # for cost estimates in reports
    price_per_1k_completion: float = 0.0


@dataclass(frozen=True)
class EmbeddingSettings:
    base_url: str | None = None  # None: the offline embedder
    api_key: str | None = field(default=None, repr=False)
    model: str | None = None
    batch_size: int = 128
    timeout: float = 60.0
    max_retries: int = 5


@dataclass(frozen=True)
class Settings:
    llm: LLMSettings = LLMSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    store_url: str = ""  # "" : sqlite file inside the workspace
    workspace: Path | None = None
    knowledge_base: str = "default"
    default_template: str = "wiki"
    token_budget: int | None = None  # per compile; None: unlimited

    @property
    def offline(self) -> bool:
        return self.llm.base_url is None
