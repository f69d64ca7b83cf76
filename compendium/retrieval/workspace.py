"""Retrieval over a workspace's knowledge base: the store, embedder and LLM its settings name.

Imports stay to what a question runs: the store's backend and the engines' factory; the
template (it names the models) only where an endpoint is configured; not operations, which
brings in the compiler.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..engines.factory import build_embedder, build_engine, names_models, passage_embedder
from ..engines.usage import UsageMeter
from ..storage.base import Store
from ..storage.response_cache import StoreResponseCache
from ..workspace_store import opened_store
from .options import Options
from .retrieve import Retrieval, retrieve

if TYPE_CHECKING:
    from ..settings import Settings
    from ..templates.schema import Template


@dataclass(slots=True)
class Sources:
    """What one question is answered from."""

    store: Store
    embedder: Any  # the compile's: entity names
    llm: Any | None  # an OpenAIClient, or None offline
    usage: UsageMeter
    passages: Any = None  # the passages' (engines.factory.passage_embedder)


@contextlib.asynccontextmanager
async def sources_for(
    store: Store, settings: Settings, template: Template | None = None
) -> AsyncIterator[Sources]:
    """The knowledge base's embedder (its entity vectors were made by it) and LLM client, under
    the settings' token budget, closed afterwards. `template`: the workspace's default, read
    only where an endpoint is configured (offline it cannot change the engines)."""
    if template is None and names_models(settings):
        from ..templates.registry import load_template

        template = load_template(settings.default_template, workspace=settings.workspace)
    usage = UsageMeter(settings.token_budget)
    async with contextlib.AsyncExitStack() as stack:
        embedder = build_embedder(settings, template, usage=usage, cache=StoreResponseCache(store))
        stack.push_async_callback(embedder.close)
        llm = None
        if settings.llm.base_url:  # offline, a question needs no engine (nor its import)
            engine = build_engine(settings, template, usage=usage, cache=StoreResponseCache(store))
            stack.push_async_callback(engine.close)
            llm = getattr(engine, "client", None)
        yield Sources(store, embedder, llm, usage, passage_embedder(embedder))


async def retrieve_in_workspace(settings: Settings, question: str, options: Options) -> Retrieval:
    async with opened_store(settings) as store, sources_for(store, settings) as src:
        return await retrieve(question, store, embedder=src.embedder, passages=src.passages,
                              llm=src.llm, options=options)


async def ask_in_workspace(
    settings: Settings, question: str, options: Options
) -> AsyncIterator[dict[str, Any]]:
    from .answer import ask

    async with opened_store(settings) as store, sources_for(store, settings) as src:
        events = ask(question, store, embedder=src.embedder, passages=src.passages, llm=src.llm,
                     options=options)
        async with contextlib.aclosing(events):
            async for event in events:
                yield event
