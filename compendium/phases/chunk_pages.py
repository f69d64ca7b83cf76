"""Which pages' subjects each chunk mentions, worked out only for the chunks asked about."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence

from .planning import PagePlan

LONG_PAGE = 256  # chunks past which a page is looked up by binary search rather than listed
BISECTS_PER_PASS = 20  # one chunk's binary search costs what a set's pass over ~20 of a page's ids does (measured: 25)


class ChunkPages(Mapping[str, list[str]]):
    """Chunk id -> slugs of the pages whose subject it mentions, in the pages' order, worked out
    for the chunks asked about only, a window's chunks at a time. A page with many chunks
    (sorted: planning.entity_subjects) is searched, since listing them all costs a pass over the
    KB; the many pages with few chunks are listed once, since a search of every page for every
    chunk costs more."""

    def __init__(self, plans: Sequence[PagePlan]):
        self.plans = list(plans)
        self._found: dict[str, list[str]] = {}
        self._long = [i for i, p in enumerate(self.plans) if len(p.chunk_ids) > LONG_PAGE]
        self._short: dict[str, list[int]] | None = None

    def _listed(self) -> dict[str, list[int]]:
        if self._short is None:
            self._short = {}
            for i, p in enumerate(self.plans):
                if len(p.chunk_ids) <= LONG_PAGE:
                    for c in p.chunk_ids:
                        self._short.setdefault(c, []).append(i)
        return self._short

    def __getitem__(self, chunk_id: str) -> list[str]:
        found = self._found.get(chunk_id)
        if found is None:
            self.look_up([chunk_id])
            found = self._found[chunk_id]
        if not found:
            raise KeyError(chunk_id)
        return found

    def look_up(self, chunk_ids: Iterable[str]) -> None:
        """Work out the pages of many chunks together: each long page is searched once for all
        of them, by a set of them when that is cheaper than a binary search per chunk."""
        new = [c for c in dict.fromkeys(chunk_ids) if c not in self._found]
        if not new:
            return
        short = self._listed()
        at: dict[str, list[int]] = {c: list(short.get(c, ())) for c in new}
        wanted = set(new)
        for i in self._long:
            ids = self.plans[i].chunk_ids
            if len(ids) < BISECTS_PER_PASS * len(new):
                held: Iterable[str] = wanted.intersection(ids)  # one pass over the page's chunks
            else:
                held = [c for c in new if holds(ids, c)]
            for c in held:
                at[c].append(i)
        for c, pages in at.items():
            self._found[c] = [self.plans[i].slug for i in sorted(pages)]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({c for p in self.plans for c in p.chunk_ids}))

    def __len__(self) -> int:
        return len({c for p in self.plans for c in p.chunk_ids})


def holds(ids: Sequence[str], wanted: str) -> bool:
    at = bisect.bisect_left(ids, wanted)
    return at < len(ids) and ids[at] == wanted
