"""Links into pages that are gone from sight become plain text in the pages that hold them."""

from __future__ import annotations

import time

from ..storage.base import Store
from ..storage.records import Page, PageVersion
from .citations import unlink


async def unlink_gone_pages(store: Store, statuses: list[str]) -> int:
    """Links into pages of these statuses become plain text in every active page not edited by a person."""
    gone = store.scan(Page, {"status": statuses})
    deleted = {p.slug async for p in gone}  # type: ignore[attr-defined]
    if not deleted:
        return 0  # most runs: no page needs reading
    fixed, total = [], 0
    async for page in store.scan(Page, {"status": "active"}):
        assert isinstance(page, Page)
        if not deleted.intersection(page.outlinks):
            continue
        if page.edited:
            page.pending_update = True
        else:
            page.markdown, n = unlink(page.markdown, deleted)
            page.outlinks = [s for s in page.outlinks if s not in deleted]
            page.version += 1
            page.updated_at = time.time()
            total += n
        fixed.append(page)
    if fixed:
        versions = [PageVersion.of(p) for p in fixed if not p.edited]
        async with store.transaction():
            await store.upsert([*fixed, *versions])
    return total
