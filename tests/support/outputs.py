"""A compiled knowledge base's outputs as bytes, to compare two compiles of the same corpus."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from compendium.export import export
from compendium.storage.factory import open_store
from compendium.storage.records import RECORD_TYPES, Job
from compendium.tenancy import system_store


async def _export(url: str, kb: str, out: Path) -> None:
    store = await open_store(url, kb)
    try:
        for fmt in ("vault", "json", "graphml"):
            await export(store, fmt, out / fmt)
    finally:
        await store.close()


def exported(url: str, kb: str, out: Path) -> dict[str, bytes]:
    """Every file of the vault, JSON and GraphML exports, by path under `out`. The JSON export
    carries each page's write times, the one thing two compiles never share: left out."""
    asyncio.run(_export(url, kb, out))
    files = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    data = json.loads(files.pop("json"))
    files["json (times left out)"] = json.dumps(_timeless(data), sort_keys=True).encode()
    return files


def _timeless(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if not k.endswith("_at")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


async def drop_knowledge_bases(url: str, kbs: list[str]) -> None:
    """Delete everything the knowledge bases hold, and their compile leases."""
    store = await open_store(url, "default")
    try:
        for kb in kbs:
            for kind in RECORD_TYPES.values():
                await store.for_kb(kb).delete(kind, {})
            await system_store(store).delete(Job, {"knowledge_base": kb})
    finally:
        await store.close()


async def canonical_records(store: Any, kinds: tuple[type, ...]) -> dict[str, dict[str, Any]]:
    """The store's records of these kinds by id, without vectors."""
    out: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        rows = {}
        async for record in store.scan(kind):
            data = record.to_dict()
            data.pop("embedding", None)
            rows[record.id] = data
        out[kind.__name__] = rows
    return out
