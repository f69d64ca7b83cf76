"""Embeddings from an OpenAI-compatible endpoint: batched, retried, cached per text, unit length."""

from __future__ import annotations

import base64
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
        missing = [i for i, k in enumerate(keys) if k not in found]
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vectors = await self._embed_batch([texts[i] for i in batch])
            for i, vector in zip(batch, vectors, strict=True):
                found[keys[i]] = vector
            await self._remember([keys[i] for i in batch], vectors)
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    async def _embed_batch(self, texts: list[str]) -> np.ndarray:
        # Empty strings are rejected by some servers; a single space embeds as "nothing".
        inputs = [t if t.strip() else " " for t in texts]
        estimated = sum(count_tokens(t) for t in inputs)

        async def send() -> Any:
            return await self.client.sdk.embeddings.create(
                model=self.model, input=inputs, encoding_format="float"
            )

        with self.usage.reserve(estimated):
            response = await self.client.request(send, estimated_tokens=estimated)
        rows = sorted(response.data, key=lambda d: d.index)
        if len(rows) != len(inputs):
            raise ReplyError(
                f"the embedding endpoint at {self.client.endpoint} returned {len(rows)} vectors "
                f"for {len(inputs)} texts"
            )
        vectors = np.asarray([r.embedding for r in rows], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        vectors /= norms
        self.dimensions = int(vectors.shape[1])
        used = response.usage
        tokens = used.prompt_tokens if used else estimated
        self.usage.record_embedding(tokens)
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
