"""The executor seam: where a compile's model work runs, here (the default) or on task workers.

Phases ask their engine and embedder for a MAP batch, a REDUCE block (pairs, a description),
a PLAN question or a REFINE page. In-process, the engine itself answers: that is the embedded
default and needs no broker. With a broker configured, the compile's engine and embedder are
replaced by ones that hand each such call to an `Executor`, which runs it as a task on a
worker and gives back its answer; the phases cannot tell, so there is exactly one compile
path. A new backend (Ray, Dask...) is one module with a class implementing `Executor`, chosen
in `executor_for`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from ..engines.base import Embedder, Engine
from ..engines.tasks import (
    DescriptionRequest,
    ExtractionBatch,
    ExtractionReply,
    MatchQuestion,
    PageRequest,
    PairQuestion,
    TopicReply,
    TopicRequest,
)
from ..pipeline.context import CompileContext
from ..settings import Settings
from ..templates.schema import Template
from .base import CompileIdentity, Executor
from .calls import EMBED

if TYPE_CHECKING:
    import numpy as np


class ExecutorEngine:
    """The Engine a distributed compile's phases see: each call is a task for the executor."""

    def __init__(self, executor: Executor, local: Engine):
        self.executor, self.local = executor, local
        self.name, self.model, self.usage = local.name, local.model, local.usage
        self.writes_additions = bool(getattr(local, "writes_additions", False))

    async def _run(self, method: str, request: Any, template: Template | None) -> Any:
        self.usage.check_budget()  # a worker's own meter does not know the compile's budget
        outcome = await self.executor.run(method, request, template)
        self.usage.add(outcome.usage)
        return outcome.reply

    async def extract(self, batch: ExtractionBatch, template: Template) -> ExtractionReply:
        return await self._run("extract", batch, template)  # type: ignore[no-any-return]

    async def judge_pairs(self, pairs: Sequence[PairQuestion], template: Template) -> dict[str, bool]:
        return await self._run("judge_pairs", list(pairs), template) if pairs else {}  # type: ignore[no-any-return]

    async def summarize(self, request: DescriptionRequest, template: Template) -> str:
        return await self._run("summarize", request, template)  # type: ignore[no-any-return]

    async def judge_matches(self, questions: Sequence[MatchQuestion], template: Template) -> dict[str, bool]:
        return await self._run("judge_matches", list(questions), template) if questions else {}  # type: ignore[no-any-return]

    async def name_topic(self, request: TopicRequest, template: Template) -> TopicReply:
        return await self._run("name_topic", request, template)  # type: ignore[no-any-return]

    async def write_page(self, request: PageRequest, template: Template) -> str:
        return await self._run("write_page", request, template)  # type: ignore[no-any-return]

    async def update_pages(self, requests: Sequence[PageRequest], template: Template) -> dict[str, str]:
        return await self._run("update_pages", list(requests), template) if requests else {}  # type: ignore[no-any-return]

    async def close(self) -> None:
        await self.local.close()


class ExecutorEmbedder:
    """The Embedder a distributed compile's phases see, for an embedding endpoint."""

    def __init__(self, executor: Executor, local: Embedder, template: Template):
        self.executor, self.local, self.template = executor, local, template  # the worker builds it from the template
        self.model, self.dimensions, self.usage = local.model, local.dimensions, local.usage

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        outcome = await self.executor.run(EMBED, list(texts), self.template)
        self.usage.add(outcome.usage)
        return outcome.reply  # type: ignore[no-any-return]

    async def close(self) -> None:
        await self.local.close()


def executor_for(settings: Settings, identity: CompileIdentity) -> Executor | None:
    """The executor the settings name; None: run in this process (no broker configured)."""
    broker = settings.distributed.broker
    if not broker:
        return None
    from .celery_executor import CeleryExecutor

    return CeleryExecutor(settings.distributed, identity)


@contextlib.asynccontextmanager
async def distribute(ctx: CompileContext, settings: Settings) -> AsyncIterator[Executor | None]:
    """Within the block, `ctx`'s engine (and an endpoint embedder) run their calls as tasks
    when the settings name a broker; without one, nothing changes."""
    identity = CompileIdentity(ctx.store.kb, ctx.engine.name, ctx.engine.model, ctx.embedder.model)
    executor = executor_for(settings, identity)
    if executor is None:
        yield None
        return
    engine, embedder = ctx.engine, ctx.embedder
    try:
        await executor.ready()
        ctx.engine = ExecutorEngine(executor, engine)  # type: ignore[assignment]
        if not embedder.model.startswith("offline"):  # hashing n-grams here is cheaper than a task
            ctx.embedder = ExecutorEmbedder(executor, embedder, ctx.template)  # type: ignore[assignment]
        yield executor
    finally:
        ctx.engine, ctx.embedder = engine, embedder
        await executor.close()
