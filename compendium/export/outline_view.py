"""The outline an export shows: the one the compile stored, or one built from the snapshot when the
compile stored none (or it misses pages), so every export's index is a tree over every page."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from ..outline import OutlineNode, build_outline, outline_json
from ..outline.placement import (
    SourceDocument,
    SourcePassage,
    Structure,
    place,
    site_prefix,
    site_suffix,
)
from ..outline.stored import CHUNKS_PER_SUBJECT, published
from ..outline.subject_edges import subject_edges
from ..titles import clean_heading
from .snapshot import WikiSnapshot


def _subject(page) -> str:  # type: ignore[no-untyped-def]
    return page.subject_id or page.slug


def site_outline(wiki: WikiSnapshot) -> dict[str, Any]:
    """The published tree ({"title", "slug", "pages", "children"} per node) over the active pages."""
    active = set(wiki.page_by_slug)
    stored = wiki.outline
    if stored:
        tree = published(stored, active)
        if listed_slugs(tree) >= active:
            return tree
    previous = [OutlineNode.from_dict(d) for d in (stored or {}).get("roots", [])]
    node_ids = {n.id for r in previous for n, _d in r.walk()}
    pages = [p for p in wiki.pages if _subject(p) not in node_ids]
    topic_members = {t.id: list(t.members) for t in wiki.topics}
    entity_of = {_subject(p): topic_members.get(_subject(p), [_subject(p)]) for p in pages}
    chunk_ids: dict[str, list[str]] = {}
    for p in pages:
        ids = [c for e in entity_of[_subject(p)] if e in wiki.entity_by_id
               for c in sorted(wiki.entity_by_id[e].chunk_ids)] or list(p.cited_chunks)
        chunk_ids[_subject(p)] = sorted(set(ids))[:CHUNKS_PER_SUBJECT]
    passages = {c.id: SourcePassage(c.id, c.document_id, c.ordinal, tuple(c.heading_path)) for c in wiki.chunks}
    documents = [SourceDocument.of(d.id, d.path, d.title, d.metadata) for d in wiki.documents]
    leaves = place(chunk_ids, {_subject(p): p.title or p.slug for p in pages}, {}, passages, Structure(documents))
    edges = subject_edges(entity_of, ((r.source, r.target, float(max(r.strength, 1))) for r in wiki.relations))
    roots = build_outline(leaves, edges, previous=previous)
    overview = {_subject(p): p.slug for p in wiki.pages if _subject(p) in node_ids}
    return outline_json(roots, {_subject(p): p.slug for p in pages}, overview)


def listed_slugs(tree: dict[str, Any]) -> set[str]:
    """Every slug a published tree lists: its pages and its nodes' overview pages."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        found.update(node["pages"])
        if node["slug"]:
            found.add(node["slug"])
        stack.extend(node["children"])
    return found


@dataclass
class Placement:
    """Where each page sits in the tree: the trail of nodes above it, and the node it is."""

    trail: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # slug -> nodes, root first
    node_of: dict[str, dict[str, Any]] = field(default_factory=dict)  # overview slug -> its node
    anchor: dict[int, str] = field(default_factory=dict)  # id(node) -> its anchor on the index


def placement(tree: dict[str, Any]) -> Placement:
    """Breadcrumbs for every page of a published tree; overview pages also know their node."""
    out = Placement(anchor={id(n): a for n, a in numbered(tree)})
    stack: list[tuple[dict[str, Any], list[dict[str, Any]]]] = [(c, []) for c in reversed(tree["children"])]
    while stack:
        node, above = stack.pop()
        here = [*above, node]
        if node["slug"]:
            out.trail.setdefault(node["slug"], above)
            out.node_of.setdefault(node["slug"], node)
        for slug in node["pages"]:
            out.trail.setdefault(slug, here)
        stack.extend((c, here) for c in reversed(node["children"]))
    return out


def anchor(node: dict[str, Any], path: list[int]) -> str:
    """An id for a node's place on the index page (stable for the same tree)."""
    return "n-" + "-".join(str(i) for i in path)


