"""The word-match rerank of the fused passages (retrieval/rerank.py), with the bundled embedder."""

from __future__ import annotations

import numpy as np

from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.static_embedder import StaticEmbedder
from compendium.retrieval import Options
from compendium.retrieval.passages import _local
from compendium.retrieval.rerank import WordVectors, window_match, word_match
from compendium.retrieval.workspace import retrieve_in_workspace


def _unit(*rows: list[float]) -> np.ndarray:
    matrix = np.asarray(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_a_window_holding_every_question_word_beats_the_same_words_spread_apart():
    x, y, other = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]
    question = _unit(x, y)
    together = _unit(x, y, *[other] * 10)
    apart = _unit(x, *[other] * 10, y)
    assert window_match(question, together, window=4, stride=2) == 1.0
    assert window_match(question, apart, window=4, stride=2) == 0.5
    assert window_match(question, apart, window=12, stride=2) == 1.0  # one window holds both
    assert window_match(question, _unit(other)[:0]) == 0.0


def test_the_last_words_of_a_passage_get_a_window_of_their_own():
    x, other = [1.0, 0.0], [0.0, 1.0]
    passage = _unit(*[other] * 9, x)  # windows at 0 and 4 miss the last word; the last window holds it
    assert window_match(_unit(x), passage, window=5, stride=4) == 1.0


async def test_a_passage_whose_words_mean_the_question_s_matches_best():
    vectors = WordVectors(StaticEmbedder())
    match = await word_match(
        "How do I write the output with custom indentation?",
        {"indent": "The indentation string used when the writer emits nested values.",
         "parse": "Parse a document from a stream and report syntax errors."},
        vectors,
    )
    assert match["indent"] > match["parse"]
    assert await word_match("how and the?", {"a": "anything"}, vectors) == {}  # stopwords only


async def test_word_vectors_are_cached_and_a_word_without_content_has_none():
    embedder = StaticEmbedder()
    vectors = WordVectors(embedder)
    found = await vectors.of(["writer", "writer", "—"])
    assert set(found) == {"writer"}
    assert np.allclose(found["writer"], (await embedder.embed(["writer"]))[0])
    assert (await vectors.of(["writer"]))["writer"] is found["writer"]


def test_only_the_bundled_embedder_reranks():
    # an endpoint's embedder would be called (and paid) for every new word of the passages
    assert _local(StaticEmbedder())
    assert not _local(OfflineEmbedder())


async def test_the_rerank_keeps_top_k_a_cut_off_and_can_be_turned_off(compiled_offline):
    question = "How does the buffer pool choose a page to evict?"
    for rerank in (0.15, 0.0):
        five = await retrieve_in_workspace(compiled_offline, question, Options(top_k=5, rerank=rerank))
        ten = await retrieve_in_workspace(compiled_offline, question, Options(top_k=10, rerank=rerank))
        assert [c["chunk_id"] for c in ten.chunks[:5]] == [c["chunk_id"] for c in five.chunks]
        assert five.chunks[0]["document"] == "corpus/storage/buffer-pool.md"
