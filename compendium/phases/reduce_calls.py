"""What REDUCE's engine calls share: cached answers read in batches, calls run together, the
prompt a cache key names, and tier 2's embeddings cached by (model, text)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Sequence
from typing import Any

import numpy as np

from ..fingerprint import fingerprint
from ..pipeline.context import CompileContext
from ..storage.records import CacheEntry
from ..templates.render import prompt_source

GET_BATCH = 500  # ids per store read
_EMBED_BATCH = 256


def prompt_key(configured: str, name: str) -> str:
    """The prompt's source as cache keys name it (a built-in one not shipped: its name)."""
    try:
        return prompt_source(configured, name)
    except OSError:  # built-in prompt not shipped: the engine uses its own; key by name
        return f"builtin:{name}"


async def cached_entries(ctx: CompileContext, ids: Sequence[str]) -> dict[str, CacheEntry]:
    """The cache entries with these ids that exist, by id."""
    out: dict[str, CacheEntry] = {}
    for s in range(0, len(ids), GET_BATCH):
        for entry in await ctx.store.get(CacheEntry, list(ids[s : s + GET_BATCH])):
            out[entry.id] = entry  # type: ignore[assignment]
    return out


async def run_all(calls: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run them together; every one finishes (answers that arrived stay stored), then the first error is raised."""
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    if errors:
        raise errors[0]



async def embed_texts(ctx: CompileContext, texts: Sequence[str]) -> np.ndarray:
    """Vectors of texts, embedding only those not cached under (embedder model, text)."""
    model = ctx.embedder.model
    keys = [fingerprint(model, t) for t in texts]
    cached = await cached_entries(ctx, list(dict.fromkeys(keys)))
    vectors: dict[str, np.ndarray] = {k: np.asarray(e.vector, dtype=np.float32) for k, e in cached.items() if e.vector is not None}
    todo = list(dict.fromkeys(k for k in keys if k not in vectors))
    text_of = dict(zip(keys, texts, strict=True))

    async def one(batch: list[str]) -> None:
        got = await ctx.embedder.embed([text_of[k] for k in batch])
        now = time.time()
        await ctx.store.upsert(
            CacheEntry(id=k, namespace="embedding", vector=np.asarray(v, dtype=np.float32), created_at=now)
            for k, v in zip(batch, got, strict=True)
        )
        vectors.update(zip(batch, np.asarray(got, dtype=np.float32), strict=True))

    # Together: the embedder's client bounds how many are in flight.
    await run_all([one(todo[s : s + _EMBED_BATCH]) for s in range(0, len(todo), _EMBED_BATCH)])
    if not keys:
        return np.zeros((0, ctx.embedder.dimensions), dtype=np.float32)
    return np.stack([vectors[k] for k in keys])
