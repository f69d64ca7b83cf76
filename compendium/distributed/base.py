"""The Executor protocol every backend implements, and what a task carries and brings back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..engines.usage import PhaseUsage
from ..templates.schema import Template


@dataclass(frozen=True, slots=True)
class CompileIdentity:
    """What a worker needs to answer as the compile's own engine would: which knowledge base's
    store holds the response cache, and which engine, model and embedder made the answers
    (they are in every fingerprint, so a worker configured otherwise refuses the task)."""

    knowledge_base: str
    engine: str
    model: str
    embedder: str


@dataclass(slots=True)
class Outcome:
    reply: Any
    usage: PhaseUsage


class Executor(Protocol):
    """Runs one engine call somewhere else and returns its answer.

    `method` is an Engine method name (extract, judge_pairs, summarize, judge_matches,
    name_topic, write_page) or "embed"; `template` is the one the engine is asked with (for
    "embed", the compile's: it names the embedding model). The call must be
    idempotent: a worker answers from the store's response cache when the answer is kept, so
    a call run twice (a lost worker's task run again) asks the model once. Raises the
    CompendiumError the engine raised (EngineError, ReplyError, LabelError, BudgetExceeded...),
    or EngineUnavailable when no worker can run it.
    """

    async def ready(self) -> None:
        """Raise EngineUnavailable, saying what to start, when no worker would run a task."""
        ...

    async def run(self, method: str, request: Any, template: Template) -> Outcome: ...

    async def close(self) -> None: ...
