"""The Store contract on Elasticsearch 8.x/9.x (COMPENDIUM_TEST_ES_URL, e.g. elasticsearch://127.0.0.1:9200?prefix=ctest)."""

from __future__ import annotations

import pytest

from compendium.storage.factory import open_store

from .conftest import drop_kbs, fresh_kb, server_url
from .store_contract import StoreContract


@pytest.fixture
def kb_names():
    return [fresh_kb(), fresh_kb()]


@pytest.fixture
def other_kb(kb_names) -> str:
    return kb_names[1]


@pytest.fixture
async def store(kb_names):
    store = await open_store(server_url("COMPENDIUM_TEST_ES_URL"), kb=kb_names[0])
    yield store
    await drop_kbs(store, kb_names)
    await store.close()


class TestElasticsearchStore(StoreContract):
    exact_knn = False  # HNSW answers approximately

    async def test_info_names_elasticsearch(self, store):
        info = await store.info()
        assert info["backend"] == "elasticsearch" and info["server_version"]
