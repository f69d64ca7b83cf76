"""Embeddings from an OpenAI-compatible endpoint: batched, retried, cached per text, unit length."""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ReplyError
from ..fingerprint import fingerprint
from ..settings import EmbeddingSettings
from .cache import ResponseCache
from .openai_client import OpenAIClient, count_tokens
from .usage import UsageMeter

CACHE_NAMESPACE = "embedding"

# Widths of well-known models, so `dimensions` is right before the first call; any other
# model's width is learnt from its first reply.
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder:
    """Embedder over /v1/embeddings. Vectors of texts seen before come from the cache store."""

    def __init__(self, client: OpenAIClient, *, batch_size: int = 128, cache: ResponseCache | None = None):
        self.client = client
        self.model = client.model
        self.batch_size = max(1, batch_size)
        self.cache = cache
        self.dimensions = KNOWN_DIMENSIONS.get(self.model, 0)

    @classmethod
    def from_settings(
        cls,
        settings: EmbeddingSettings,
        *,
        model: str,
        usage: UsageMeter,
        cache: ResponseCache | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
    ) -> OpenAIEmbedder:
        """`base_url`/`api_key` override the settings' (used when embeddings share the LLM endpoint)."""
        client = OpenAIClient(
            base_url=base_url or settings.base_url or "",
            api_key=api_key if base_url else settings.api_key,
            model=model,
            usage=usage,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            retry_wait=settings.retry_wait,
            role="EMBEDDING",
        )
        return cls(client, batch_size=settings.batch_size, cache=cache)

    @property
    def usage(self) -> UsageMeter:
        return self.client.usage

    async def close(self) -> None:
        await self.client.close()

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        keys = [fingerprint(self.model, t) for t in texts]
        found = await self._cached(keys)
        missing = list(dict.fromkeys(k for k in keys if k not in found))  # a repeated text is asked once
        text_of = dict(zip(keys, texts, strict=True))

        async def one(batch: list[str]) -> None:
            vectors = await self._embed_batch([text_of[k] for k in batch])
            found.update(zip(batch, vectors, strict=True))
            await self._remember(batch, vectors)  # at once: a later failure loses no paid batch

        # Batches go out together; the client's concurrency limit decides how many are in flight.
        batches = [missing[s : s + self.batch_size] for s in range(0, len(missing), self.batch_size)]
        outcomes = await asyncio.gather(*(one(b) for b in batches), return_exceptions=True)
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        if errors:
            raise errors[0]
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    async def _embed_batch(self, texts: list[str]) -> np.ndarray:
        # Empty strings are rejected by some servers; a single space embeds as "nothing".
        inputs = [t if t.strip() else " " for t in texts]
        estimated = sum(count_tokens(t) for t in inputs) if self.client.counts_ahead() else 0
        body = {"model": self.model, "input": inputs, "encoding_format": "base64"}

        with self.usage.reserve(estimated) as hedges:

            async def send() -> bytes:
                # Raw bytes, read below: base64 is a quarter of the float text to send and parse,
                # and the SDK's typed reply (a Python float object per dimension) is skipped.
                return await self.client.post("/embeddings", body, may_hedge=hedges)

            raw = await self.client.request(send, estimated_tokens=estimated)
        vectors, tokens = read_embeddings(raw, len(inputs), self.client.endpoint)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        vectors /= norms
        self.dimensions = int(vectors.shape[1])
        if tokens is None:  # a server that does not say: our estimate
            tokens = estimated or sum(count_tokens(t) for t in inputs)
        self.usage.record_embedding(tokens, hedged=hedges.sent)
        self.client.limits.settle(estimated, tokens)
        return vectors

    async def _cached(self, keys: list[str]) -> dict[str, np.ndarray]:
        if self.cache is None or not keys:
            return {}
        out: dict[str, np.ndarray] = {}
        for key, value in (await self.cache.get(keys)).items():
            if isinstance(value, dict) and isinstance(value.get("f32"), str):
                out[key] = np.frombuffer(base64.b64decode(value["f32"]), dtype="<f4")
        return out

    async def _remember(self, keys: list[str], vectors: np.ndarray) -> None:
        if self.cache is None:
            return
        # Kept as a value, not as a KNN vector: backends may fix the vector field's width,
        # and these vectors are only ever looked up by key.
        await self.cache.put(CACHE_NAMESPACE, {
            k: {"model": self.model, "f32": base64.b64encode(v.astype("<f4").tobytes()).decode()}
            for k, v in zip(keys, vectors, strict=True)
        })


def read_embeddings(raw: bytes, expected: int, endpoint: str) -> tuple[np.ndarray, int | None]:
    """The vectors (in input order, float32) and prompt tokens of an /embeddings reply body.

    Rows come base64-encoded little-endian float32 as asked, or as float lists from a server
    that ignores `encoding_format`.
    """
    where = f"the embedding endpoint at {endpoint}"
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ReplyError(f"{where} answered with a body that is not JSON") from exc
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ReplyError(f"{where} answered without a list of embeddings")
    if len(rows) != expected:
        raise ReplyError(f"{where} returned {len(rows)} vectors for {expected} texts")
    rows = sorted(rows, key=lambda r: r.get("index", 0) if isinstance(r.get("index"), int) else 0)
    try:
        vectors = [_vector(r.get("embedding")) for r in rows]
        out = np.stack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
    except (ValueError, TypeError, binascii.Error) as exc:
        raise ReplyError(f"{where} returned an embedding that is not a vector of numbers ({exc})") from exc
    if out.ndim != 2 or (out.size and not np.isfinite(out).all()):
        raise ReplyError(f"{where} returned vectors of different widths or with non-finite numbers")
    usage = data.get("usage")
    tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    return out.astype(np.float32, copy=False), tokens if isinstance(tokens, int) else None


def _vector(value: Any) -> np.ndarray:
    if isinstance(value, str):
        return np.frombuffer(base64.b64decode(value, validate=True), dtype="<f4")
    if isinstance(value, list):
        return np.asarray(value, dtype=np.float32)
    raise TypeError(f"got {type(value).__name__}")
