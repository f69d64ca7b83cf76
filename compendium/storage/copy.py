"""Copy every record of one store into another (e.g. a workspace's SQLite file to a shared server)."""

from __future__ import annotations

from .base import Store
from .records import RECORD_TYPES


async def copy_store(
    source: Store, target: Store, *, batch_size: int = 1000, kb: str | None = None
) -> dict[str, int]:
    """Copy every kind of every knowledge base (or only `kb`); returns records copied per kind.

    Records are upserted, so a copy that was interrupted can simply be run again.
    """
    kbs = [kb] if kb is not None else await source.knowledge_bases()
    counts = {kind: 0 for kind in RECORD_TYPES}
    for name in kbs:
        reader, writer = source.for_kb(name), target.for_kb(name)
        for kind_name, kind in RECORD_TYPES.items():
            batch = []
            async for record in reader.scan(kind, batch_size=batch_size):
                batch.append(record)
                if len(batch) >= batch_size:
                    counts[kind_name] += await writer.upsert(batch)
                    batch = []
            if batch:
                counts[kind_name] += await writer.upsert(batch)
    return counts
