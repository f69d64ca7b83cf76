"""The engine and embedder protocols every provider (openai-compatible, offline) implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # for annotations only: what imports the protocols need not import numpy
    import numpy as np

from ..templates.schema import Template
from .tasks import (
    DescriptionRequest,
    ExtractionBatch,
    ExtractionReply,
    MatchQuestion,
    PageRequest,
    PairQuestion,
    TopicReply,
    TopicRequest,
)
from .usage import UsageMeter


@runtime_checkable
class Engine(Protocol):
    """Does the phases' language work: by an LLM, or by rules with no network (offline).

    `name` is "llm" or "offline" and is recorded on what the engine made; `model` identifies
    the output (it goes into fingerprints, so changing models re-runs the work).
    Every method raises EngineError subclasses, never a driver's exception.
    """

    name: str
    model: str
    usage: UsageMeter

    async def extract(self, batch: ExtractionBatch, template: Template) -> ExtractionReply:
        """Entities, concepts, claims, relations and topics of every chunk, by chunk label."""
        ...

    async def judge_pairs(
        self, pairs: Sequence[PairQuestion], template: Template
    ) -> dict[str, bool]:
        """For each pair label: do both sketches name the same thing?"""
        ...

    async def summarize(self, request: DescriptionRequest, template: Template) -> str:
        """One description merged from many, at most request.max_chars long."""
        ...

    async def judge_matches(
        self, questions: Sequence[MatchQuestion], template: Template
    ) -> dict[str, bool]:
        """For each question label: is the candidate the subject of the existing page?"""
        ...

    async def name_topic(self, request: TopicRequest, template: Template) -> TopicReply: ...

    async def write_page(self, request: PageRequest, template: Template) -> str:
        """Markdown body citing evidence as [^ref] and linking as [[slug]] / [[slug|text]]."""
        ...

    async def update_pages(self, requests: Sequence[PageRequest], template: Template) -> dict[str, str]:
        """Several small UPDATEs at once: by slug, what `write_page` would answer for each (an
        engine with `writes_additions` answers the new sentences only). A page left out of the
        answer could not be written this way: the caller asks `write_page` for it alone."""
        ...

    async def close(self) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors; `model` goes into fingerprints."""

    model: str
    dimensions: int
    usage: UsageMeter

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dimensions), float32, rows of unit length."""
        ...

    async def close(self) -> None: ...
