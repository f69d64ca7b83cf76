"""Phase fixtures: a real SQLite file, the scripted OpenAI-compatible server and the real engines."""

from __future__ import annotations

import pytest

from compendium.engines.factory import build_embedder, build_engine
from compendium.engines.usage import UsageMeter
from compendium.pipeline.context import CompileContext
from compendium.settings import LLMSettings, Settings
from compendium.storage.factory import open_store
from compendium.templates.schema import Template
from tests.support.llm_server import LLMServer


@pytest.fixture(scope="session")
def running_server():
    with LLMServer() as running:
        yield running


@pytest.fixture
def server(running_server):
    """The shared server with zeroed counters, no queued faults and the default responder."""
    default = running_server.responder
    running_server.reset()
    yield running_server
    running_server.responder = default
    running_server.reset()


@pytest.fixture
async def store(tmp_path):
    opened = await open_store(f"sqlite:///{tmp_path / 'kb.db'}")
    yield opened
    await opened.close()


@pytest.fixture
async def make_ctx(server, store):
    """Builds a CompileContext for a template with the LLM engine pointed at the test server."""
    engines = []

    def make(template: Template, *, retries: int = 0, budget: int | None = None) -> CompileContext:
        usage = UsageMeter(budget_tokens=budget)
        settings = Settings(
            llm=LLMSettings(base_url=server.base_url, api_key="test-key", model="test-chat",
                            max_retries=retries, retry_wait=0.01, timeout=5.0, hedge=False)  # requests counted
        )
        engine = build_engine(settings, template, usage=usage)
        embedder = build_embedder(settings, template, usage=usage)
        engines.append(engine)
        return CompileContext(store=store, engine=engine, embedder=embedder, template=template)

    yield make
    for engine in engines:
        await engine.close()
