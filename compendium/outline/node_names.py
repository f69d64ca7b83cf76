"""What the built outline's nodes are called: ids and titles kept from the previous outline,
siblings' titles distinct, a generic part named with its parent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..fingerprint import short_id
from ..graph.communities import match_previous
from ..titles import is_keyword_pair, is_part_heading, names_a_subject
from .limits import OutlineLimits
from .parts import Leaf
from .tree import OutlineNode


def distinct_titles(nodes: list[OutlineNode], leaf: Mapping[str, Leaf], parent: str) -> None:
    """Siblings with one title (or their parent's): the later ones are named after their central
    member instead."""
    seen: set[str] = {parent}
    for node in nodes:
        if node.title in seen:
            for s in node.central:
                candidate = leaf[s].title
                if candidate not in seen and names_a_subject(candidate):
                    node.title = candidate
                    break
        seen.add(node.title)


def assign_ids(roots: list[OutlineNode], previous: Sequence[OutlineNode], limits: OutlineLimits,
                names: set[str]) -> None:
    """Structure nodes are named by their key; community nodes take the id (and, when their
    membership barely changed, the title) of the previous node they mostly share members with."""
    before = [n for r in previous for n, _d in r.walk()]
    members_before = {n.id: n.all_subjects() for n in before}
    title_before = {n.id: n.title for n in before}
    now = [n for r in roots for n, _d in r.walk()]
    members_now = [n.all_subjects() for n in now]
    pairing = match_previous(members_now, members_before)
    used: set[str] = set()
    for i, node in enumerate(now):
        if node.key:
            node.id = short_id("outline", node.key)
        elif i in pairing:
            prev = pairing[i]
            node.id = prev
            a, b = set(members_now[i]), set(members_before[prev])
            if len(a & b) / max(len(a | b), 1) >= limits.keep_title_overlap and \
                    not is_keyword_pair(title_before[prev], names):
                node.title = title_before[prev]
        else:
            node.id = short_id("outline", node.key or "group", sorted(members_now[i]))
        while node.id in used:  # the same key twice (a part split in reading order)
            node.id = short_id("outline", node.id, "again")
        used.add(node.id)


def name_parts_with_their_parent(roots: Sequence[OutlineNode]) -> None:
    """A document titled like a part of any document ("13.1. Introduction", "Examples") says what
    it is about only beside its parent, and a title that a node nearer the top already has names
    two things: such a node is named with its parent, "Introduction (Concurrency Control)". A
    community named like a part of the authors' structure anywhere (after a member titled like
    a document) is the one named with its parent: the part keeps its authors' title."""
    seen = {r.title for r in roots}
    authors = {n.title for r in roots for n, _d in r.walk() if n.key}
    level: list[tuple[OutlineNode, tuple[str, ...]]] = [(r, ()) for r in roots]
    while level:  # level by level, so the node nearer the top keeps the plain title
        below = []
        for node, above in level:  # `above`: the titles of its ancestors, nearest first
            # A folder so named is the authors' own part ("overview/"): only a document's title is generic.
            generic = node.key.startswith("doc:") and is_part_heading(node.title)
            # Named with the nearest ancestor of another title: "xmlrpc.client (xmlrpc.client)" says nothing.
            parent = next((t for t in above if t != node.title), "")
            if parent and (generic or node.title in seen or (not node.key and node.title in authors)):
                node.title = f"{node.title} ({parent})"
            seen.add(node.title)
            # A run is named with its part's title alone: "Functions (org.apache.commons.lang3)".
            named = node.title[:node.title.rfind(" (")] if node.key.startswith("run:") and " (" in node.title else node.title
            below.extend((c, (named, *above)) for c in node.children)
        level = below
