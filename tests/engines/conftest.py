"""Fixtures of the engine tests: a SQLite store holding the client's response cache, and an engine
over a model of small context."""

from __future__ import annotations

import pytest

from compendium.engines.factory import build_engine
from compendium.engines.usage import UsageMeter
from compendium.storage.factory import open_store
from compendium.storage.records import CacheEntry
from compendium.templates.schema import Template
from tests.support.llm_fixtures import settings_for


@pytest.fixture
async def store(tmp_path):
    opened = await open_store(f"sqlite:///{tmp_path / 'cache.db'}")
    yield opened
    await opened.close()


async def cached_replies(store) -> list[str]:
    """The model replies the client cached, in store order."""
    return [e.value["content"] async for e in store.scan(CacheEntry) if e.namespace == "llm"]  # type: ignore[attr-defined]


@pytest.fixture
async def small(llm_server):
    """An engine over a model of small context, as a local 1.5B model is served."""
    built = build_engine(settings_for(llm_server, context_tokens=8192), Template(name="wiki"), usage=UsageMeter())
    yield built
    await built.close()
