"""Retrieval over a workspace's knowledge base: the store, embedder and LLM its settings name."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ..engines.factory import build_embedder, build_engine, passage_embedder
from ..engines.usage import UsageMeter
from ..operations import opened_store, resolve_template
from ..settings import Settings
from ..storage.base import Store
from ..storage.response_cache import StoreResponseCache
from ..templates.schema import Template
from .answer import ask
from .retrieve import Options, Retrieval, retrieve


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
    the settings' token budget, closed afterwards. `template`: the workspace's default."""
    template = template or resolve_template(settings, None)
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
    async with opened_store(settings) as store, sources_for(store, settings) as src:
        events = ask(question, store, embedder=src.embedder, passages=src.passages, llm=src.llm,
                     options=options)
        async with contextlib.aclosing(events):
            async for event in events:
                yield event
