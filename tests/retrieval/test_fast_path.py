"""A question's own cost: the compile's vector file answers the dense search, the static
embedder maps its table, and `compendium retrieve` imports only what a question runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from compendium.engines.static_embedder import StaticEmbedder
from compendium.operations import opened_store
from compendium.retrieval import Options
from compendium.retrieval.index import index_mark
from compendium.retrieval.vectors import nearest, vector_file
from compendium.retrieval.workspace import retrieve_in_workspace
from compendium.storage.records import ChunkEmbedding

QUESTIONS = [
    "How does the buffer pool evict pages?",
    "What happens to a transaction ID at wraparound?",
    "How are pages written to disk?",
]


async def test_the_compile_writes_the_vectors_beside_the_store_and_a_question_reads_them(compiled_copy):
    async with opened_store(compiled_copy) as store:
        mark = await index_mark(store)
        target = await vector_file(store, mark["model"])
        assert target is not None and target.is_file() and target.parent == Path(store.url.split("///", 1)[1]).parent
        assert mark["vectors"]["file"] == target.name and mark["vectors"]["rows"] == mark["chunks"]
        vector = (await StaticEmbedder().embed([QUESTIONS[0]]))[0]
        from_file = await nearest(store, mark["model"], mark, vector, 10)
        from_store = await store.knn(ChunkEmbedding, vector, 10, {"model": mark["model"]})
    assert from_file is not None
    assert [i for i, _ in from_file] == [r.id for r, _ in from_store]
    assert np.allclose([s for _, s in from_file], [s for _, s in from_store], atol=1e-5)


async def test_the_ranking_is_the_same_with_and_without_the_vector_file(compiled_copy):
    with_file = [await retrieve_in_workspace(compiled_copy, q, Options(top_k=10)) for q in QUESTIONS]
    async with opened_store(compiled_copy) as store:
        target = await vector_file(store, (await index_mark(store))["model"])
    target.unlink()
    without = [await retrieve_in_workspace(compiled_copy, q, Options(top_k=10)) for q in QUESTIONS]
    for a, b in zip(with_file, without, strict=True):
        assert [c["chunk_id"] for c in a.chunks] == [c["chunk_id"] for c in b.chunks]


async def test_a_vector_file_of_another_build_is_not_trusted(compiled_copy):
    async with opened_store(compiled_copy) as store:
        mark = await index_mark(store)
        target = await vector_file(store, mark["model"])
        vector = (await StaticEmbedder().embed([QUESTIONS[0]]))[0]
        stale = {**mark, "vectors": {**mark["vectors"], "built_at": mark["vectors"]["built_at"] - 1}}
        assert await nearest(store, mark["model"], stale, vector, 5) is None
        # a file whose rows disagree with the ids it lists (a build cut short) is not read either
        ids = target.with_name(target.name[: -len(".npy")] + ".ids.json")
        listing = json.loads(ids.read_text())
        ids.write_text(json.dumps({**listing, "ids": listing["ids"][:-1]}))
        from compendium.retrieval import vectors

        vectors._OPEN.clear()
        assert await nearest(store, mark["model"], mark, vector, 5) is None
    result = await retrieve_in_workspace(compiled_copy, QUESTIONS[0], Options(top_k=5))
    assert len(result.chunks) == 5  # the store's own search answers


def test_the_static_embedder_gives_one_vector_per_text_whatever_else_is_in_the_batch():
    texts = ["How do I attach a second database file?", "the of and", "", "!!!",
             "Json::Value::isConvertibleTo() tells whether a value converts " * 40]
    alone = np.stack([StaticEmbedder().embed_sync([t])[0] for t in texts])
    together = StaticEmbedder().embed_sync(texts)
    assert np.allclose(alone, together, atol=1e-6)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(together[1], together[2])  # function words alone: the fixed vector
    reversed_batch = StaticEmbedder().embed_sync(texts[::-1])[::-1]
    assert np.allclose(reversed_batch, together, atol=1e-6)


# What a question does not run: the compiler, the template's schema and its Jinja prompts (an
# offline workspace's template names no model), the engines' task models, the LLM client, the
# compile's progress events, pydantic (the settings file's values are of their types), and
# numpy.ma (np.unique's)
NOT_ON_THE_QUERY_PATH = (
    "pydantic", "compendium.operations", "compendium.compiler", "compendium.templates.schema",
    "compendium.templates.loader", "jinja2", "compendium.engines.base", "compendium.engines.tasks",
    "compendium.engines.llm", "compendium.engines.openai_client", "openai",
    "compendium.pipeline.events", "rich", "safetensors", "numpy.ma",
)


@pytest.mark.parametrize(("command", "also_absent"), [
    ("retrieve", ("compendium.retrieval.answer", "compendium.retrieval.rewrite")),
    ("ask", ()),
])
def test_a_question_process_imports_only_what_it_runs(compiled_copy, command, also_absent):
    absent = NOT_ON_THE_QUERY_PATH + also_absent
    code = (
        "import sys; from compendium.cli import main; "
        f"code = main(['-w', {str(compiled_copy.workspace)!r}, {command!r}, {QUESTIONS[2]!r}]); "
        f"print('imported:', [m for m in {absent!r} if m in sys.modules]); sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "[C1]" in done.stdout  # it answered, from the passages
    assert done.stdout.rstrip().endswith("imported: []"), done.stdout[-300:]


def test_the_question_rewrite_model_is_still_importable_from_terms():
    from compendium.retrieval.terms import QuestionRewrite

    assert set(QuestionRewrite.model_json_schema()["properties"]) == {"names", "keywords"}


async def test_a_compile_with_another_embedder_replaces_the_vector_file(compiled_copy, llm_server):
    import dataclasses

    from compendium.operations import compile_workspace
    from tests.support.llm_fixtures import settings_for

    async with opened_store(compiled_copy) as store:
        before = await vector_file(store, (await index_mark(store))["model"])
    assert before.is_file()
    settings = dataclasses.replace(compiled_copy, embedding=settings_for(llm_server, embeddings=True).embedding)
    assert (await compile_workspace(settings)).status == "succeeded"
    async with opened_store(settings) as store:
        mark = await index_mark(store)
        after = await vector_file(store, mark["model"])
    assert mark["model"] == "test-embed" and after.is_file() and mark["vectors"]["file"] == after.name
    assert not before.exists()  # 4 bytes x dimensions per chunk are not left behind
    result = await retrieve_in_workspace(settings, QUESTIONS[0], Options(top_k=3))
    assert len(result.chunks) == 3
