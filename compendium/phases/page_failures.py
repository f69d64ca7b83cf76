"""Pages whose reply failed: how often in a row on the same evidence, and which are not asked
again until their evidence changes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..storage.base import Store
from ..storage.records import CacheEntry
from .planning import PagePlan

RETRY_FAILED = "retry_failed"  # ctx.state: ask again for pages backed off after failing
FAILURE_ATTEMPTS = 2  # a page failing this often on the same evidence is not asked again by itself


def failure_key(slug: str) -> str:
    return f"failed-page:{slug}"


def backed_off_pages(todo: Sequence[PagePlan], failures: Mapping[str, Any]) -> dict[str, dict]:
    """Pages that failed FAILURE_ATTEMPTS compiles in a row on the evidence they have now: asked
    again only when that evidence changes, or on request (a failure costs a call, not one per
    compile for ever)."""
    out = {}
    for plan in todo:
        failure = failures.get(failure_key(plan.slug))
        if (isinstance(failure, dict) and failure.get("evidence") == plan.evidence_fingerprint
                and int(failure.get("attempts", 0)) >= FAILURE_ATTEMPTS):
            out[plan.slug] = failure
    return out


async def record_failures(store: Store, failed: Mapping[str, str], written: Iterable[str],
                          live: Mapping[str, PagePlan], failures: Mapping[str, Any]) -> None:
    """Each failed page's failures in a row on its evidence; a page written forgets its own."""
    records = []
    for slug, reason in failed.items():
        plan = live.get(slug)
        if plan is None:
            continue
        before = failures.get(failure_key(slug))
        same = isinstance(before, dict) and before.get("evidence") == plan.evidence_fingerprint
        attempts = int(before.get("attempts", 0)) + 1 if same else 1  # type: ignore[union-attr]
        records.append(CacheEntry(id=failure_key(slug), namespace="failed-page",
                                  value={"evidence": plan.evidence_fingerprint, "attempts": attempts, "reason": reason}))
    forgotten = [failure_key(s) for s in written if failure_key(s) in failures]
    if records or forgotten:
        async with store.transaction():
            if records:
                await store.upsert(records)
            if forgotten:
                await store.delete(CacheEntry, {"id": forgotten})
