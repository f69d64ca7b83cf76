"""Where a part too big for one node is cut into runs: its pages in blocks of the authors'
sections (then their sections, then its pages), and the cut of those blocks into even runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .parts import Leaf

# A run's block: (key, title, items, the outermost part it was cut from, the innermost one).
Block = tuple[str, str, list[str], tuple[str, str] | None, tuple[str, str] | None]


def blocks(leaf: Mapping[str, Leaf], rank: Mapping[str, int], items: Sequence[str], base: str,
           limit: float) -> list[Block]:
    """The items in reading order as blocks (key, title, items, the outermost and the innermost
    part it was cut from) of items under one part right below the group's own segment `base`;
    a block past `limit` is cut into the parts one level further down its members' paths and
    sections, and so on down to its pages."""
    def trail(s: str) -> list[tuple[str, str]]:
        return [*leaf[s].path, *leaf[s].sections]

    at = {s: next((i for i, (k, _t) in enumerate(leaf[s].path) if k == base), -1) for s in items}

    def grouped(members: Sequence[str], level: int) -> list[tuple[str, str, list[str]]]:
        # A part's pages together, in the order its sections begin (a page first mentioned
        # above the section it sits in does not split that section in two).
        out: dict[str, tuple[str, str, list[str]]] = {}
        begins: dict[str, tuple] = {}
        for s in members:
            path = trail(s)
            i = at[s] + level
            key, name = path[i] if i < len(path) else (f"item:{s}", leaf[s].title)
            out.setdefault(key, (key, name, []))[2].append(s)
            begins[key] = min(begins.get(key, (leaf[s].section_order or leaf[s].order, rank[s])),
                              (leaf[s].section_order or leaf[s].order, rank[s]))
        return sorted(out.values(), key=lambda b: begins[b[0]])

    def cut(found: list[tuple[str, str, list[str]]], level: int, outer: tuple[str, str] | None,
            inner: tuple[str, str] | None) -> list[Block]:
        out: list[Block] = []
        for key, name, members in found:
            if len(members) <= limit or key.startswith("item:"):
                out.append((key, name, members, outer, inner))
            else:
                out.extend(cut(grouped(members, level + 1), level + 1, outer or (key, name), (key, name)))
        return out

    return cut(grouped(items, 1), 1, None, None)


def runs_needed(sizes: Sequence[int], most: float) -> int:
    """Runs of consecutive blocks, each at most `most` items (a bigger block alone)."""
    runs, size = 1, 0
    for n in sizes:
        if size and size + n > most:
            runs, size = runs + 1, 0
        size += n
    return runs


def largest_run(sizes: Sequence[int], count: int) -> int:
    """The smallest size the largest of at most `count` runs of consecutive blocks can have."""
    low, high = max(sizes), sum(sizes)
    while low < high:
        mid = (low + high) // 2
        if runs_needed(sizes, mid) <= count:
            high = mid
        else:
            low = mid + 1
    return low


def balanced_cut(sizes: Sequence[int], largest: int) -> list[int]:
    """Each block's run: consecutive blocks, each run at most `largest` items (cut between
    parts, never inside one)."""
    cut, size, run = [], 0, 0
    for n in sizes:
        if size and size + n > largest:
            run, size = run + 1, 0
        cut.append(run)
        size += n
    return cut
