"""Stage marks: a phase whose input fingerprint is stored as done is skipped (and resumed).

Each phase hands the next the fingerprint of what it produced (`ctx.state["rollup"]`), so a
recompile with nothing changed compares fingerprints and reads no record of the KB. A phase
that starts work clears its own mark first: a crash half-way leaves no mark that could be
mistaken for finished work when the same inputs come back.
"""

from __future__ import annotations

import time
from typing import Any

from ..errors import NotFound
from ..storage.base import Store
from ..storage.records import CacheEntry

NAMESPACE = "stage"


def _key(phase: str) -> str:
    # One mark per phase and KB, whatever the template: what a phase produced is the KB's (the
    # template's settings are part of the fingerprint), so a compile with another template
    # replaces the mark rather than leaving a stale one beside it.
    return f"stage:{phase}"


async def stage_mark(store: Store, phase: str) -> dict[str, Any]:
    """What the phase stored when it last finished ({} when it has not, or was cleared)."""
    try:
        entry = await store.get_one(CacheEntry, _key(phase))
    except NotFound:
        return {}
    return dict(entry.value or {})  # type: ignore[union-attr]


async def stage_fingerprint(store: Store, phase: str) -> str | None:
    return (await stage_mark(store, phase)).get("fingerprint")


async def mark_stage(store: Store, phase: str, fp: str, **facts: Any) -> None:
    """The phase finished over inputs `fp`; `facts` (counts, lists) let the next run skip it."""
    await store.upsert(
        [CacheEntry(id=_key(phase), namespace=NAMESPACE, value={**facts, "fingerprint": fp},
                    created_at=time.time())]
    )


async def clear_stage(store: Store, phase: str) -> None:
    await store.delete(CacheEntry, {"id": [_key(phase)]})


def rollup(ctx_state: dict[str, Any], phase: str) -> str | None:
    """The fingerprint of what `phase` produced in this compile (None: not known without a scan)."""
    return (ctx_state.get("rollup") or {}).get(phase)


def set_rollup(ctx_state: dict[str, Any], phase: str, fp: str | None) -> None:
    ctx_state.setdefault("rollup", {})[phase] = fp
