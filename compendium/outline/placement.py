"""Where a page's subject sits in the authors' structure: the folder, document and heading its
evidence mostly comes from, as the path of an outline leaf."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..titles import clean_heading, folder_title, is_part_heading
from .contents import Listing, contents_tree, entries_of, listed_by
from .parts import Leaf
from .toc import TocPage, cut_circles, resolve, toc_tree

_PREFIX = re.compile(r"^([A-Za-z0-9]+)[-_.]")
# A trailing site name: "os — … — Python 3.11.2 documentation", "StringUtils (Apache Commons Lang 3.12.0 API)".
_SITE_SUFFIX = re.compile(r"\s+[—|·–-]\s+([^—|·–]+)$|\s+\(([^()]+)\)$")
_SITE_PREFIX = re.compile(r"^[^:—|·–]{3,80}?(?::|\s[—|·–])\s+(?=\S)")
INDEX_NAMES = ("index", "readme", "contents", "_index")


def site_suffix(titles: Sequence[str]) -> str | None:
    """A trailing " — Site name" that most titles share (the HTML <title> of a generated manual)."""
    ends = Counter(m.group(0) for t in titles if (m := _SITE_SUFFIX.search(t)))
    if not ends:
        return None
    end, count = ends.most_common(1)[0]
    return end if count >= 3 and count >= 0.3 * len(titles) else None


def site_prefix(titles: Sequence[str]) -> str | None:
    """A leading "Book title: " that most titles share ("GNU gettext utilities: 1. Introduction")."""
    starts = Counter(m.group(0) for t in titles if (m := _SITE_PREFIX.match(t)))
    if not starts:
        return None
    start, count = starts.most_common(1)[0]
    return start if count >= 3 and count >= 0.3 * len(titles) else None


# The sections of the manual pages (man(7)): a page's kind from "name(1)" or "name.1.html".
MAN_SECTIONS = {"1": "Commands", "2": "System calls", "3": "Library functions", "4": "Special files",
                "5": "File formats", "6": "Games", "7": "Overviews and conventions", "8": "Administration commands"}
_MAN_TITLE = re.compile(r"^[\w.:+-]+\(([1-8])[a-z]*\)$")
_MAN_FILE = re.compile(r"\.([1-8])[a-z]*\.[a-z]+$")
_RELEASE = re.compile(r"\b(?:release|version|changes|changelog|news)\b.*\d+\.\d+|\d+\.\d+.*\brelease notes\b",
                      re.IGNORECASE)


def document_kind(path: str, title: str) -> str | None:
    """The kind a document's shape shows: a manual page's section ("Commands" for "ls(1)" or
    "ls.1.html"), "Release notes" for a version's notes; None for any other."""
    found = _MAN_TITLE.match(title.strip()) or _MAN_FILE.search(path.rpartition("/")[2])
    if found:
        return MAN_SECTIONS[found.group(1)]
    return "Release notes" if _RELEASE.search(title) else None


@dataclass(frozen=True)
class SourcePassage:
    """What placement needs of a chunk."""

    id: str
    document_id: str
    ordinal: int
    heading_path: tuple[str, ...]


@dataclass(frozen=True)
class SourceDocument:
    id: str
    path: str
    title: str
    toc: tuple[tuple[int, str], ...] = ()  # (depth, href) of the table of contents it carries
    up: tuple[str, str] | None = None  # (href, title) of its link up to the page it is part of
    links: tuple[tuple[str, int, str, str], ...] = ()  # what its own content lists (contents.Listing)

    @classmethod
    def of(cls, id: str, path: str, title: str, metadata: dict) -> SourceDocument:
        """The document as the HTML reader described it in its metadata."""
        return cls(id, path, title, toc_links(metadata), up_link(metadata), entries_of(metadata))


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def _shared_folders(paths: Sequence[str]) -> int:
    """How many leading folders every path shares ("corpus/a.html", "corpus/b/c.html": 1)."""
    folders = [p.split("/")[:-1] for p in paths]
    if not folders:
        return 0
    n = 0
    while all(len(f) > n for f in folders) and len({f[n] for f in folders}) == 1:
        n += 1
    return n


def toc_links(metadata: dict) -> tuple[tuple[int, str], ...]:
    """The (depth, href) pairs the HTML reader kept of a document's table of contents."""
    out = []
    for entry in metadata.get("toc") or ():
        if isinstance(entry, (list, tuple)) and len(entry) >= 2 and isinstance(entry[1], str):
            out.append((int(entry[0]) if isinstance(entry[0], int) else 1, entry[1]))
    return tuple(out)


