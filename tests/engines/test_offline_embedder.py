"""The offline embedder: deterministic, unit vectors, similar names close."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from compendium.engines.base import Embedder
from compendium.engines.offline_embedder import OfflineEmbedder

VARIANTS = [
    ("Jonathan Smith", "Jonathon Smith"),
    ("Microsoft Corporation", "Microsoft Corporaton"),
    ("International Business Machines", "International Busines Machines"),
    ("Acme Corp", "Acme Corp."),
    ("New York City", "new  york city"),
    ("University of Cambridge", "Univeristy of Cambridge"),
]
UNRELATED = [
    ("Jonathan Smith", "Maria Garcia"),
    ("Microsoft", "Apple"),
    ("Acme Corp", "Globex Inc"),
    ("machine learning", "deep sea fishing"),
    ("Paris", "London"),
]


def cosine(embedder: OfflineEmbedder, a: str, b: str) -> float:
    va, vb = embedder.embed_sync([a, b])
    return float(va @ vb)


async def test_vectors_are_unit_float32_rows_and_meet_the_protocol():
    embedder = OfflineEmbedder()
    assert isinstance(embedder, Embedder) and embedder.dimensions == 256
    vectors = await embedder.embed(["IBM", "", "  ", "Ünïcödé naïve café", "x" * 5000])
    assert vectors.shape == (5, 256) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (await embedder.embed([])).shape == (0, 256)


def test_same_vectors_in_another_process():
    here = OfflineEmbedder().embed_sync(["Grace Hopper", "COBOL"])
    code = (
        "import sys; from compendium.engines.offline_embedder import OfflineEmbedder;"
        "sys.stdout.buffer.write(OfflineEmbedder().embed_sync(['Grace Hopper', 'COBOL']).tobytes())"
    )
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert np.array_equal(here, np.frombuffer(there, dtype=np.float32).reshape(2, 256))


def test_batching_does_not_change_a_vector():
    embedder = OfflineEmbedder()
    names = [f"Entity number {i}" for i in range(5000)]  # more than one internal batch
    together = embedder.embed_sync(names)
    assert np.array_equal(together[4321], embedder.embed_sync([names[4321]])[0])


def test_a_text_gets_one_vector_wherever_it_sits_in_a_batch():
    embedder = OfflineEmbedder()
    vectors = embedder.embed_sync(["Grace Hopper", "COBOL", "Grace Hopper", "  grace\thopper. "])
    assert np.allclose(vectors[0], vectors[2]) and np.allclose(vectors[0], vectors[3])


def test_spelling_variants_are_close_and_unrelated_names_are_not():
    embedder = OfflineEmbedder()
    close = {pair: cosine(embedder, *pair) for pair in VARIANTS}
    apart = {pair: cosine(embedder, *pair) for pair in UNRELATED}
    for pair, score in [*close.items(), *apart.items()]:
        print(f"{pair[0]!r:36} {pair[1]!r:36} {score:.3f}")
    assert all(score > 0.85 for score in close.values()), close
    assert all(score < 0.5 for score in apart.values()), apart
    # A one-letter typo is closer than a shared first name.
    assert cosine(embedder, "Jonathan Smith", "Jonathon Smith") > cosine(embedder, "Jonathan Smith", "Jonathan Brown")


def test_a_batch_of_punctuation_only_gets_the_blank_vector():
    embedder = OfflineEmbedder()
    alone = embedder.embed_sync(["...", "?!"])
    assert np.array_equal(alone, embedder.embed_sync(["", ""]))
    assert np.array_equal(embedder.embed_sync(["...", "a name"])[0], alone[0])
