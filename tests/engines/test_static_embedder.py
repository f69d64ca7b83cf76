"""The offline semantic embedder: static vectors read from an installed wheel, nothing fetched."""

from __future__ import annotations

import logging
import sys

import numpy as np

from compendium.engines.factory import passage_embedder
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.static_embedder import MODEL, StaticEmbedder, package_folder


async def test_vectors_are_unit_rows_that_carry_meaning():
    embedder = StaticEmbedder()
    texts = ["How do I turn on foreign key constraints?",
             "PRAGMA foreign_keys enables enforcement of foreign key constraints.",
             "The weather in the mountains was cold and wet.",
             "", "the of and"]
    vectors = await embedder.embed(texts)
    assert vectors.shape == (5, embedder.dimensions) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    related, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert related > 0.5 > unrelated + 0.3
    assert np.array_equal(vectors[3], vectors[4])  # no content word: one fixed vector
    again = await StaticEmbedder().embed(texts[:3])
    assert np.array_equal(again, vectors[:3])  # deterministic, in and across embedders


def test_it_reads_the_installed_wheel_without_importing_the_package():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    StaticEmbedder().embed_sync(["a passage"])
    assert (package_folder() / "weights").is_dir()
    assert "wordllama" not in sys.modules  # its __init__ configures the root logger
    assert root.handlers == handlers and root.level == level


def test_passages_get_the_semantic_embedder_and_names_keep_the_hashed_one():
    hashed = OfflineEmbedder()
    assert passage_embedder(hashed).model == MODEL
    other = StaticEmbedder()
    assert passage_embedder(other) is other  # an endpoint's (or any other) embedder serves both
