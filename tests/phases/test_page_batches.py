"""Written pages are embedded in batches and stored; the last ones do not wait behind a batch in flight."""

from __future__ import annotations

import asyncio

import numpy as np

from compendium.engines.usage import UsageMeter
from compendium.phases.page_batches import PageBatches, WrittenPage
from compendium.storage.records import Page
from tests.engines.test_openai_embedder import embedder_for


def _written(slug: str, stored: list[str], failed: list[str]) -> WrittenPage:
    return WrittenPage(text=f"page {slug}", page=Page(id=slug, slug=slug, title=slug), records=[],
                       stored=lambda: stored.append(slug), failed=lambda exc: failed.append(slug))


async def test_pages_left_at_the_end_go_out_beside_the_request_in_flight(server, store):
    server.set_latency(0.3)
    embedder = embedder_for(server, UsageMeter())
    batches, stored, failed = PageBatches(store, embedder), [], []
    try:
        batches.add(_written("first", stored, failed))
        await asyncio.sleep(0.05)  # its request is in flight
        for slug in ("second", "third"):
            batches.add(_written(slug, stored, failed))
        await batches.finish()
    finally:
        await embedder.close()
    assert sorted(stored) == ["first", "second", "third"] and not failed
    assert server.most_in_flight["embeddings"] == 2 and batches.requests == 2
    pages = await store.get(Page, ["first", "second", "third"])
    assert all(p.embedding is not None and np.isclose(np.linalg.norm(p.embedding), 1.0) for p in pages)


async def test_pages_written_while_a_request_is_in_flight_share_the_next_one(server, store):
    server.set_latency(0.2)
    embedder = embedder_for(server, UsageMeter())
    batches, stored, failed = PageBatches(store, embedder), [], []
    try:
        batches.add(_written("a", stored, failed))
        await asyncio.sleep(0.05)
        for slug in ("b", "c", "d"):
            batches.add(_written(slug, stored, failed))
        await asyncio.sleep(0.4)  # the writers are still going: the three wait for one request
        await batches.finish()
    finally:
        await embedder.close()
    assert sorted(stored) == ["a", "b", "c", "d"] and batches.requests == 2
    assert server.most_in_flight["embeddings"] == 1