def up_link(metadata: dict) -> tuple[str, str] | None:
    """The (href, title) of the link up to the page a document is part of, if the reader kept one."""
    up = metadata.get("up")
    if isinstance(up, (list, tuple)) and len(up) == 2 and all(isinstance(v, str) and v for v in up):
        return up[0], up[1]
    return None


class Structure:
    """The authors' structure as leaf path segments: the manual's tables of contents where its
    pages carry them, else its folders and file-name families; then a document's headings."""

    def __init__(self, documents: Iterable[SourceDocument], fan_out: int = 50) -> None:
        documents = list(documents)
        suffix = site_suffix([d.title for d in documents])
        if suffix:
            documents = [replace(d, title=d.title.removesuffix(suffix)) for d in documents]
        prefix = site_prefix([d.title for d in documents])
        if prefix:
            documents = [replace(d, title=d.title.removeprefix(prefix)) for d in documents]
        self.documents = {d.id: d for d in documents}
        self.titles = {d.id: clean_heading(d.title or _stem(d.path)) for d in documents}
        by_path = {d.path: d.id for d in documents}
        self.parent_of, position = toc_tree(
            [TocPage(d.id, d.path, d.toc) for d in documents if d.toc], by_path)
        # Where the tables of contents miss most pages, the pages that list others are the contents.
        self.sections: dict[str, tuple[str, str]] = {}
        self.contents_top: str | None = None
        self.folder_front: dict[str, str] = {}
        if len(self.parent_of) * 2 < len(documents):
            found = contents_tree([Listing(d.id, d.path, self.titles[d.id], d.links) for d in documents if d.links],
                                  by_path, len(documents))
            for child, parent in found.parent_of.items():
                self.parent_of.setdefault(child, parent)
            self.sections = found.sections
            self.contents_top = found.pages[0] if found.pages else None
            shared_depth = _shared_folders([d.path for d in documents])
            # A folder's first contents page stands for the folder, as its index page would: a
            # page the contents miss (a nested class of a package) hangs under it. Not the folder
            # every document shares: a page no contents page lists is no part of the first one.
            for d in found.pages:
                if self.documents[d].path.count("/") > shared_depth:
                    self.folder_front.setdefault(self.documents[d].path.rpartition("/")[0], d)
            base = len(position)
            for item, at in found.position.items():
                position.setdefault(item, base + at)
            # A page no contents page lists sits under a placed page of its folder that lists it
            # (its package's summary), not in a root of its own nor under the folders it is filed in.
            if found.pages:
                listings = [Listing(d.id, d.path, self.titles[d.id], d.links) for d in documents if d.links]
                for child, parent in listed_by(listings, by_path, self.parent_of, position, len(documents),
                                               self.contents_top, shared_depth).items():
                    self.parent_of[child] = parent
                    position[child] = len(position) + base
                # A folder none of whose pages lists others stands for the earliest of its pages
                # the contents place: a nested class no page lists hangs under its package.
                for d in sorted(documents, key=lambda d: (position.get(d.id, 10**9), d.path)):
                    if d.id in self.parent_of and d.path.count("/") > shared_depth:
                        self.folder_front.setdefault(d.path.rpartition("/")[0], d.id)
        # A folder is titled by its own index document ("library/index.html": "The Python
        # Standard Library"), else by its name; a page the TOC misses hangs under that index.
        self.folder_titles: dict[str, str] = {}
        self.folder_index: dict[str, str] = {}
        for d in documents:
            folder, _, name = d.path.rpartition("/")
            if folder and _stem(name).lower() in INDEX_NAMES:
                if d.title.strip():
                    self.folder_titles[folder] = self.titles[d.id]
                self.folder_index[folder] = d.id
        shared = self.shared_depth = _shared_folders([d.path for d in documents])
        self.missing_parent = self._follow_links_up(documents, by_path, shared)
        cut_circles(self.parent_of)
        self.home = self._home()
        self._fronts: dict[str, str] | None = None
        self.tops = set(self.parent_of.values()) - set(self.parent_of)  # pages at the top of a tree
        # The folders every document sits in name the whole knowledge base, not a part of it:
        # beside a TOC's parts, the pages the TOC misses would otherwise make a root of that name.
        self.root_folders = shared if self.parent_of else 0
        ordered = sorted(self.documents.values(),
                         key=lambda d: (d.id not in position, position.get(d.id, 0), d.path, d.id))
        self.rank = {d.id: i for i, d in enumerate(ordered)}
        by_folder: dict[str, list[SourceDocument]] = defaultdict(list)
        for d in ordered:
            if not self._in_toc(d) and d.id not in self.missing_parent:
                by_folder[d.path.rpartition("/")[0]].append(d)
        # Pages no contents place, grouped by the kind their shape shows (a manual page's section,
        # release notes by their version titles), where three or more share one.
        kinds = {d.id: k for d in ordered if d.id not in self.parent_of and d.id not in self.missing_parent
                 and d.id not in self.tops and not self._has_front(d) and (k := document_kind(d.path, self.titles[d.id]))}
        sizes = Counter(kinds.values())
        self.kind = {i: (f"kind:{k}", k) for i, k in kinds.items() if sizes[k] >= 3}
        self.family: dict[str, tuple[str, str]] = {}  # document id -> (family key, title)
        for folder, docs in by_folder.items():
            if len(docs) <= fan_out:
                continue
            # A big flat folder: files named "ddl-constraints", "ddl-basics" are one family,
            # titled by the family's own file ("ddl.html") when there is one.
            stems = {_stem(d.path): d for d in docs}
            families: dict[str, list[SourceDocument]] = defaultdict(list)
            for d in docs:
                match = _PREFIX.match(_stem(d.path))
                families[match.group(1) if match else _stem(d.path)].append(d)
            for prefix, members in families.items():
                if len(members) < 2:
                    continue
                head = stems.get(prefix)
                title = self.titles[head.id] if head and head.title else folder_title(prefix)
                for d in members:
                    self.family[d.id] = (f"family:{folder}/{prefix}", title)

    def _follow_links_up(self, documents: list[SourceDocument], by_path: dict[str, str],
                         shared: int) -> dict[str, tuple[str, str]]:
        """Where no TOC lists a page, its link up names its parent (DocBook's and Sphinx's pages
        carry one): that page, added to `parent_of`, or, when it is not in the knowledge base, a
        part of the link's title ("Chapter 13. Concurrency Control"), returned as document id ->
        (key, title). A missing index page stands for its folder; the manual's home, for nothing."""
        missing: dict[str, tuple[str, str]] = {}
        for d in documents:
            if d.up is None or d.id in self.parent_of:
                continue
            path = resolve(d.path, d.up[0])
            title = clean_heading(d.up[1])
            if path is None or not title:
                continue
            parent = by_path.get(path)
            if parent is not None:
                if parent != d.id:
                    self.parent_of[d.id] = parent
            elif _stem(path).lower() not in INDEX_NAMES:
                missing[d.id] = (f"doc:{path}", title)
            elif path.count("/") > shared:  # deeper than the folders every document shares
                folder = path.rpartition("/")[0]
                self.folder_titles.setdefault(folder, title)
                missing[d.id] = (f"dir:{folder}", self.folder_titles[folder])
        return missing

    def _home(self) -> str | None:
        """The manual's home page: of the pages at the top of a tree of pages (none above them),
        the one most pages sit under. Another top page without a link up ("Distributing Python
        Modules (Legacy version)", which no TOC lists and which links up to nothing) is a part."""
        below: Counter[str] = Counter()
        for doc_id in self.parent_of:
            node = doc_id
            while node in self.parent_of:
                node = self.parent_of[node]
            below[node] += 1
        if not below:
            return None
        if self.contents_top in below:  # the contents page of a manual without a table of contents
            return self.contents_top
        return min(below, key=lambda d: (-below[d], self.documents[d].path, d))

    def _has_front(self, doc: SourceDocument) -> bool:
        folder = doc.path.rpartition("/")[0]
        front = self.folder_index.get(folder) or self.folder_front.get(folder)
        return front is not None and front in self.parent_of and front != doc.id

    def _in_toc(self, doc: SourceDocument) -> bool:
        return doc.id in self.parent_of

    def _above(self, doc_id: str) -> list[tuple[str, str]]:
        """The segments of the documents above one in the TOC tree, outermost first, without
        the manual's home page (its parts are the roots). The outermost is the home unless it
        links up to a page of its own: then it is a part, under that page if one is missing."""
        chain = []
        node = self.parent_of.get(doc_id)
        while node is not None:
            chain.append(node)
            node = self.parent_of.get(node)
        chain.reverse()
        top = chain[0] if chain else doc_id
        out = [self.sections.get(a) or (f"doc:{self.documents[a].path}", self.titles[a]) for a in chain]
        front = self._placed_front(top)
        if front is not None and top not in self.missing_parent:
            # A contents page of its own (a package's "Uses of" page) in a folder whose front
            # page the contents place is a page of that part, not a root beside the manual's parts.
            return [*self._above(front), (f"doc:{self.documents[front].path}", self.titles[front]), *out]
        if self.documents[top].up is None and top == self.home:
            # A contents page's sections are the parts; what it lists outside any section (a
            # package's classes) stays under it, as the part of the manual it opens.
            if top != self.contents_top or (len(chain) > 1 and chain[1] in self.sections):
                return out[1:]
        return [self.missing_parent[top], *out] if top in self.missing_parent else out

    def _placed_front(self, doc_id: str) -> str | None:
        """The page standing for a document's folder, where the contents place it and it is not
        the document itself nor the manual's home."""
        if doc_id == self.home or self.documents[doc_id].path.count("/") <= self.shared_depth:
            return None  # (in the folder every document shares, every page lists others)
        if self._fronts is None:  # per folder, the earliest placed page that lists others
            self._fronts = {}
            for d in sorted(self.documents.values(), key=lambda d: self.rank[d.id]):
                if d.id in self.parent_of and d.links:
                    self._fronts.setdefault(d.path.rpartition("/")[0], d.id)
        folder = self.documents[doc_id].path.rpartition("/")[0]
        front = self.folder_index.get(folder)
        front = front if front is not None and front in self.parent_of else self._fronts.get(folder)
        if front is None or front == doc_id:
            return None
        top = front  # only a page of the manual's own tree, the one under its home
        while top in self.parent_of:
            top = self.parent_of[top]
        return front if top == self.home else None

    def segments(self, document_id: str, heading_path: Sequence[str]) -> list[tuple[str, str]]:
        doc = self.documents.get(document_id)
        if doc is None:
            return []
        folder = doc.path.rpartition("/")[0]
        index = self.folder_index.get(folder) or self.folder_front.get(folder)
        if doc.id in self.parent_of or (doc.id in self.tops and doc.id != self.home):
            out = self._above(doc.id)  # a page of a tree, or the top page of a part
        elif doc.id == self.home and doc.id in self.tops:
            out = []  # the home page's own subjects sit with its own pages, not under its folders
        elif index is not None and index in self.parent_of and index != doc.id:
            # Missed by the TOC, but its folder's index page is in it: hang under that page.
            out = self._above(index)
            out.append((f"doc:{self.documents[index].path}", self.titles[index]))
        else:
            folders = doc.path.split("/")[:-1]
            out = []
            start = self.root_folders
            # A folder above whose index page the TOC lists ("ref/contrib/index.html" for
            # "ref/contrib/gis/measure.html"): the page hangs under that index page, as one in the
            # folder itself does, not under a second node of the folder bearing the index's title.
            for i in range(len(folders), self.root_folders, -1):
                front = self.folder_index.get("/".join(folders[:i]))
                if front is not None and front != doc.id and (
                        front in self.parent_of or (front in self.tops and front != self.home)):
                    out = [*self._above(front), (f"doc:{self.documents[front].path}", self.titles[front])]
                    start = i
                    break
            for i, f in enumerate(folders):
                if i < start:
                    continue
                path = "/".join(folders[:i + 1])
                out.append((f"dir:{path}", self.folder_titles.get(path) or folder_title(f)))
            if doc.id in self.missing_parent:
                if self.missing_parent[doc.id] not in out:  # a missing index page: its folder
                    out.append(self.missing_parent[doc.id])
            elif doc.id in self.kind:
                out.append(self.kind[doc.id])
            elif doc.id in self.family:
                out.append(self.family[doc.id])
        doc_title = self.titles[doc.id]
        family = self.family.get(doc.id)
        if not (family and _stem(doc.path) == family[0].rsplit("/", 1)[-1]) and \
                not (out and out[-1][1] == doc_title):
            out.append((f"doc:{doc.path}", doc_title))
        headings = self._headings(doc, heading_path)
        if headings and not is_part_heading(headings[0]):
            out.append((f"heading:{doc.path}#{headings[0]}", headings[0]))
        return out

    def _headings(self, doc: SourceDocument, heading_path: Sequence[str]) -> list[str]:
        headings = [clean_heading(h) for h in heading_path if h.strip()]
        if headings and headings[0] == self.titles[doc.id]:
            headings = headings[1:]
        # A letter of an index ("D", "G") heads a list, not a subject; a part of the document
        # ("Description", "Parameters") is the document's own subject: its subjects stay there.
        return [h for h in headings if sum(c.isalpha() for c in h) >= 3]

    def sections_below(self, document_id: str, heading_path: Sequence[str]) -> list[tuple[str, str]]:
        """The headings below the one `segments` ends on, outermost first, as (key, title): the
        authors' own sections of a part, where a part too big for one node is cut."""
        doc = self.documents.get(document_id)
        headings = self._headings(doc, heading_path) if doc is not None else []
        if not headings or is_part_heading(headings[0]):
            return []
        return [(f"subsection:{doc.path}#{'#'.join(headings[:i + 1])}", h)  # type: ignore[union-attr]
                for i, h in enumerate(headings[1:], 1) if not is_part_heading(h)]


