"""Chooses the engine and the embedder from settings and template, in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:  # annotations only: a question imports no settings schema nor the templates'
    from ..settings import Settings
    from ..templates.schema import Template
    from .base import Embedder, Engine
    from .cache import ResponseCache
    from .usage import UsageMeter

OFFLINE = "offline"


def names_models(settings: Settings) -> bool:
    """Whether the template's `models:` can change what build_engine and build_embedder give:
    only when an endpoint is configured. Offline, the engines are the same whatever it names,
    so a question need not load (and parse) the template."""
    return bool(settings.llm.base_url or settings.embedding.base_url)


def build_engine(
    settings: Settings, template: Template, *, usage: UsageMeter, cache: ResponseCache | None = None
) -> Engine:
    """The LLM engine when an endpoint is configured, else the offline (rules/NLP) engine."""
    if settings.llm.base_url:
        from .llm import LLMEngine
        from .openai_client import OpenAIClient

        model = template.models.llm or settings.llm.model
        if not model:
            raise ConfigError("no LLM model named", hint="set COMPENDIUM_LLM_MODEL or the template's models.llm")
        client = OpenAIClient.for_llm(settings.llm, model=model, usage=usage, cache=cache)
        return LLMEngine(client)
    from .offline import OfflineEngine

    return OfflineEngine(usage=usage)


def build_embedder(
    settings: Settings, template: Template | None, *, usage: UsageMeter,
    cache: ResponseCache | None = None,
) -> Embedder:
    """The endpoint's embedder when one is configured, else the offline hashed n-gram one.

    An embedding endpoint of its own (settings.embedding.base_url) wins; a template that
    names an embedding model other than "offline" uses the LLM endpoint when there is one.
    `template` may be None where names_models(settings) is false.
    """
    if template is None and names_models(settings):
        raise ValueError("an endpoint is configured: the template names the embedding model")
    named = template.models.embedding if template is not None else None
    wants_model = bool(named) and named != OFFLINE
    if settings.embedding.base_url or (wants_model and settings.llm.base_url):
        from .openai_embedder import OpenAIEmbedder

        model = named if wants_model else settings.embedding.model
        if not model:
            raise ConfigError(
                "an embedding endpoint is configured but no embedding model is named",
                hint="set COMPENDIUM_EMBED_MODEL or the template's models.embedding",
            )
        if settings.embedding.base_url:
            return OpenAIEmbedder.from_settings(settings.embedding, model=model, usage=usage, cache=cache)
        return OpenAIEmbedder.from_settings(
            settings.embedding,
            model=model,
            usage=usage,
            cache=cache,
            base_url=settings.llm.base_url,
            api_key=settings.llm.api_key,
        )
    from .offline_embedder import OfflineEmbedder

    return OfflineEmbedder(usage=usage)


HASHED = "offline-hash-ngram"


def passage_embedder(embedder: Embedder) -> Embedder:
    """The embedder of retrieval's passages for a knowledge base compiled with `embedder`.

    An endpoint's embedder serves both. The hashed n-gram embedder matches letters, which is
    what names in REDUCE need, but not meaning: passages get the offline semantic embedder
    (static vectors shipped in an installed wheel; engines/static_embedder.py) instead.
    """
    if str(getattr(embedder, "model", "")).startswith(HASHED):
        from .static_embedder import StaticEmbedder

        return StaticEmbedder(usage=getattr(embedder, "usage", None))
    return embedder
