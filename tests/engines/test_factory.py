"""Which engine and embedder the settings and template choose."""

from __future__ import annotations

import pytest

from compendium.engines.factory import build_embedder, build_engine
from compendium.engines.llm import LLMEngine
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.openai_embedder import OpenAIEmbedder
from compendium.engines.usage import UsageMeter
from compendium.errors import ConfigError
from compendium.settings import EmbeddingSettings, LLMSettings, Settings
from compendium.templates.schema import Template

ENDPOINT = "http://127.0.0.1:9/v1"  # never contacted: building makes no call


async def test_llm_engine_when_an_endpoint_is_set_with_the_templates_model():
    settings = Settings(llm=LLMSettings(base_url=ENDPOINT, model="settings-model"))
    engine = build_engine(settings, Template(name="t", models={"llm": "template-model"}), usage=UsageMeter())
    try:
        assert isinstance(engine, LLMEngine) and engine.model == "template-model"
    finally:
        await engine.close()
    engine = build_engine(settings, Template(name="t"), usage=UsageMeter())
    try:
        assert engine.model == "settings-model"
    finally:
        await engine.close()


async def test_offline_engine_without_an_endpoint():
    engine = build_engine(Settings(), Template(name="t"), usage=UsageMeter())
    try:
        assert engine.name == "offline"
    finally:
        await engine.close()


async def test_offline_embedder_by_default_even_with_an_llm_endpoint():
    settings = Settings(llm=LLMSettings(base_url=ENDPOINT))
    embedder = build_embedder(settings, Template(name="t"), usage=UsageMeter())
    assert isinstance(embedder, OfflineEmbedder)


async def test_template_embedding_model_uses_the_llm_endpoint():
    settings = Settings(llm=LLMSettings(base_url=ENDPOINT, api_key="k"))
    template = Template(name="t", models={"embedding": "text-embedding-3-small"})
    embedder = build_embedder(settings, template, usage=UsageMeter())
    try:
        assert isinstance(embedder, OpenAIEmbedder)
        assert embedder.client.base_url == ENDPOINT and embedder.dimensions == 1536
    finally:
        await embedder.close()
    # With no endpoint at all, the template's wish cannot be met: offline it is.
    assert isinstance(build_embedder(Settings(), template, usage=UsageMeter()), OfflineEmbedder)


async def test_embedding_endpoint_needs_a_model():
    settings = Settings(embedding=EmbeddingSettings(base_url=ENDPOINT))
    with pytest.raises(ConfigError, match="COMPENDIUM_EMBED_MODEL"):
        build_embedder(settings, Template(name="t"), usage=UsageMeter())
    settings = Settings(embedding=EmbeddingSettings(base_url=ENDPOINT, model="e5"))
    embedder = build_embedder(settings, Template(name="t"), usage=UsageMeter())
    try:
        assert isinstance(embedder, OpenAIEmbedder) and embedder.model == "e5"
    finally:
        await embedder.close()
