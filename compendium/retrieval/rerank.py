"""A rerank of the fused passages' head by how closely a passage's words meet the question's.

Each question word (stopwords left out) takes its best cosine to a word of the passage, with the
static word vectors of the bundled offline embedder; their mean is the passage's match, taken in
its best window of consecutive words. A mean-pooled passage vector blurs a question's several
words into one direction, and full text only counts exact words: here "indentation" meets
"indent" (cosine 0.58) and "builder" meets "CharReaderBuilder" (0.58), and a passage scores when
every word of the question meets one in the same place. The window keeps a long passage from
matching every word somewhere (a changelog, an API listing).

Word vectors are the embedder's vector of the word alone: one call per word never seen before,
which is why only a local embedder is used (an endpoint would be paid per word).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..storage.text import STOPWORDS, words

HEAD = 30  # passages of the fused ranking reranked; fixed, so --top K stays a cut-off
WINDOW = 24  # words of a passage matched at once
STRIDE = 12
MAX_CACHED = 20_000  # word vectors kept per process (1 kB each at 256 dimensions)


class WordVectors:
    """Vectors of single words by one embedder, cached; a word the embedder finds no content in
    (its vector is the one of an empty text) has none."""

    def __init__(self, embedder: Any):
        self.embedder = embedder
        self._known: dict[str, np.ndarray | None] = {}
        self._empty: np.ndarray | None = None

    async def of(self, items: Sequence[str]) -> dict[str, np.ndarray]:
        if self._empty is None:
            self._empty = np.asarray((await self.embedder.embed([""]))[0], dtype=np.float32)
        new = [w for w in dict.fromkeys(items) if w not in self._known]
        if new:
            if len(self._known) + len(new) > MAX_CACHED:
                self._known.clear()
            for word, vector in zip(new, await self.embedder.embed(new), strict=True):
                vector = np.asarray(vector, dtype=np.float32)
                self._known[word] = None if np.array_equal(vector, self._empty) else vector
        found = {w: self._known.get(w) for w in items}
        return {w: v for w, v in found.items() if v is not None}


_VECTORS: dict[int, WordVectors] = {}  # per embedder object: a long-lived process reuses its cache


def word_vectors(embedder: Any) -> WordVectors:
    found = _VECTORS.get(id(embedder))
    if found is None or found.embedder is not embedder:
        if len(_VECTORS) > 8:
            _VECTORS.clear()
        found = _VECTORS[id(embedder)] = WordVectors(embedder)
    return found


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS]


def window_match(question: np.ndarray, passage: np.ndarray, window: int = WINDOW,
                 stride: int = STRIDE) -> float:
    """The best, over windows of `window` consecutive passage words (every `stride` words, and
    the last window), of the mean over question words of their best cosine in the window.
    `question` (q x d) and `passage` (n x d) hold unit rows; `window` is a multiple of `stride`."""
    if not len(question) or not len(passage):
        return 0.0
    return _best_window(question @ passage.T, window, stride)


def _best_window(similarity: np.ndarray, window: int, stride: int) -> float:
    n = similarity.shape[1]
    if n <= window:
        return float(similarity.max(axis=1).mean())
    # each question word's best per block of `stride` words; a window is `window // stride`
    # whole blocks side by side, and the last window (ending at the last word) is taken alone
    blocks = window // stride
    whole = n // stride
    best = np.maximum.reduceat(similarity[:, : whole * stride], np.arange(0, whole * stride, stride), axis=1)
    spans = np.lib.stride_tricks.sliding_window_view(best, blocks, axis=1).max(axis=2)
    last = similarity[:, n - window :].max(axis=1).mean()
    return float(max(spans.mean(axis=0).max(), last))


async def word_match(question: str, passages: Mapping[str, str], vectors: WordVectors) -> dict[str, float]:
    """Each passage's match to the question (passage id -> text), in [0, 1] for unit vectors;
    {} when the question has no word with a vector."""
    asked = list(dict.fromkeys(content_words(question)))
    texts = {i: content_words(t) for i, t in passages.items()}
    known = await vectors.of(asked + [w for ws in texts.values() for w in ws])
    rows = [known[w] for w in asked if w in known]
    if not rows:
        return {}
    present = {i: [w for w in ws if w in known] for i, ws in texts.items()}
    every = [w for ws in present.values() for w in ws]
    if not every:
        return {i: 0.0 for i in passages}
    similarity = np.stack(rows) @ np.stack([known[w] for w in every]).T  # one product for all
    out, at = {}, 0
    for i, ws in present.items():
        out[i] = _best_window(similarity[:, at : at + len(ws)], WINDOW, STRIDE) if ws else 0.0
        at += len(ws)
    return out
