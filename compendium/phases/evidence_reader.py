"""Reads the records the pages to write are written from, a window of pages at a time."""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from ..storage.base import Store
from ..storage.records import Chunk, Claim, Document, Entity, Relation
from .chunk_pages import ChunkPages
from .page_candidates import PageWindow, source_ids
from .planning import KnowledgeView, PagePlan

PREFETCH_PAGES = 64  # pages whose evidence is read from the store together
REMEMBERED_RECORDS = 50_000  # records of each kind kept decoded across windows


class EvidenceReader:
    """Reads the evidence of the pages to write a window of PREFETCH_PAGES pages at a time.

    Pages share most of their claims and chunks with their neighbours, so one read per kind
    and window replaces five small reads per page (and decodes each record once per window).
    """

    def __init__(self, store: Store, plans: Sequence[PagePlan], window: int = PREFETCH_PAGES,
                 kb: KnowledgeView | None = None, chunk_pages: ChunkPages | None = None):
        self.store, self.plans, self.window = store, list(plans), max(1, window)
        self.kb = kb  # the KB PLAN read in this process: relations, names and some claims without a read
        self.chunk_pages = chunk_pages  # told each window's chunks at once, to look them up together
        self.position = {p.slug: i for i, p in enumerate(self.plans)}
        self.titles: dict[str, str] = {}
        self._windows: dict[int, PageWindow] = {}
        self._lock = asyncio.Lock()
        # Records read for earlier windows, decoded once: a chunk or claim serves many windows.
        self._seen: dict[type, OrderedDict[str, Any]] = defaultdict(OrderedDict)

    async def _get(self, kind: type, ids: list[str]) -> list[Any]:
        seen = self._seen[kind]
        missing = [i for i in ids if i not in seen]
        for record in await self.store.get(kind, missing) if missing else []:
            seen[record.id] = record
        while len(seen) > REMEMBERED_RECORDS:
            seen.popitem(last=False)
        return [seen[i] for i in ids if i in seen]

    async def for_page(self, plan: PagePlan) -> PageWindow:
        w = self.position[plan.slug] // self.window
        async with self._lock:
            if w not in self._windows:
                window = await self._load(self.plans[w * self.window:(w + 1) * self.window])
                # A chunk offered to the pages before keeps its Source: its paragraphs, entries
                # and leaning are worked out once (Sphinx: 1,345 Sources for 545 chunks before).
                for kept in self._windows.values():
                    for cid, source in kept.sources.items():
                        if cid in window.chunks:
                            window.sources.setdefault(cid, source)
                self._windows[w] = window
                for old in [k for k in self._windows if k < w - 1]:  # pages go in order: keep two
                    del self._windows[old]
            return self._windows[w]

    async def _load(self, plans: Sequence[PagePlan]) -> PageWindow:
        out = PageWindow()
        kb = self.kb
        claim_ids, relation_ids = _union(p.claim_ids for p in plans), _union(p.relation_ids for p in plans)
        if kb is not None:
            # PLAN read the claims of the pages whose evidence changed; the others come from the store.
            out.claims = {c: kb.claims[c] for c in claim_ids if c in kb.claims}
            unread = [c for c in claim_ids if c not in out.claims]
            out.claims.update({c.id: c for c in await self._get(Claim, unread)} if unread else {})
            out.relations = {r: kb.relations[r] for r in relation_ids if r in kb.relations}
        else:
            out.claims = {c.id: c for c in await self._get(Claim, claim_ids)}
            out.relations = {r.id: r for r in await self._get(Relation, relation_ids)}
        ends = _union([r.source, r.target] for r in out.relations.values())
        if kb is not None:
            out.names = {e: kb.names[e] for e in ends if e in kb.names}
        else:
            out.names = {e.id: e.name for e in await self._get(Entity, ends)}
        out.source_ids = {p.slug: source_ids(p, [out.claims[c] for c in p.claim_ids if c in out.claims]) for p in plans}
        wanted = _union(out.source_ids.values())
        out.chunks = {c.id: c for c in await self._get(Chunk, wanted)}
        if self.chunk_pages is not None:
            self.chunk_pages.look_up(out.chunks)
        missing = sorted({c.document_id for c in out.chunks.values()} - set(self.titles))
        for doc in await self.store.get(Document, missing):
            self.titles[doc.id] = doc.title or doc.path  # type: ignore[attr-defined]
        return out


def _union(groups: Iterable[Iterable[str]]) -> list[str]:
    return list(dict.fromkeys(itertools.chain.from_iterable(groups)))
