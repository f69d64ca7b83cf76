"""A manual's own tree from the tables of contents its pages carry: each document's parent is
the page whose TOC lists it most directly, and the TOCs' order is the reading order."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TocPage:
    id: str
    path: str
    links: tuple[tuple[int, str], ...]  # (depth, href) in the TOC's order


def resolve(base: str, href: str) -> str | None:
    """The path a relative link from the document at `base` points to (None: not a page here)."""
    if "://" in href or href.startswith(("mailto:", "#", "/")) or not href.split("#", 1)[0]:
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(base), href.split("#", 1)[0]))


def _target(base: str, href: str, by_path: dict[str, str]) -> str | None:
    path = resolve(base, href)
    return by_path.get(path) if path is not None else None


def cut_circles(parent_of: dict[str, str]) -> None:
    """A circle of pages naming each other as parent is cut where it closes."""
    for child in list(parent_of):
        seen = {child}
        node = parent_of.get(child)
        while node is not None:
            if node in seen:
                del parent_of[child]
                break
            seen.add(node)
            node = parent_of.get(node)


def toc_tree(pages: Sequence[TocPage], all_paths: dict[str, str]) -> tuple[dict[str, str], dict[str, int]]:
    """(parent of each listed document, reading position of each). `all_paths` maps every
    document path to its id. A document listed at depth d hangs under the entry before it at
    depth d - 1, or under the listing page itself at depth 1; the shallowest listing wins."""
    best: dict[str, tuple[int, int, str]] = {}  # child -> (depth, order, parent)
    order = 0
    children: dict[str, list[tuple[int, str]]] = {}
    for page in sorted(pages, key=lambda p: (-len(p.links), p.path)):
        trail: list[str] = [page.id]  # trail[d - 1] is the parent of an entry at depth d
        for depth, href in page.links:
            target = _target(page.path, href, all_paths)
            if target is None:
                continue
            depth = max(1, min(depth, len(trail)))
            parent = trail[depth - 1]
            del trail[depth:]
            trail.append(target)
            if target == page.id or target == parent:
                continue
            order += 1
            if target not in best or depth < best[target][0]:
                best[target] = (depth, order, parent)
    parent_of = {child: parent for child, (_d, _o, parent) in best.items()}
    cut_circles(parent_of)
    for child, parent in parent_of.items():
        children.setdefault(parent, []).append((best[child][1], child))
    position: dict[str, int] = {}
    # Most entries first; between equals, by path: a set's order changes from one process to
    # the next (string hashing is seeded), and the outline must not.
    path_of = {page.id: page.path for page in pages}
    roots = sorted({p for p in parent_of.values() if p not in parent_of},
                   key=lambda r: (-len(children.get(r, [])), path_of.get(r, ""), r))
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if node in position:
            continue
        position[node] = len(position)
        stack.extend(c for _o, c in sorted(children.get(node, []), reverse=True))
    return parent_of, position
