"""The outline in a compile: built in PLAN from the page subjects and the sources, one overview
subject per node, and stored (with each node's overview slug) for exports to read. It is built
again only when the fingerprint of its inputs changed."""

from __future__ import annotations

import heapq
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..fingerprint import fingerprint
from ..storage.base import Store
from ..storage.document_listing import stored_documents
from ..storage.plans import PagePlan, Subject, sorted_unique
from ..storage.records import CacheEntry, Chunk, Document, Entity, Relation
from ..titles import clean_heading
from .build import build_outline
from .limits import OutlineLimits
from .placement import SourceDocument, SourcePassage, Structure, place
from .subject_edges import subject_edges
from .tree import OutlineNode, outline_json

OUTLINE_KEY = "outline"
CHUNKS_PER_SUBJECT = 64  # passages read to place a subject: enough to find where it lives and, for most, its own section
OVERVIEW_MEMBERS = 12
OUTLINE_VERSION = 25  # bump when the build changes what the same inputs give (2: part headings make no node;
# 3: beside a TOC, the folder of every document is no node; 4: a page links up to its parent, a node
# lists the parts of its namesake child; 5: a node titled like a part of any document names its parent;
# 6: the pages of a chapter's own index page are its pages, not a child; 7: lettered appendices
# and parts lose their letter; 8: a top page other than the home is a part, not the home; 9: a node
# titled like its parent is named with the nearest ancestor of another title; 10: a node that had
# subtopics keeps them down to 80% of a leaf; 11: contents pages of any name, balanced roots; 12: document kinds;
# 13: a part past its share that cannot open is cut into runs; a page no contents lists sits under the page of its folder that lists it;
# 14: a root is opened past 95% of its share; a part of documents past its share lifts those of six pages or more
# and keeps the rest together, or is cut into runs; 15: below the roots, a part with no parts of its own is cut
# into runs in reading order, not into communities named after a member; 16: a part cut among its pages across
# runs stays one part, under its title, in each run; 17: so does a section whose pages interleave with another's,
# and runs alike at their ends are named by their first and last pages; 18: a part opened once is
# never taken for another that got its address, so one input gives one tree; 19: a node named like a page
# but for a man page's section has that page as overview, and a name in capitals is not a title in words;
# 20: a subject with a section of its own sits where that section is, its 64 first passages read;
# 21: built from its inputs alone, not from the previous outline: a recompile ends where a compile from scratch does;
# 22: a node named like a module's page but for the tagline after its name has that page as overview;
# 23: a page in a subfolder of a folder whose index page the TOC lists hangs under that index page;
# 24: a document's sole top heading is the document; a part past its cap is cut between its sections
# (then its sections' sections, then its pages) into runs named by them, its biggest documents lifted
# only until the rest fits; 25: a contents page of its own in a folder whose placed page stands for it
# hangs under that page, the home's own subjects sit with it, runs are named by the documents they hold)


@dataclass
class PlannedOutline:
    """The outline PLAN works with: its root topics, one overview subject per node, and whether
    it is the stored one, reused because its inputs did not change."""

    roots: list[OutlineNode]
    overviews: list[Subject]
    reused: bool
    inputs: str  # fingerprint of what it was built from
    stands_for: dict[str, str] = field(default_factory=dict)  # node id -> subject whose page is its overview


async def stored_outline(store: Store) -> dict[str, Any] | None:
    found = await store.get(CacheEntry, [OUTLINE_KEY])
    return found[0].value if found else None  # type: ignore[attr-defined]


def _inputs(subjects: Sequence[Subject], chunk_ids: dict[str, list[str]], passages: dict[str, SourcePassage],
            documents: Sequence[SourceDocument], edges: Sequence[tuple[str, str, float]], limits: OutlineLimits) -> str:
    """Everything the build reads: the subjects and the passages that place them (where each
    sits: document, order, headings), the documents' structure (path, title, table of contents),
    the edges between subjects and the limits. So an edit that moves no subject's passages
    keeps the outline."""
    return fingerprint(
        OUTLINE_VERSION, asdict(limits),
        [(s.id, s.title, s.importance, chunk_ids[s.id]) for s in subjects],
        sorted((p.id, p.document_id, p.ordinal, list(p.heading_path)) for p in passages.values()),
        sorted((d.id, d.path, d.title, [list(t) for t in d.toc], d.up, [list(e) for e in d.links]) for d in documents),
        edges,
    )


