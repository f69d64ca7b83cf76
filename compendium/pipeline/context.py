"""The context every phase runs in, and the result every phase returns."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..engines.base import Embedder, Engine
from ..storage.base import Store
from ..templates.groups import TemplateGroup, template_for
from ..templates.schema import Template
from .events import EventSink, Message, NullSink, PhaseProgress


@dataclass
class PhaseResult:
    """What a phase did. Usage (calls, tokens) is added by the orchestrator from the meter."""

    items: int = 0  # work items the phase considered (chunks, entities, pages)
    done: int = 0  # processed this run
    skipped: int = 0  # unchanged: served from stored results
    failed: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "done": self.done,
            "skipped": self.skipped,
            "failed": self.failed,
            "seconds": round(self.seconds, 3),
            **self.details,
        }


@dataclass
class CompileContext:
    """Everything a phase may touch. `state` carries what one phase hands to the next."""

    store: Store
    engine: Engine
    embedder: Embedder
    template: Template
    events: EventSink = field(default_factory=NullSink)
    documents_dir: Path | None = None
    # Template groups: which template extracts each document (by its path); `templates` holds
    # the group templates other than the compile's own.
    groups: list[TemplateGroup] = field(default_factory=list)
    templates: dict[str, Template] = field(default_factory=dict)
    state: dict[str, Any] = field(default_factory=dict)
    cancel: asyncio.Event = field(default_factory=asyncio.Event)
    started_at: float = field(default_factory=time.time)

    def progress(self, phase: str, done: int, total: int) -> None:
        tokens = sum(
            u.prompt_tokens + u.completion_tokens for u in self.engine.usage.by_phase.values()
        )
        self.events.emit(PhaseProgress(phase, done, total, tokens))

    def warn(self, text: str) -> None:
        self.events.emit(Message("warning", text))

    def document_template(self, path: str) -> str:
        """The template a group assigns to a document; "" means the compile's own."""
        name = template_for(path, self.groups, self.template.name) if self.groups else ""
        return "" if name == self.template.name else name

    def template_named(self, name: str) -> Template:
        """The template a group assigned (the compile's own when none or unknown)."""
        return self.templates.get(name, self.template) if name else self.template

    def info(self, text: str) -> None:
        self.events.emit(Message("info", text))


def group_templates(ctx: CompileContext) -> set[str]:
    """Names of the templates the groups assign, other than the compile's own."""
    return {g.template for g in ctx.groups} - {ctx.template.name}


class Phase(Protocol):
    async def __call__(self, template: Template, ctx: CompileContext) -> PhaseResult: ...
