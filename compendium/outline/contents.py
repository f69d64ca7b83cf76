"""A manual's contents pages of any name, read from the links each page lists: the page that lists
most other pages once each, in an order of its own (not alphabetical), and the pages it lists that
list others in turn. Their headings and list labels ("Main porcelain commands", "Programming
Interfaces") are the sections the listed pages sit in."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from ..titles import clean_heading
from .toc import resolve

MIN_LISTED = 5  # a page listing fewer other pages is no contents page
FURNITURE_SHARE = 0.3  # a page listed by this share of the listing pages is the site's furniture
MAX_REPEAT = 1.5  # listings per listed page past this: an index of terms, not contents
SORTED_SHARE = 0.9  # link texts in alphabetical order this often: an alphabetical index
NEAR = 0.9  # scores this close to the best are as good
MAX_TOPS = 40  # candidates for the top, by how many pages they list: bounds the reach walks
WHOLE_SHARE = 0.5  # a page below the top listing more than this share of the manual is an index
INDEX_SHARE = 0.2  # so is an alphabetical list of more than this share (a list of commands is less)
# The sections of a reference page (a man page's), whose links are mentions, not contents.
REFERENCE_PARTS = frozenset({"options", "environment", "environment variables", "files", "bugs", "author",
                             "authors", "reporting bugs", "copyright", "history", "name", "exit status",
                             "see also", "description", "synopsis", "examples", "example", "notes", "note",
                             "parameters", "arguments", "return value", "discussion", "caveats"})


@dataclass(frozen=True)
class Listing:
    """What a page lists: [kind, depth, href, text] entries as the HTML reader kept them."""

    id: str
    path: str
    title: str
    entries: tuple[tuple[str, int, str, str], ...]


def entries_of(metadata: dict) -> tuple[tuple[str, int, str, str], ...]:
    out = []
    for e in metadata.get("links") or ():
        if isinstance(e, (list, tuple)) and len(e) == 4 and e[0] in ("a", "h", "label", "section", "/section") \
                and isinstance(e[1], int) and isinstance(e[2], str) and isinstance(e[3], str):
            out.append((e[0], e[1], e[2], e[3]))
    return tuple(out)


@dataclass
class Contents:
    """The tree the contents pages give: each listed document's parent (a document or a section),
    the sections as (key, title), and the reading position of everything placed."""

    parent_of: dict[str, str] = field(default_factory=dict)
    sections: dict[str, tuple[str, str]] = field(default_factory=dict)
    position: dict[str, int] = field(default_factory=dict)
    pages: list[str] = field(default_factory=list)  # the contents pages, the top first


def _targets(listing: Listing, by_path: dict[str, str]) -> list[str]:
    out = []
    for kind, _depth, href, _text in listing.entries:
        if kind == "a" and (path := resolve(listing.path, href)) is not None:
            target = by_path.get(path)
            if target is not None and target != listing.id:
                out.append(target)
    return out


def _alphabetical(listing: Listing) -> bool:
    texts = [t.casefold() for kind, _d, _h, t in listing.entries if kind == "a"]
    if len(texts) < 10:
        return False
    return sum(a <= b for a, b in pairwise(texts)) >= SORTED_SHARE * (len(texts) - 1)


def contents_tree(listings: Sequence[Listing], by_path: dict[str, str], documents: int) -> Contents:
    """The documents the contents pages list, each under the section (or listed page) it is
    listed in, the top contents page's listing first, then the listings of the pages it lists,
    and so on; a document is placed by the first listing that reaches it."""
    found = Contents()
    targets = {lst.id: _targets(lst, by_path) for lst in listings}
    listed_by: Counter[str] = Counter(t for ts in targets.values() for t in set(ts))
    listing_pages = sum(1 for ts in targets.values() if ts)
    furniture = {t for t, n in listed_by.items() if n >= max(4, FURNITURE_SHARE * listing_pages)}
    usable: dict[str, Listing] = {}
    count: dict[str, int] = {}
    for lst in listings:
        mine = [t for t in targets[lst.id] if t not in furniture]
        distinct = len(set(mine))
        if distinct >= MIN_LISTED and len(mine) <= MAX_REPEAT * distinct:
            usable[lst.id] = lst
            count[lst.id] = distinct
    if not usable:
        return found
    # The top is the page from which listings reach most pages (a contents page lists the pages
    # that list the rest; a long flat list, such as every release, reaches only what it lists).
    listed = {i: [t for t in dict.fromkeys(targets[i]) if t not in furniture] for i in usable}
    # An alphabetical list (of commands, of functions) is a part of the contents, never its top.
    tops = [i for i in sorted(usable, key=lambda i: (-count[i], usable[i].path)) if not _alphabetical(usable[i])]
    if not tops:
        return found
    reach = {i: _reach(i, listed, count, documents) for i in tops[:MAX_TOPS]}
    # ... and lists them in sections of its own ("Programming Interfaces", "Main porcelain commands"):
    # a page of sections beats the home page's one box of links and the flat list of every release.
    # Between pages of about that score (every page of a cross-linked API reaches every other),
    # the one that lists most pages itself.
    score = {i: r * max(1, _sections(usable[i])) for i, r in reach.items()}
    best = max(score.values())
    top = min((i for i in score if score[i] >= NEAR * best), key=lambda i: (-count[i], usable[i].path))
    order = [top, *sorted((i for i in usable if i != top), key=lambda i: (-score.get(i, 0), -count[i], usable[i].path))]
    done: set[str] = set()
    for start in order:
        if start in done or (start in found.parent_of and start != top):
            continue
        queue, later = [start], []  # alphabetical lists place what the others leave, last
        found.position.setdefault(start, len(found.position))
        while queue or later:
            page = queue.pop(0) if queue else later.pop(0)
            if page in done:
                continue
            done.add(page)
            whole = INDEX_SHARE if _alphabetical(usable[page]) else WHOLE_SHARE
            if page != top and count[page] > whole * documents:
                continue  # an index of the manual (every document, A to Z) places none of them
            found.pages.append(page)
            for listed in _read(usable[page], by_path, furniture, found):
                if listed in usable and listed not in done:
                    (later if _alphabetical(usable[listed]) else queue).append(listed)
    return found


def _sections(listing: Listing) -> int:
    """How many headings or labels of the page head at least two links."""
    found, links = 0, 0
    for kind, _d, _h, _t in (*listing.entries, ("h", 0, "", "")):
        if kind == "a":
            links += 1
        elif kind in ("h", "label"):
            found += links >= 2
            links = 0
    return found


def _reach(start: str, listed: dict[str, list[str]], count: dict[str, int], documents: int) -> int:
    """How many pages the listings starting at `start` reach (an index of half the manual below it
    lists nothing: it is no part of the contents)."""
    seen = {start}
    queue = [start]
    while queue:
        page = queue.pop()
        if page != start and count[page] > WHOLE_SHARE * documents:
            continue
        for target in listed[page]:
            if target not in seen:
                seen.add(target)
                if target in listed:
                    queue.append(target)
    return len(seen) - 1


def _read(listing: Listing, by_path: dict[str, str], furniture: set[str], found: Contents) -> list[str]:
    """Place what one contents page lists that no listing placed before; returns what it placed."""
    placed: list[str] = []
    stack: list[tuple[int, str]] = []  # (level, node) open above the next entry; headings first
    levels = sorted({d for kind, d, _h, _t in listing.entries if kind == "h"})
    opened: list[int] = []  # the stack's height where each open HTML section began
    own_title = clean_heading(listing.title)
    for kind, depth, href, text in listing.entries:
        if kind == "section":
            opened.append(len(stack))
            continue
        if kind == "/section":
            del stack[opened.pop() if opened else 0:]
            continue
        level = levels.index(depth) if kind == "h" else len(levels) + depth
        while stack and stack[-1][0] >= level:
            stack.pop()
        parent = stack[-1][1] if stack else listing.id
        if kind == "a":
            if parent == "":
                continue  # under a part of any page ("Options", "See also"): mentions, not contents
            path = resolve(listing.path, href)
            target = by_path.get(path) if path is not None else None
            if target is None or target == listing.id or target in furniture:
                continue
            if target not in found.parent_of and target not in found.position:
                found.parent_of[target] = parent
                found.position[target] = len(found.position)
                placed.append(target)
            stack.append((level, target))
            continue
        title = clean_heading(text)
        if parent == "" or (kind == "h" and title.lower().rstrip(":") in REFERENCE_PARTS):
            stack.append((level, ""))
            continue
        if sum(c.isalpha() for c in title) < 3 or title == own_title or \
                (kind == "h" and level == 0 and own_title and own_title in title):
            continue  # a letter of an index, the page's own title ("Package org.example" of "org.example")
        key = f"section:{listing.path}#{title}"
        if key not in found.sections:
            found.sections[key] = (key, title)
            found.parent_of[key] = parent
            found.position[key] = len(found.position)
        stack.append((level, key))
    return placed


def listed_by(listings: Sequence[Listing], by_path: dict[str, str], placed: dict[str, str],
              position: dict[str, int], documents: int, top: str | None, shared_depth: int) -> dict[str, str]:
    """Pages no contents page places, each under a placed page of its own folder that lists it
    (a package summary whose prose list of classes is too repetitive to be contents), the
    earliest in reading order; never the `top` contents page, and only in folders deeper than
    the `shared_depth` every document sits in (in one flat folder every page lists others).
    Only what a page lists of its own counts, at least `MIN_LISTED` pages: the links under a
    reference page's parts ("See also", "Options") are mentions. A page listing a fifth of the
    manual or more, or listing it A to Z, is an index: it places nothing. Returns child -> parent,
    to add to `placed`."""
    folder = {i: p.rpartition("/")[0] for p, i in by_path.items()}
    deep = {i for p, i in by_path.items() if p.count("/") > shared_depth}
    found: dict[str, str] = {}
    for lst in sorted(listings, key=lambda lst: (position.get(lst.id, 10**9), lst.path)):
        if lst.id not in deep or (lst.id not in placed and lst.id != top) or _alphabetical(lst):
            continue
        mine = list(dict.fromkeys(_targets(_outside_references(lst), by_path)))
        if not MIN_LISTED <= len(mine) <= INDEX_SHARE * documents:
            continue
        for target in mine:
            if target not in placed and target not in found and target != top and \
                    folder.get(target) == folder[lst.id]:
                found[target] = lst.id
    return found


def _outside_references(listing: Listing) -> Listing:
    """The listing without the links under a reference page's parts ("See also", "Options")."""
    kept, inside = [], False
    for entry in listing.entries:
        if entry[0] == "h":
            inside = clean_heading(entry[3]).lower().rstrip(":") in REFERENCE_PARTS
        if not (inside and entry[0] == "a"):
            kept.append(entry)
    return Listing(listing.id, listing.path, listing.title, tuple(kept))