def numbered(tree: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Every node with its index anchor, in reading order."""
    found: list[tuple[dict[str, Any], str]] = []

    def walk(node: dict[str, Any], path: list[int]) -> None:
        for i, child in enumerate(node["children"], start=1):
            found.append((child, anchor(child, [*path, i])))
            walk(child, [*path, i])

    walk(tree, [])
    return found


_BULLET_LINK = re.compile(r"^\s*[-*]\s+\[\[([^\[\]|\n]+?)(?:\|[^\[\]\n]*)?\]\][^\n]*?\w", re.MULTILINE)
_QUOTES = frozenset('"“”\'‘’')
_ARTICLE = re.compile(r"^(?:an?|the)\s+", re.IGNORECASE)
_KEYWORD = re.compile(r"^(?:class|exception|function|method|attribute|property|module|interface|enum|struct|macro)\s+")
# What a summary says right after its member's name when it says what the member is.
# ("X: ...", "X is ...", "X copies ..."; not "X has ...", nor "X users are ..." whose subject is not X)
# ("X – what it is", a dash as the term's separator; "X (deprecated): ...", a remark before the colon)
_SAYS_WHAT = re.compile(
    r"^(?::\s*\S|,\s|\s[–—]\s+\S|\s\([^()]{1,30}\):\s*\S|\s(?:is|are|means|refers|represents)\b"
    r"|\s(?!has\b|does\b|was\b|is\b)[a-z]+s\b(?!\s+(?:are|is|were|was|have|has|can|may|must|will|should|would|do|did)\b))")
# "The GeoIP2 object is a wrapper ...": the kind of thing the member is, then what it is.
_KIND_IS = re.compile(r"^\s[a-z]+\s(?:is|are)\s+(?:an?|the|one)\s")
# "The AM_GNU_GETTEXT macro tests for ...", "The X module contains ...": a code name's kind, then what it does.
_KIND_DOES = re.compile(
    r"^\s(?:macro|module|package|function|method|class|flag|option|setting|variable|directive|role|extension|"
    r"command|hook|field|attribute|property|library|script|program|builder|filter|signal|constant|event|exception)"
    r"\s(?!has\b|does\b|was\b|is\b)[a-z]+s\b")
# An owner written before a member's name ("Model.get_absolute_url()", "Field.clean()").
_OWNER = re.compile(r"^`?[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*\.(?=[A-Za-z_])")
# A lead that points at its own page ("This document explains ..."): a section's line says what it holds.
_SELF = re.compile(r"^(?:this|these)\s+(?:documents?|guides?|tutorials?|sections?|pages?|chapters?|articles?|"
                   r"references?|parts?|appendix|manual|how-?to|overview|topics?|extensions?|modules?|packages?|"
                   r"plugins?|librar(?:y|ies))\b", re.IGNORECASE)


# What a line says when it says when, where or how available rather than what ("`error_messages`:
# New in Django 3.2.", "AsGeoJSON: Availability: MariaDB, ..."), or what follows it ("The functions
# defined in this module share the following properties:"): no line saying what the member is.
_ASIDE = re.compile(r"^(?:(?:New|Changed|Added)\s+in\b|Deprecated\b|Availability\s*:|(?:Note|Warning|See\s+also)\s*:)",
                    re.IGNORECASE)
# "X is similar to Y", "X differs from Y", "X is read from ...", "X are automatically served by ...":
# what the member is like, or what is done with it, not what it is.
_NOT_WHAT = re.compile(
    r"^\s(?:(?:is|are)\s+(?:(?:almost|nearly|exactly|essentially|mostly|very)\s+)?"
    r"(?:the\s+same\s+as|similar\s+to|identical\s+to|equivalent\s+to|like)\b|differs?\s+from\b"
    r"|(?:is|are)\s+(?:[a-z]+ly\s+)?(?!used\b)(?:[a-z]+(?:ed|en)|read|set|built|sent|kept|found|held|put|run|made|shown|written|given|taken)\s+(?:from|in|into|at|on|by|with)\b)")
# A part's opening that leans on what comes before or after it ("Fortunately, the autodoc extension
# ...", "The sphinx-autogen script is also able to ...", "... in the sections below."), or is an
# entry of a member ("class A: Alias for Area class.") rather than the part's opening.
_LEANS = re.compile(r"^(?:Fortunately|Unfortunately|However|Also|So|Then|Thus|Now|Instead|Finally|Here|Similarly|"
                    r"Otherwise|Therefore|Of\s+course)\b|\b(?:also|below|above|following)\b|:$", re.IGNORECASE)
_ENTRY = re.compile(r"^`?([^\s:`][^:`]{0,60}?)`?:\s")
_LETTERS = re.compile(r"[^a-z0-9]+")


# What a line says that is not what the member is: a clause hung on its name ("PATCH, which is the
# ... output"), what the reader is told to do ("You don't need to fill this in.", advice), another name
# for it ("is also known as ..."), a field of its entry, or a pointer at what is around it ("below").
_NOT_A_DEFINITION = re.compile(r"^(?:,\s*which\b|[:\s–—]*You\b|\s(?:is|are)\s+also\s+(?:known\s+as|called)\b"
                               # a field of the entry ("Atom1Feed: Spec: RFC 4287")
                               r"|:\s*[A-Z][a-z]+:\s)"
                               r"|\bthe\s+following\b|\b(?:below|above)(?=\s*(?:[.,;:)]|$))"
                               # advice ("If Site plays a key role ..., consider using ...", "you should ...")
                               r"|\b(?:consider\s+using|you\s+should|we\s+recommend)\b", re.IGNORECASE)


def _says_what(rest: str) -> bool:
    """Whether what a line says after its member's name says what the member is, not when it came,
    what follows it, what it is like, what is done with it or what the reader does."""
    said = rest.lstrip(" :–—,").rstrip()
    return not (_ASIDE.match(said) or said.endswith(":") or _NOT_WHAT.match(rest) or _NOT_A_DEFINITION.search(rest))


def _part_opening(title: str, summary: str) -> bool:
    """Whether a part's opening reads alone as its line: it leans on nothing, and an entry it opens
    with ("gitcore-tutorial: A Git core tutorial") is the part's own."""
    if _LEANS.search(summary.rstrip(". ")) or _ASIDE.match(summary):
        return False
    entry = _ENTRY.match(summary)
    if entry is None:
        return True
    term, name = _LETTERS.sub("", entry[1].lower()), _LETTERS.sub("", title.lower())
    return bool(term) and (name.startswith(term) or term.startswith(name))


def described_in(markdown: str) -> set[str]:
    """The slugs a page's own list opens a line with ("- [[slug|Name]]: what it is"): members
    the page already says what they are (a bare link, as under "Related", says nothing)."""
    return {m.group(1).strip() for m in _BULLET_LINK.finditer(markdown)}


def line_after(title: str, summary: str, part: bool = False) -> str:
    """What a member's line says after its name, from the summary of its page (the first sentence
    of its lead), when that summary says what the member is: it opens with the member's name (after
    an article, a keyword such as "class", before a signature) and goes on with what it is
    ("LOGGING: A data ..." -> ": A data ...", "class ArrayField(base_field): A field ..." -> ": A
    field ...", "Logging is ..." -> " is ..."), or it is a section's lead pointing at itself ("This
    document explains ...", after a dash). Else "": a sentence about something else ("SSH has no
    concept of trust levels", a merged page's other subject) would say what the member is not.
    A `part` of the manual (a subtopic, a document's page) is said by its opening, whatever it is."""
    summary = summary.strip()
    name = title.strip()
    if not summary or not name:
        return ""
    # "mail_admins()" opens "mail_admins(subject, ...)"; the page "git log" opens "git-log(1): ..."
    names = dict.fromkeys((name, name.removesuffix("()"), name.replace(" ", "-")))
    keyed = _KEYWORD.sub("", summary)
    for opening in dict.fromkeys((summary, _ARTICLE.sub("", summary), keyed)):
        # (its owner before it: "Model.get_absolute_url(): ..." for get_absolute_url())
        owned = _OWNER.match(opening)
        for said in dict.fromkeys((opening, opening[owned.end():] if owned else opening)):
            quoted = said[:1] in _QUOTES  # '"cat_sort_uniq" is similar to "union", but ...'
            written = said[1:] if quoted else said
            for bare in names:
                if not bare or not written.casefold().startswith(bare.casefold()):
                    continue
                rest = written[len(bare):]
                if quoted:
                    if rest[:1] not in _QUOTES:
                        continue
                    rest = rest[1:]
                if bare != name and not rest.startswith("(") and not (opening is keyed and keyed != summary):
                    continue  # "Random()" is not the filter "random" (but is "class Random: ...")
                if rest.startswith("(") and (close := rest.find("):")) > 0:  # a signature: "(base_field, size=None): ..."
                    rest = rest[close + 1:]
                if (_SAYS_WHAT.match(rest) or _KIND_IS.match(rest) or _KIND_DOES.match(rest)) and _says_what(rest):
                    return rest
    return " — " + summary if (part or _SELF.match(summary)) and _part_opening(title, summary) else ""


def document_titles(wiki: WikiSnapshot) -> set[str]:
    """The documents' titles as the outline reads them (no site name, no numbering), folded: a
    page so titled is a document's page, a part of the manual."""
    titles = [d.title for d in wiki.documents if d.title]
    suffix, prefix = site_suffix(titles) or "", site_prefix(titles) or ""
    return {clean_heading(t.removesuffix(suffix).removeprefix(prefix)).casefold() for t in titles}


_RELATED_LINK = re.compile(r"^\s*[-*]\s+\[\[([^\[\]|\n]+?)(?:\|[^\[\]\n]*)?\]\]\s*$")


def without_listed_related(markdown: str, listed: Collection[str]) -> str:
    """An overview page's text without the Related links its node lists under it anyway (each with
    its line, or on the "Also" line): a member is shown once. A Related section left empty goes."""
    out: list[str] = []
    related = False
    kept_in_section = 0
    heading_at = -1
    for line in markdown.split("\n"):
        if line.startswith(("## ", "[^")):  # a heading or the notes end the section
            if related and not kept_in_section:
                del out[heading_at:]
            related = line.strip() == "## Related"
            kept_in_section, heading_at = 0, len(out)
        elif related and (link := _RELATED_LINK.match(line)) and link[1].strip() in listed:
            continue
        elif related and line.strip():
            kept_in_section += 1
        out.append(line)
    if related and not kept_in_section:
        del out[heading_at:]
    return "\n".join(out).rstrip() + "\n"


def lead_of(markdown: str) -> str:
    """A page's lead: its first paragraph under the title, spaces folded."""
    for block in markdown.split("\n\n"):
        text = block.strip()
        if text and not text.startswith(("#", "*Also known as", "---")):
            return " ".join(text.split())
    return ""


def node_members(node: dict[str, Any], wiki: WikiSnapshot, described: Collection[str] = (),
                 documents: Collection[str] | None = None, shown: str = "") -> dict[str, Any]:
    """A node's members as its overview page lists them: its subtopics (title, overview slug or
    None, node, line) and its pages (slug, title, line), each with a line saying what the member
    is from its page's summary; then "also", the members with no such line as (slug or None,
    title, node or None), for a short line of links: an item with nothing after its name says
    nothing a link does not. A member the overview's own text `described` is not listed again.
    `documents`: the folded titles of the documents (document_titles), computed when not given.
    `shown`: the overview's own text; a member's line that is its lead said again is not said twice."""
    documents = document_titles(wiki) if documents is None else documents
    said_on_page = lead_of(shown)

    def line(slug: str | None, title: str, part: bool) -> str:
        page = wiki.page_by_slug.get(slug) if slug else None
        if page is None:
            return ""
        said = line_after(title, page.summary, part or title.casefold() in documents)
        core = " ".join(said.lstrip(" :–—,").split()).rstrip(".")
        return "" if said_on_page and len(core) > 20 and core in said_on_page else said

    children, pages, also = [], [], []
    for c in node["children"]:
        slug = c["slug"] if c["slug"] in wiki.page_by_slug else None
        if slug is not None and slug in described:
            continue
        said = line(slug, c["title"], True)
        if said:
            children.append((c["title"], slug, c, said))
        else:
            also.append((slug, c["title"], c))
    for s in node["pages"]:
        if s not in wiki.page_by_slug or s in described:
            continue
        title = wiki.page_by_slug[s].title or s
        said = line(s, title, False)
        if said:
            pages.append((s, title, said))
        else:
            also.append((s, title, None))
    return {"title": node["title"], "children": children, "pages": pages, "also": also}