_CALL = re.compile(r"\s*\(\)$|\s*\(\d[a-z]*\)$")  # "ABS()", a man page's "git-gc(1)"


def heading_name(title: str) -> str:
    """A name as a heading writes it, for comparing the two: without code marks, call
    parentheses or a man page's section."""
    return _CALL.sub("", " ".join(title.split()).strip("`*\"' ")).strip("`*")


def _heads(heading: str, name: str) -> bool:
    """Whether a heading names the subject: the same name, case aside, unless one is written in
    capitals and the other not ("CACHES", a setting, is not the section "Caches")."""
    written = heading_name(heading)
    return written.casefold() == name.casefold() and (written == name or written.isupper() == name.isupper())


def _without_sole_headings(passages: dict[str, SourcePassage]) -> dict[str, SourcePassage]:
    """The passages with their document's sole top heading left out: a heading that every passage
    of a document sits under ("MkDocs Plugins" atop the page titled "Developing Plugins") is the
    document itself, and its sections are the parts below it. Kept, it would hold all the
    document's subjects as one part, and a document too big for one node would be cut among its
    pages rather than between its sections."""
    tops: dict[str, set[str]] = defaultdict(set)
    deeper: set[str] = set()
    for p in passages.values():
        if p.heading_path:
            tops[p.document_id].add(p.heading_path[0])
            if len(p.heading_path) > 1:
                deeper.add(p.document_id)
    sole = {d: next(iter(h)) for d, h in tops.items() if len(h) == 1 and d in deeper}
    return {i: replace(p, heading_path=p.heading_path[1:])
            if p.heading_path and sole.get(p.document_id) == p.heading_path[0] else p
            for i, p in passages.items()}


