"""An offline semantic embedder: static token vectors that ship inside an installed wheel.

The vectors are WordLlama's (the `wordllama` package, MIT): a 32,000-token table of 256-d
vectors distilled from a large language model's input embeddings, with the tokenizer beside
it. A text's vector is the mean of its content tokens' vectors (function words and punctuation
left out: measured, they pull every text toward one another), L2-normalised. Nothing is downloaded:
the files are read from the package folder, found without importing the package (its
`__init__` configures the root logger and pulls in its training and HTTP code, none of which
is needed here).

Measured on three manuals' question sets (benchmarks/reports/retrieval.md): passages by
meaning where the hashed n-gram embedder only matches letters; about 0.1 s of CPU per 1,000
chunks. Names in REDUCE keep the hashed n-gram embedder (offline_embedder.py): there
letters matter more than meaning.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError
from .usage import UsageMeter

PACKAGE = "wordllama"
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
MODEL = "wordllama-l2-supercat-256/content-tokens"
MAX_TOKENS = 512  # of one text: the start says what it is about, and it bounds the cost
_TABLES: dict[str, tuple[np.ndarray, Any]] = {}  # one table per process, shared by embedders
# English function words: a token that spells one of these (or no letter or digit) is left out
_FUNCTION_WORDS = frozenset(
    """a an and are as at be by can could did do does for from had has have how i if in into is
    it its me my of on or our should so than that the their them then there these they this to
    was we were what when where which who whom why will with would you your about after before
    doing done also any all each more most other some such only own same too very just not no
    nor out over under up down again further once here both few off""".split()
)


def package_folder(package: str = PACKAGE) -> Path:
    """Where the package's files are installed, without running its `__init__`."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the offline semantic embedder needs the {package!r} package, which is not installed",
            hint="pip install -e . installs it (it is a dependency of compendium)",
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _load(folder: Path) -> tuple[np.ndarray, Any]:
    key = str(folder)
    found = _TABLES.get(key)
    if found is not None:
        return found
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    weights, tokenizer_file = folder / WEIGHTS, folder / TOKENIZER
    if not weights.is_file() or not tokenizer_file.is_file():
        raise ConfigError(f"the {PACKAGE} package at {folder} lacks {WEIGHTS} or {TOKENIZER}",
                          hint=f"reinstall it: pip install --force-reinstall {PACKAGE}")
    # kept as stored (float16): a text's rows are widened when gathered, so loading pays no
    # conversion of the whole table
    table = np.array(next(iter(load_file(str(weights)).values())))
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    for token, index in tokenizer.get_vocab().items():
        spelled = token.replace("\u2581", "").replace("\u0120", "").casefold()
        if index < table.shape[0] and (spelled in _FUNCTION_WORDS or not any(c.isalnum() for c in spelled)):
            table[index] = 0.0  # a zero row adds nothing to a sum
    tokenizer.no_padding()
    tokenizer.no_truncation()
    _TABLES[key] = (table, tokenizer)
    return table, tokenizer


class StaticEmbedder:
    """Mean-pooled static token vectors: semantic, offline, about as fast as hashing."""

    def __init__(self, usage: UsageMeter | None = None, folder: Path | None = None):
        self._folder = folder
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None
        self.model = MODEL
        self.dimensions = 256
        self.usage = usage or UsageMeter()

    def _ready(self) -> tuple[np.ndarray, Any]:
        if self._table is None:
            self._table, self._tokenizer = _load(self._folder or package_folder())
        return self._table, self._tokenizer

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_sync(texts)

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), 256), float32, unit rows (a text without tokens: one fixed unit
        vector, as the hashed embedder gives)."""
        table, tokenizer = self._ready()
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        out[:, 0] = 1.0
        if not texts:
            return out
        encoded = tokenizer.encode_batch([t[: MAX_TOKENS * 8] for t in texts], add_special_tokens=False)
        ids = [e.ids[:MAX_TOKENS] for e in encoded]
        lengths = np.array([len(i) for i in ids], dtype=np.int64)
        filled = np.flatnonzero(lengths)
        if filled.size:
            flat = np.fromiter((t for i in ids for t in i), dtype=np.int64, count=int(lengths.sum()))
            np.clip(flat, 0, table.shape[0] - 1, out=flat)
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[filled]
            sums = np.add.reduceat(table[flat].astype(np.float32), starts, axis=0)
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            content = norms[:, 0] > 0  # a text of function words only keeps the fixed vector
            out[filled[content]] = sums[content] / norms[content]
        return out

    async def close(self) -> None:
        return None
