"""The authors' structure as a tree of parts, and the groups of parts and subjects that
become outline nodes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class Leaf:
    """A subject that has a page, and where it sits in the authors' structure: `path` is its
    (key, title) segments from the outermost folder to the heading it is under."""

    id: str
    title: str
    importance: float = 0.0
    path: list[tuple[str, str]] = field(default_factory=list)
    order: tuple = ()
    # The authors' sections below its path's last heading (key, title), outermost first: where a
    # part too big for one node is cut, never nodes of their own.
    sections: list[tuple[str, str]] = field(default_factory=list)
    section_order: tuple = ()  # where its own section begins in reading order (its first passage there)


@dataclass
class Part:
    key: str
    title: str
    items: list[str] = field(default_factory=list)
    children: dict[str, Part] = field(default_factory=dict)

    def all_items(self) -> list[str]:
        """Its items, then each child's in turn (depth first, in insertion order)."""
        out: list[str] = []
        stack = [self]
        while stack:
            node = stack.pop()
            out.extend(node.items)
            stack.extend(reversed(node.children.values()))
        return out


@dataclass
class Group:
    """Candidate node: some structure nodes plus loose subjects."""

    parts: list[Part] = field(default_factory=list)
    loose: list[str] = field(default_factory=list)
    key: str = ""  # set when the group is exactly one structure node
    title: str = ""
    split_depth: int = 0  # how many community splits made it

    def items(self) -> list[str]:
        out = list(self.loose)
        for part in self.parts:
            out.extend(part.all_items())
        return out


def part_tree(leaves: Sequence[Leaf]) -> Part:
    root = Part("", "")
    for leaf in sorted(leaves, key=lambda lf: (lf.order, lf.id)):
        node = root
        for key, title in leaf.path:
            node = node.children.setdefault(key, Part(key, title))
        node.items.append(leaf.id)
    return root


def key_of(group: Group) -> str:
    return group.key or (group.parts[0].key if len(group.parts) == 1 else "")


def as_parts(group: Group) -> list[Part]:
    # Loose subjects become a structure-less part so that a merged group can be opened again.
    if group.key and len(group.parts) == 1 and not group.loose:
        return group.parts
    if not group.parts:
        return [Part(group.key, group.title, list(group.loose))]
    return [*group.parts, *([Part("", "", list(group.loose))] if group.loose else [])]


def is_document(group: Group) -> bool:
    """Whether the group is one document, or a part's own pages: no part of the manual of its own."""
    key = key_of(group)
    return key.startswith("doc:") or key.endswith("#own")


def are_parts(groups: Sequence[Group]) -> bool:
    """Whether the groups are parts of the manual (folders, documents, contents sections), which
    can be root topics: a document's headings and communities name no part of it."""
    return all(g.key and not g.key.startswith("heading:") for g in groups)
