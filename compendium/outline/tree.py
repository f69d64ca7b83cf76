"""An outline node and the plain-JSON tree that exports publish."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class OutlineNode:
    """One node: a stable id, a title naming its subject, the subjects placed directly in it
    (their pages are its leaves) and its child nodes. `key` is the authors' structure it
    follows (a folder, document or heading), or "" for a community; `slug` is its overview page."""

    id: str
    title: str
    key: str = ""
    subjects: list[str] = field(default_factory=list)
    children: list[OutlineNode] = field(default_factory=list)
    slug: str | None = None
    central: list[str] = field(default_factory=list)  # members that say most about it, first

    def walk(self) -> Iterator[tuple[OutlineNode, int]]:
        """The node and every node below it with its depth (this node is 1)."""
        stack = [(self, 1)]
        while stack:
            node, depth = stack.pop()
            yield node, depth
            stack.extend((c, depth + 1) for c in reversed(node.children))

    def all_subjects(self) -> list[str]:
        return [s for node, _d in self.walk() for s in node.subjects]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "key": self.key, "subjects": list(self.subjects),
                "slug": self.slug, "central": list(self.central),
                "children": [c.to_dict() for c in self.children]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OutlineNode:
        return cls(id=data["id"], title=data["title"], key=data.get("key", ""),
                   subjects=list(data.get("subjects", [])), slug=data.get("slug"),
                   central=list(data.get("central", [])),
                   children=[cls.from_dict(c) for c in data.get("children", [])])


def outline_json(roots: list[OutlineNode], page_of: dict[str, str], overview_of: dict[str, str]) -> dict[str, Any]:
    """The published tree: {"title", "slug", "pages", "children"} per node, under one root whose
    children are the root topics. `page_of` maps subject id -> page slug (subjects without a page
    are left out); `overview_of` maps node id -> its overview page's slug."""

    def plain(node: OutlineNode) -> dict[str, Any]:
        slug = overview_of.get(node.id)  # a node's overview is not also one of its pages
        pages = list(dict.fromkeys(page_of[s] for s in node.subjects if s in page_of and page_of[s] != slug))
        return {"title": node.title, "slug": slug, "pages": pages,
                "children": [plain(c) for c in node.children]}

    return {"title": "Contents", "slug": None, "pages": [], "children": [plain(r) for r in roots]}


def page_depths(tree: dict[str, Any]) -> dict[str, int]:
    """Each page slug of a published tree -> the level of the topic that lists it (a page listed in
    a root topic, or a root topic's overview, is at level 1; in a subtopic, 2; and so on)."""
    depths: dict[str, int] = {}
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        for slug in [*node["pages"], *([node["slug"]] if node["slug"] else [])]:
            depths[slug] = min(depths.get(slug, depth), max(depth, 1))
        stack.extend((c, depth + 1) for c in node["children"])
    return depths


def outline_groups(tree: dict[str, Any], subject_of: dict[str, str]) -> list[list[str]]:
    """Entities grouped by the outline node their page is listed in, root topic by root topic."""
    groups: list[list[str]] = []
    stack = list(reversed(tree["children"]))
    while stack:
        node = stack.pop()
        members = [subject_of[s] for s in node["pages"] if subject_of.get(s)]
        if members:
            groups.append(members)
        stack.extend(reversed(node["children"]))
    return groups


def root_topics(tree: dict[str, Any]) -> dict[str, str]:
    """Page slug -> the title of the root topic it sits under."""
    found: dict[str, str] = {}
    for root in tree["children"]:
        stack = [root]
        while stack:
            node = stack.pop()
            for slug in node["pages"]:
                found.setdefault(slug, root["title"])
            stack.extend(node["children"])
    return found


def parent_titles(roots: Sequence[OutlineNode]) -> dict[str, str]:
    """Node id -> the title of the node above it ("" for a root)."""
    out: dict[str, str] = {}
    stack = [(r, "") for r in roots]
    while stack:
        node, parent = stack.pop()
        out[node.id] = parent
        stack.extend((c, node.title) for c in node.children)
    return out


_VERSION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)+)(?![\w.]*\d)")


def by_version(nodes: list[OutlineNode]) -> list[OutlineNode]:
    """Release notes, newest first: children most of whose titles carry a version ("Version 1.2
    (2021-06-04)", "Django 3.2 release notes") in the order of their versions; others after them."""
    versions = {id(n): tuple(int(x) for x in m.group(1).split(".")) for n in nodes if (m := _VERSION.search(n.title))}
    if len(nodes) < 2 or len(versions) < 0.8 * len(nodes):
        return nodes
    return sorted(nodes, key=lambda n: (id(n) not in versions, tuple(-x for x in versions.get(id(n), ()))))
