"""Written pages get their embeddings in batches, outside the writers' slots, and are stored together."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..engines.base import Embedder
from ..storage.base import Store
from ..storage.records import Page, Record

MAX_BATCH = 128  # pages embedded in one request at most


@dataclass
class WrittenPage:
    """A page whose text is final, waiting for its embedding before it is stored."""

    text: str  # what the page is embedded as
    page: Page
    records: Sequence[Record]  # stored in the same transaction (its evidence pack, its version)
    stored: Callable[[], None]
    failed: Callable[[BaseException], None]


class PageBatches:
    """One embedding request in flight at a time; pages written meanwhile go in the next one.

    A writer hands its page over and takes the next page at once, so an embedding call never
    holds a writer's concurrency slot, and the batches grow with the rate pages are written
    (one page when they come slowly, many when the model is fast). Each batch is stored in one
    transaction once its vectors arrive; a failed batch calls each page's `failed`.
    """

    def __init__(self, store: Store, embedder: Embedder, *, max_batch: int = MAX_BATCH):
        self.store, self.embedder, self.max_batch = store, embedder, max(1, max_batch)
        self.pending: list[WrittenPage] = []
        self._draining: asyncio.Task[None] | None = None
        self.requests = 0  # embedding requests made, for the phase's report

    def add(self, written: WrittenPage) -> None:
        self.pending.append(written)
        if self._draining is None or self._draining.done():
            self._draining = asyncio.create_task(self._drain())

    async def finish(self) -> None:
        """Wait until every page handed over is stored (or has failed). No page comes after
        this: the ones waiting go out now, beside the request in flight, not after it."""
        draining = [t for t in (self._draining,) if t is not None and not t.done()]
        if self.pending and draining:
            draining.append(asyncio.create_task(self._drain()))
        for task in draining:
            await task

    async def _drain(self) -> None:
        while self.pending:
            batch, self.pending = self.pending[: self.max_batch], self.pending[self.max_batch :]
            try:
                await self._store(batch)
            except Exception as exc:  # each page's owner decides what the failure means
                for item in batch:
                    item.failed(exc)
            else:
                for item in batch:
                    item.stored()

    async def _store(self, batch: list[WrittenPage]) -> None:
        self.requests += 1
        vectors = await self.embedder.embed([item.text for item in batch])
        for item, vector in zip(batch, vectors, strict=True):
            item.page.embedding = vector
        async with self.store.transaction():  # each page lands with its pack and version
            await self.store.upsert([r for item in batch for r in (item.page, *item.records)])