async def plan_outline(store: Store, subjects: Sequence[Subject], entities: Sequence[Entity],
                       relations: Sequence[Relation], limits: OutlineLimits | None = None,
                       *, folder: str | None = None) -> PlannedOutline:
    """The outline over the subjects that get pages, and one topic subject per node (its
    overview page, written from its central members like a topic page). `folder`: the folder
    fingerprint of this compile's ingest, whose listing holds the documents. The stored outline is
    reused when what it was built from did not change (the subjects' first passages are read
    to tell: an edit elsewhere in a document moves none of them)."""
    limits = limits or OutlineLimits()
    by_id = {e.id: e for e in entities}
    entity_of = {s.id: list(s.entity_ids) for s in subjects}
    chunk_ids: dict[str, list[str]] = {}
    for s in subjects:
        ids = s.chunk_ids or [c for e in s.entity_ids if e in by_id for c in by_id[e].chunk_ids]
        # The first few of the sorted unique ids: an entity's are so already (checked in one pass).
        chunk_ids[s.id] = (sorted_unique(ids) if ids is s.chunk_ids else heapq.nsmallest(CHUNKS_PER_SUBJECT, set(ids))
                           )[:CHUNKS_PER_SUBJECT]
    # The documents' structure as the ingest that ended with `folder` listed it, else as stored.
    listed = await stored_documents(store, folder)
    if listed is None:
        listed = [(d.id, d.path, d.title, d.metadata) async for d in store.scan(Document)]  # type: ignore[attr-defined]
    documents = [SourceDocument.of(i, path, title, metadata) for i, path, title, metadata in listed]
    wanted = sorted({c for ids in chunk_ids.values() for c in ids})
    chunks: list[Chunk] = await store.get(Chunk, wanted)  # type: ignore[assignment]
    passages = {c.id: SourcePassage(c.id, c.document_id, c.ordinal, tuple(c.heading_path)) for c in chunks}
    edges = subject_edges(entity_of, ((r.source, r.target, float(max(r.strength, 1))) for r in relations))
    inputs = _inputs(subjects, chunk_ids, passages, documents, edges, limits)
    before = await stored_outline(store)
    reused = bool(before) and before.get("inputs") == inputs  # type: ignore[union-attr]
    if reused:
        roots = [OutlineNode.from_dict(d) for d in before["roots"]]  # type: ignore[index]
    else:
        leaves = place(chunk_ids, {s.id: s.title for s in subjects}, {s.id: s.importance for s in subjects},
                       passages, Structure(documents, limits.fan_out))
        # Not from the previous outline: a recompile builds the tree a compile from scratch does.
        roots = build_outline(leaves, edges, limits=limits)
    by_subject = {s.id: s for s in subjects}
    stands_for = pages_named_like_nodes(roots, subjects)
    first_passage = _first_passages(documents, passages)
    document_of = {d.path: d.id for d in documents}
    overviews = []
    for root in roots:
        for node, _depth in root.walk():
            if node.id in stands_for:
                continue
            members = [e for s in node.central for e in by_subject[s].entity_ids][:OVERVIEW_MEMBERS]
            overviews.append(Subject(
                id=node.id, title=node.title, kind="topic", entity_ids=list(dict.fromkeys(members)),
                description=f"Overview of {node.title}: {len(node.all_subjects())} pages.",
                importance=float(len(node.all_subjects())),
                chunk_ids=_own_passages(node, first_passage, chunk_ids, passages, document_of),
            ))
    return PlannedOutline(roots, overviews, reused, inputs, stands_for)


def _first_passages(documents: Sequence[SourceDocument], passages: dict[str, SourcePassage]) -> dict[str, str]:
    """Document path -> the first of its passages that were read (its opening, where a subject
    sits in it)."""
    first: dict[str, SourcePassage] = {}
    for p in passages.values():
        known = first.get(p.document_id)
        if known is None or (p.ordinal, p.id) < (known.ordinal, known.id):
            first[p.document_id] = p
    return {d.path: first[d.id].id for d in documents if d.id in first}


