"""An engine's response cache kept in a store, as cache entries named by their key."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from .base import Store
from .records import CacheEntry


class StoreResponseCache:
    """Implements engines.cache.ResponseCache over a store (one batched read, one write)."""

    def __init__(self, store: Store):
        self.store = store

    async def get(self, keys: Sequence[str]) -> dict[str, Any]:
        if not keys:
            return {}
        found = await self.store.get(CacheEntry, list(dict.fromkeys(keys)))
        return {entry.id: entry.value for entry in found}  # type: ignore[attr-defined]

    async def put(self, kind: str, values: Mapping[str, Any]) -> None:
        now = time.time()
        await self.store.upsert(
            CacheEntry(id=key, namespace=kind, value=value, created_at=now) for key, value in values.items()
        )
