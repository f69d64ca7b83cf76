"""The retrieval index: built by the compile, checked by every question, never rebuilt by one."""

from __future__ import annotations

import dataclasses

import pytest

from compendium.engines.static_embedder import MODEL
from compendium.operations import compile_workspace, opened_store
from compendium.retrieval import Options
from compendium.retrieval.index import IndexMismatch, index_mark
from compendium.retrieval.workspace import retrieve_in_workspace
from compendium.storage.records import Chunk, ChunkEmbedding
from tests.support.llm_fixtures import settings_for

QUESTION = "How does the buffer pool evict pages?"


async def test_the_compile_builds_the_index_and_a_question_embeds_nothing(compiled_copy):
    async with opened_store(compiled_copy) as store:
        mark = await index_mark(store)
        assert mark and mark["model"] == MODEL and mark["chunks"] == await store.count(Chunk)
        vectors = {r.id: r.content_hash async for r in store.scan(ChunkEmbedding)}
    assert len(vectors) == mark["chunks"]
    await retrieve_in_workspace(compiled_copy, QUESTION, Options())
    async with opened_store(compiled_copy) as store:
        assert await index_mark(store) == mark  # read, not rebuilt
        assert {r.id: r.content_hash async for r in store.scan(ChunkEmbedding)} == vectors


async def test_another_embedder_is_refused_naming_both_and_the_command(compiled_copy, llm_server):
    pointed = settings_for(llm_server, embeddings=True)
    settings = dataclasses.replace(compiled_copy, embedding=pointed.embedding)
    with pytest.raises(IndexMismatch) as refused:
        await retrieve_in_workspace(settings, QUESTION, Options())
    text = f"{refused.value} {refused.value.hint}"
    assert MODEL in text and "test-embed" in text and "compendium compile" in text
    assert llm_server.calls["embeddings"] == 0  # nothing embedded behind the question's back
    report = await compile_workspace(settings)  # the command it names re-embeds
    assert report.status == "succeeded"
    result = await retrieve_in_workspace(settings, QUESTION, Options(top_k=3))
    assert len(result.chunks) == 3


async def test_a_knowledge_base_without_an_index_is_refused_until_compiled(compiled_copy):
    async with opened_store(compiled_copy) as store:
        await store.delete(ChunkEmbedding, {})
        from compendium.storage.records import CacheEntry

        await store.delete(CacheEntry, {"id": ["retrieval:index"]})
    with pytest.raises(IndexMismatch, match="no retrieval index"):
        await retrieve_in_workspace(compiled_copy, QUESTION, Options())
    async with opened_store(compiled_copy) as store:
        assert await store.count(ChunkEmbedding) == 0
