"""What a deleted document leaves in kept text, forgotten: the versions of pages that cited its
passages and the text of pages deleted with it. Descriptions, summaries, claims and live pages
are rebuilt from the surviving evidence by the phases; this is the rest."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..storage.base import Store
from ..storage.records import Page, PageVersion

# A page cites a passage by its chunk id in a footnote: '[^2]: Doc › Heading — chunk 39e81e0c1db0f767'.
_CITED = re.compile(r"\bchunk ([0-9a-f]{8,64})\b")


def cited_chunks(markdown: str) -> set[str]:
    return set(_CITED.findall(markdown))


async def forget_removed_passages(store: Store, removed: Iterable[str]) -> dict[str, int]:
    """Delete every kept page version that cites a removed chunk (a page's current version
    stays: the page itself was rewritten from what is left), and empty the text of deleted
    pages that cited one. Returns how many of each were forgotten."""
    gone = set(removed)
    if not gone:
        return {"page_versions": 0, "deleted_pages": 0}
    current: dict[str, int] = {}
    emptied: list[Page] = []
    async for page in store.scan(Page):
        if page.status == "deleted" and (gone & set(page.cited_chunks) or gone & cited_chunks(page.markdown)):
            page.markdown, page.summary, page.cited_chunks, page.outlinks = "", "", [], []
            emptied.append(page)
        elif page.status != "deleted":
            current[page.slug or page.id] = page.version
    stale = [v.id async for v in store.scan(PageVersion)
             if current.get(v.slug) != v.version and gone & cited_chunks(v.markdown)]
    async with store.transaction():
        if stale:
            await store.delete(PageVersion, {"id": stale})
        if emptied:
            await store.upsert(emptied)
    return {"page_versions": len(stale), "deleted_pages": len(emptied)}
