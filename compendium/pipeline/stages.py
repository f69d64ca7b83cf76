"""Stage marks: a phase whose input fingerprint is stored as done is skipped (and resumed)."""

from __future__ import annotations

import time

from ..errors import NotFound
from ..storage.base import Store
from ..storage.records import CacheEntry

NAMESPACE = "stage"


def _key(phase: str, template: str) -> str:
    return f"stage:{template}:{phase}"


async def stage_fingerprint(store: Store, phase: str, template: str) -> str | None:
    try:
        entry = await store.get_one(CacheEntry, _key(phase, template))
    except NotFound:
        return None
    return (entry.value or {}).get("fingerprint")  # type: ignore[union-attr]


async def mark_stage(store: Store, phase: str, template: str, fp: str) -> None:
    await store.upsert(
        [CacheEntry(id=_key(phase, template), namespace=NAMESPACE, value={"fingerprint": fp}, created_at=time.time())]
    )
