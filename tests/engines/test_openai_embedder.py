"""The endpoint embedder against the scripted server: batches, unit vectors, usage, cache."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from compendium.engines.factory import build_embedder
from compendium.engines.openai_embedder import OpenAIEmbedder
from compendium.engines.usage import UsageMeter
from compendium.errors import EngineUnavailable
from compendium.storage.factory import open_store
from compendium.storage.response_cache import StoreResponseCache
from compendium.templates.schema import Template
from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import LLMServer

TEMPLATE = Template(name="wiki")


def embedder_for(server: LLMServer, usage: UsageMeter, **overrides) -> OpenAIEmbedder:
    settings = settings_for(server, embeddings=True)
    embedding = settings.embedding.__class__(**{**settings.embedding.__dict__, **overrides})
    return OpenAIEmbedder.from_settings(embedding, model="test-embed", usage=usage)


async def test_batches_by_batch_size_and_returns_unit_vectors(llm_server):
    usage = UsageMeter()
    embedder = embedder_for(llm_server, usage, batch_size=4)
    texts = [f"name {i}" for i in range(10)]
    try:
        with UsageMeter.phase("reduce"):
            vectors = await embedder.embed(texts)
    finally:
        await embedder.close()
    assert vectors.shape == (10, 64) and vectors.dtype == np.float32 and embedder.dimensions == 64
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert llm_server.calls["embeddings"] == 3
    used = usage.get("reduce")
    assert used.embedding_calls == 3 and used.embedding_tokens == llm_server.prompt_tokens


async def test_order_is_kept_and_retries_apply(llm_server):
    llm_server.fail_next(1, "500")
    usage = UsageMeter()
    embedder = embedder_for(llm_server, usage, batch_size=3)
    try:
        vectors = await embedder.embed(["alpha", "beta", "gamma", "alpha"])
        single = await embedder.embed(["gamma"])
    finally:
        await embedder.close()
    assert np.allclose(vectors[0], vectors[3]) and np.allclose(vectors[2], single[0])
    assert llm_server.calls["fault_500"] == 1


async def test_cached_texts_are_not_sent_again(llm_server, tmp_path):
    store = await open_store(str(tmp_path / "cache.db"))
    usage = UsageMeter()
    settings = settings_for(llm_server, embeddings=True)
    try:
        first = build_embedder(settings, TEMPLATE, usage=usage, cache=StoreResponseCache(store))
        try:
            a = await first.embed(["IBM", "Watson"])
        finally:
            await first.close()
        second = build_embedder(settings, TEMPLATE, usage=usage, cache=StoreResponseCache(store))
        try:
            b = await second.embed(["Watson", "Grace Hopper", "IBM"])
        finally:
            await second.close()
    finally:
        await store.close()
    assert np.array_equal(a[0], b[2]) and np.array_equal(a[1], b[0])
    assert llm_server.calls["embeddings"] == 2
    assert llm_server.requests == []  # no chat calls
    assert usage.get("other").embedding_tokens == llm_server.prompt_tokens


async def test_wrong_key_names_the_embedding_variable():
    with LLMServer(api_key="right") as server:
        settings = settings_for(server, embeddings=True)
        embedding = settings.embedding.__class__(**{**settings.embedding.__dict__, "api_key": "wrong"})
        embedder = OpenAIEmbedder.from_settings(embedding, model="test-embed", usage=UsageMeter())
        try:
            with pytest.raises(EngineUnavailable, match="COMPENDIUM_EMBED_API_KEY"):
                await embedder.embed(["x"])
        finally:
            await embedder.close()


def _floats_from(server: LLMServer, texts: list[str]) -> np.ndarray:
    """The server's vectors as it writes them in JSON float lists, made unit length."""
    reply = httpx.post(f"{server.base_url}/embeddings", json={"model": "test-embed", "input": texts,
                                                            "encoding_format": "float"},
                       headers={"Authorization": "Bearer test-key"})
    rows = sorted(reply.json()["data"], key=lambda r: r["index"])
    vectors = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.parametrize("server_sends_floats", [False, True], ids=["base64", "server-ignores-base64"])
async def test_vectors_are_asked_as_base64_and_equal_the_float_ones(llm_server, server_sends_floats):
    llm_server.embeddings_as_floats = server_sends_floats
    texts = ["Segment Compaction Daemon", "the janitor", "", "Ledger Routing Service"]
    embedder = embedder_for(llm_server, UsageMeter(), batch_size=3)
    try:
        vectors = await embedder.embed(texts)
    finally:
        await embedder.close()
    expected = _floats_from(llm_server, [t or " " for t in texts])
    assert np.array_equal(vectors, expected)
    assert llm_server.calls["embeddings_base64"] == (0 if server_sends_floats else 2)


async def test_batches_go_out_together_under_the_concurrency_limit(llm_server):
    llm_server.set_latency(0.05)
    embedder = embedder_for(llm_server, UsageMeter(), batch_size=2)
    try:
        vectors = await embedder.embed([f"name {i}" for i in range(12)])
    finally:
        await embedder.close()
    assert llm_server.calls["embeddings"] == 6 and vectors.shape == (12, 64)
    assert llm_server.most_in_flight["embeddings"] > 1


async def test_a_reply_with_too_few_vectors_is_a_reply_error():
    from compendium.engines.openai_embedder import read_embeddings
    from compendium.errors import ReplyError

    body = b'{"data": [{"index": 0, "embedding": "AACAPw=="}], "usage": {"prompt_tokens": 3}}'
    vectors, tokens = read_embeddings(body, 1, "http://x/v1")
    assert vectors.tolist() == [[1.0]] and tokens == 3
    with pytest.raises(ReplyError, match="returned 1 vectors for 2 texts"):
        read_embeddings(body, 2, "http://x/v1")
    with pytest.raises(ReplyError, match="not a vector of numbers"):
        read_embeddings(b'{"data": [{"index": 0, "embedding": "not base64!"}]}', 1, "http://x/v1")


@pytest.mark.parametrize("budget", [None, 10_000])
async def test_a_server_that_reports_no_usage_is_counted_by_our_estimate(llm_server, budget):
    from compendium.tokens import count_tokens

    llm_server.reports_usage = False
    usage = UsageMeter(budget_tokens=budget)
    embedder = embedder_for(llm_server, usage)
    texts = ["buffer pool", "write-ahead log entries", "vacuum"]
    try:
        with UsageMeter.phase("reduce"):
            await embedder.embed(texts)
    finally:
        await embedder.close()
    assert usage.get("reduce").embedding_tokens == sum(count_tokens(t) for t in texts)
