"""Fixtures of the engine tests: a SQLite store holding the client's response cache."""

from __future__ import annotations

import pytest

from compendium.storage.factory import open_store
from compendium.storage.records import CacheEntry


@pytest.fixture
async def store(tmp_path):
    opened = await open_store(f"sqlite:///{tmp_path / 'cache.db'}")
    yield opened
    await opened.close()


async def cached_replies(store) -> list[str]:
    """The model replies the client cached, in store order."""
    return [e.value["content"] async for e in store.scan(CacheEntry) if e.namespace == "llm"]  # type: ignore[attr-defined]