def _own_passages(node: OutlineNode, first_passage: dict[str, str], chunk_ids: dict[str, list[str]],
                  passages: dict[str, SourcePassage], document_of: dict[str, str] | None = None) -> list[str]:
    """The passages an overview is written from besides its members' claims: the opening of the
    document or the section the node stands for (its first paragraph says what the part is), and
    each central member's first passage in reading order (where the authors define it). Sorted,
    as plans keep their chunks."""
    own = []
    if node.key.startswith("doc:") and (opening := first_passage.get(node.key[4:])):
        own.append(opening)
    if node.key.startswith("heading:") and document_of:
        # A section's node: the first passage read under its heading ("These options influence
        # HTML output ..."), not a later one that opens on the tail of an entry.
        path, _, heading = node.key[len("heading:"):].partition("#")
        document = document_of.get(path)
        under = [p for p in passages.values() if p.document_id == document
                 and heading in (clean_heading(h) for h in p.heading_path)]
        if under:
            own.append(min(under, key=lambda p: (p.ordinal, p.id)).id)
    for s in node.central[:OVERVIEW_MEMBERS]:
        read = [passages[c] for c in chunk_ids.get(s, ()) if c in passages]
        if read:
            own.append(min(read, key=lambda p: (p.ordinal, p.id)).id)
    return sorted(set(own))


_MAN_SECTION = re.compile(r"\s*\(\d[a-z]*\)$")  # a man page's section after its name: "git-commit(1)"


# A code name's tagline after a dash: "sphinx.ext.viewcode -- Add links to highlighted source code".
_TAGLINE = re.compile(r"^(\S+)\s+(?:--|[—–])\s+\S.*$")


def _named(title: str) -> str:
    """The name a node or a page is known by, as two of them are compared: case aside, without
    a man page's section ("git-commit(1)" is the page "git-commit"), and without the tagline after
    a module's name ("sphinx.ext.viewcode -- Add links ..." is the page "sphinx.ext.viewcode")."""
    name = _MAN_SECTION.sub("", " ".join(title.split()))
    return _TAGLINE.sub(r"\1", name).casefold()


def _same_case(node: str, page: str) -> bool:
    """A name written in capitals names a constant or a setting ("TEMPLATES"), not the part of the
    manual titled in words ("Templates"): the two are one name only when written alike."""
    return node == page or not (node.isupper() or page.isupper())


def pages_named_like_nodes(roots: Sequence[OutlineNode], subjects: Sequence[Subject]) -> dict[str, str]:
    """Node id -> the subject whose page is the node's overview: a node named like a page of the
    wiki (the entity a reference document is about, the community of a section, a command's page
    beside the node of its man page) has that page, not a second page of the same title on the
    same subject. An entity or concept is preferred to a topic; a page stands for one node, the
    one it is placed under if any, else the first."""
    named: dict[str, list[Subject]] = {}
    for s in subjects:
        named.setdefault(_named(s.title), []).append(s)
    for same in named.values():
        same.sort(key=lambda s: s.kind == "topic")  # stable: entities and concepts first
    nodes = [(node, [s for s in named[key] if _same_case(node.title, s.title)])
             for root in roots for node, _depth in root.walk() if (key := _named(node.title)) in named]
    stands_for: dict[str, str] = {}
    used: set[str] = set()
    for placed_only in (True, False):
        for node, same in nodes:
            if node.id in stands_for:
                continue
            under = set(node.all_subjects()) if placed_only else None
            if s := next((s for s in same if s.id not in used and (under is None or s.id in under)), None):
                stands_for[node.id] = s.id
                used.add(s.id)
    return stands_for


async def keep_outline(store: Store, outline: PlannedOutline, plans: Sequence[PagePlan]) -> None:
    """Store the outline with the slug of every page it names, for exports and the next compile
    (no write when the stored one is already that)."""
    page_of = {p.subject_id: p.slug for p in plans if p.action != "DELETE" and p.subject_id}
    for root in outline.roots:
        for node, _depth in root.walk():
            node.slug = page_of.get(node.id) or page_of.get(outline.stands_for.get(node.id, ""))
    value = {"roots": [r.to_dict() for r in outline.roots], "page_of": page_of, "inputs": outline.inputs}
    if outline.reused and await stored_outline(store) == value:
        return
    await store.upsert([CacheEntry(id=OUTLINE_KEY, namespace="outline", value=value, created_at=time.time())])


def published(value: dict[str, Any], active: set[str]) -> dict[str, Any]:
    """A stored outline as the exported tree, naming only pages that are `active` slugs."""
    roots = [OutlineNode.from_dict(d) for d in value.get("roots", [])]
    page_of = {s: slug for s, slug in value.get("page_of", {}).items() if slug in active}
    overview = {n.id: n.slug for r in roots for n, _d in r.walk() if n.slug and n.slug in active}
    return outline_json(roots, page_of, overview)