def place(subject_chunks: dict[str, Sequence[str]], titles: dict[str, str], importance: dict[str, float],
          passages: dict[str, SourcePassage], structure: Structure) -> list[Leaf]:
    """One leaf per subject, under the document (then heading) most of its passages come from;
    ties go to the earliest in reading order. A subject with a section of its own (a heading
    naming it: a function's entry, a setting's, a command's page) sits where those sections are,
    not where it is most mentioned. A subject with no known passage sits at the top.
    The manual's home page lists every part: a subject it names is about it only when nothing
    else names that subject."""
    leaves = []
    home = structure.home
    below_sole = _without_sole_headings(passages)
    for subject, chunk_ids in subject_chunks.items():
        found = [passages[c] for c in chunk_ids if c in passages]
        found = [p for p in found if p.document_id != home] or found
        name = heading_name(titles[subject])
        found = [p for p in found if p.heading_path and _heads(p.heading_path[-1], name)] or found
        found = [below_sole[p.id] for p in found]
        if not found:
            leaves.append(Leaf(subject, titles[subject], importance.get(subject, 0.0), [], (10**9, 0)))
            continue
        docs = Counter(p.document_id for p in found)
        first = {}
        for p in found:
            first.setdefault(p.document_id, (structure.rank.get(p.document_id, 10**9), p.ordinal))
            first[p.document_id] = min(first[p.document_id], (structure.rank.get(p.document_id, 10**9), p.ordinal))
        doc = min(docs, key=lambda d: (-docs[d], first[d]))
        inside = [p for p in found if p.document_id == doc]
        heads = Counter(p.heading_path[:2] for p in inside)
        earliest = {}
        for p in inside:
            earliest[p.heading_path[:2]] = min(earliest.get(p.heading_path[:2], 10**9), p.ordinal)
        heading = min(heads, key=lambda h: (-heads[h], earliest[h]))
        below: Counter[tuple[str, ...]] = Counter()
        for p in inside:
            if p.heading_path[:2] == heading:
                below[p.heading_path] += 1
                earliest[p.heading_path] = min(earliest.get(p.heading_path, 10**9), p.ordinal)
        deepest = min(below, key=lambda h: (-below[h], earliest[h]))
        leaves.append(Leaf(subject, titles[subject], importance.get(subject, 0.0),
                           structure.segments(doc, heading), first[doc], structure.sections_below(doc, deepest),
                           (first[doc][0], earliest[deepest])))
    return leaves
