"""An engine's response cache kept in a store, as cache entries named by their key."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

from ..engines.cache import SOURCES, reply_sources
from .base import Store
from .records import CacheEntry, Record

_held: ContextVar[list[Record] | None] = ContextVar("compendium_answers_held", default=None)


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
        sources = reply_sources()  # deleting one of these passages forgets the reply (compiler/forget.py)
        entries = [CacheEntry(id=key, namespace=kind, created_at=now,
                              value={**value, SOURCES: sources} if sources and isinstance(value, dict) else value)
                   for key, value in values.items()]
        held = _held.get()
        if held is not None:  # written with what the caller stores next (answers_with_records)
            held.extend(entries)
            return
        await self.store.upsert(entries)


@contextlib.asynccontextmanager
async def answers_with_records(store: Store) -> AsyncIterator[list[Record]]:
    """Answers the engine gets inside the block are kept in the list it gives, for the caller
    to write in the transaction that stores what it made of them (one commit, not two); what is
    still there when the block ends, however it ends, is written then. Only for a block that
    writes right after its call: an answer is on disk no later than the records made of it."""
    held: list[Record] = []
    token = _held.set(held)
    try:
        yield held
    finally:
        _held.reset(token)
        if held:
            await store.upsert(held)
            held.clear()
