"""A topic's page without a model: what the group is, then its members, each with what it is.

The lead is a sentence of the sources saying what the group is, in this order: one defining the
topic's title; the definition of a member named like the group (a man page's NAME line atop the
node of that page); the first paragraph of the section or document the group is named after (an
index page's introduction, a part's opening paragraph, past the asides put first). Then each member with a
line of the sources saying what it is (its definition block, whatever keyword or owner precedes
its name, or a sentence opening with its name that defines it), its name linked where it stands,
so the line stays the authors' words. Members with no such line are the page's related links. A
group of which no sentence says what it is gets no page of facts: its links only, which cite
nothing (REFINE withholds it; its members stay in the index), for a member's definition would
say what one member is, not what the group is.
"""

from __future__ import annotations

import re

from ...templates.schema import Template
from ...tokens import count_tokens
from ..tasks import PageRequest
from .definitions import STRONG, WEAK
from .leads import _ASIDE, _lead, _matcher, _may_lead
from .sentence_pool import _evidence_sentences, _Sentence, _subject_marks, _subject_words
from .words import FUNCTION_WORDS
from .writer import _aliases, _render

_MAX_MEMBERS = 30  # member lines on one page; the rest are links
# A man page's title carries its section ("git-bundle(1)"); its NAME line names it without.
_MAN_SECTION = re.compile(r"\s*\(\d[a-z]*\)$")
# A module's or a part's title after its name ("sphinx.ext.graphviz -- Add Graphviz graphs").
_TITLE_TAIL = re.compile(r"\s+(?:--|[—–])\s+\S.*$")
_DESCRIBING = frozenset({"description", "overview", "introduction", "name", "purpose", "summary", "about"})
# The word PLAN adds to a group's title where a page of the wiki has it ("Database transactions
# overview" beside the document's page "Database transactions"): the sources write the title without it.
_APART = re.compile(r"\s+(?:overview|topic)$")


# A definition block's opening as the readers keep it: "`term`: what it is".
_BLOCK = re.compile(r"^`([^`\n]{1,160})`:\s+(?=[A-Za-z`\"'(])")
# Words an API reference writes before the name it defines ("class RasterField", "exception X").
_KEYWORDS = frozenset({"class", "exception", "function", "method", "attribute", "data", "property",
                       "classmethod", "staticmethod", "abstractmethod", "async", "coroutine", "module",
                       "interface", "enum", "struct", "type", "final", "static", "var", "const", "macro"})


def _block_term(text: str) -> tuple[str, int] | None:
    """(the name a definition block defines, where its term ends) for a sentence opening such a
    block: the term without the keywords before it and the signature after it
    ("`class Field(verbose_name=None)`: ..." defines Field); else None."""
    found = _BLOCK.match(text)
    if found is None:
        return None
    words = found[1].split("(", 1)[0].split()
    while len(words) > 1 and words[0].lower() in _KEYWORDS:
        words = words[1:]
    return " ".join(words), found.end(1) + 1


def _defines_member(term: str, names: tuple[str, ...]) -> bool:
    """A block's term names the member: the same name, or the member qualified by its owner
    ("django.views.generic.list.ListView" for ListView, "Field.dim" is not Field)."""
    term = term.casefold()
    return any(term == n.casefold() or term.endswith("." + n.casefold()) for n in names)


def _names_of(title: str) -> tuple[str, ...]:
    """The names a title is written by in sentences: itself, without a man page's section number
    and without the tagline after a dash; longest first."""
    names = {title.strip()}
    for pattern in (_MAN_SECTION, _TITLE_TAIL, _APART):
        bare = pattern.sub("", title).strip()
        if len(bare) > 1:
            names.add(bare)
    return tuple(sorted(names, key=len, reverse=True))


# A sentence comparing its subject with another thing ("The exact format is the same as the input/output
# format of ...", "citation usage is similar to footnote usage"): it says what the member is like, and
# leans on the other thing, not what the member is.
_COMPARES = re.compile(r"^[`*\"']*:?\s*(?:is|are)\s+(?:(?:almost|nearly|exactly|essentially|mostly)\s+)?"
                       r"(?:the\s+same\s+as|similar\s+to|identical\s+to|equivalent\s+to|like)\b", re.IGNORECASE)


# What a constructor's entry says: "Creates a new instance of `X` ...", "Constructs a `X`.".
_CONSTRUCTS = re.compile(r"^[:\s]*(?:Creates|Constructs|Instantiates|Initiali[sz]es)\s+(?:(?:a|an|the)\s+)?(?:new\s+)?"
                         r"(?:instance\s+of\s+(?:(?:a|an|the)\s+)?)?[`*]?([\w.$]+)")


def _constructs(said: str, names: tuple[str, ...]) -> bool:
    """Whether a definition block's text is a constructor's of the member it names: "Creates a new
    instance of `CircuitBreakingException` ..." under `CircuitBreakingException(String message)`
    says how one is made, not what the class is."""
    found = _CONSTRUCTS.match(said)
    return found is not None and any(found[1].rstrip(".").casefold() == n.casefold() for n in names)


_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+)(?![\w.])")


def _by_version(items: list, titles: list[str]) -> list:
    """Items whose titles all carry a version number ("Django 3.1 release notes", "Version 1.7.1")
    newest first, as the outline orders release notes; any other list as it is."""
    versions = [_VERSION.search(t) for t in titles]
    if len(items) < 2 or not all(versions):
        return items
    order = sorted(range(len(items)), key=lambda i: tuple(-int(p) for p in versions[i][1].split(".")))  # type: ignore[index]
    return [items[i] for i in order]


def _linked(slug: str, label: str, text: str) -> str:
    """The line with the member's name, as it opens it, linked to its page; a name holding
    brackets or a bar stays plain (a link's label cannot hold them: "`objectsize[:padded]`")."""
    if any(c in label for c in "[]|\n"):
        return text
    return f"[[{slug}|{label}]]{text[len(label):]}"


def _namesake(request: PageRequest) -> set[str]:
    """The members named like the group (the command of a man page's node, the module of a
    module's part): their definition says what the group is about. A setting or constant named
    in capitals ("MANAGERS") is not the part titled in words ("Managers")."""
    own = {_spelled(n) for n in _names_of(request.title)}
    return {link.slug for link in request.links
            if link.slug != request.slug and own & {_spelled(n) for n in _names_of(link.title)}
            and not _capitals_apart(link.title, request.title)}


def _capitals_apart(written: str, title: str) -> bool:
    """Whether a name is written in capitals where the title is not (or the other way round):
    "`MANAGERS`" names a setting, "Managers" a part of the manual."""
    bare = written.strip("`*\"' ")
    return bare != title and (bare.isupper() != title.isupper())


_JOINERS = re.compile(r"[\s_-]+")


def _spelled(name: str) -> str:
    """A name as spelled whatever joins its words ("git-fetch", "git fetch")."""
    return _JOINERS.sub(" ", name.casefold()).strip("`*\"' ")


def write_topic(request: PageRequest, template: Template) -> str | None:
    """The topic's page; with no sentence saying what the group or a member is, its links only."""
    pool = _evidence_sentences(request.evidence, _subject_words(request), _subject_marks(request))
    lines = _member_lines(request, pool)
    lead = _group_lead(request, pool)
    namesake = _namesake(request)
    listed = set()
    # A member named like the group (the command of its man page, the module of its part): its
    # definition says what the group is about, linked where the lead names it, not listed again.
    named = next((line for line in lines if line[0] in namesake and (
        lead is None or line[2].order == lead.get("order"))), None)
    if named is not None:
        slug, label, said = named
        lines.remove(named)
        lead = {"text": _linked(slug, label, said.text), "ref": said.ref, "order": said.order}
        if lead["text"] != said.text:
            listed.add(slug)
    if lead is None:
        # Nothing of the sources says what the group is (a member's definition would stand in
        # for it, and the members it is written from are the group's most central, not its
        # contents): an overview that cannot say what it gathers is no page. Its members stay in
        # the index; the page holds links only (no cited fact, so it is withheld, not published).
        layout = template.refine.page_template if template.refine.page_template.strip() else ""
        return _render(layout, request.title, None, [], _aliases(request),
                       [{"slug": link.slug, "title": link.title} for link in request.links if link.slug != request.slug])
    used = {lead["order"]} if lead.get("order") is not None else set()
    bullets = []
    kept = []
    for slug, label, s in lines:
        if s.order in used or len(bullets) >= _MAX_MEMBERS:
            continue
        kept.append((slug, label, s))
        used.add(s.order)
        line = _linked(slug, label, s.text)
        if line != s.text:
            listed.add(slug)  # (a line left plain keeps its member's link among the others)
        bullets.append({"text": line, "ref": s.ref})
    titles = {link.slug: link.title for link in request.links}
    # (a title holding brackets or a bar cannot be a link's label: the link shows the slug)
    related = [{"slug": link.slug, "title": link.slug if any(c in link.title for c in "[]|") else link.title}
               for link in request.links if link.slug not in listed and link.slug != request.slug]
    bullets = _by_version(bullets, [titles.get(slug, "") for slug, _label, _s in kept])
    related = _by_version(related, [r["title"] for r in related])
    layout = template.refine.page_template if template.refine.page_template.strip() else ""
    if not bullets:
        # A group page listing no member with what it is says what one sentence says, and that
        # sentence leans on members it does not show ("The configuration variables described
        # below ...", "The `concurrent` package also provides ..."), or is one member's
        # definition standing for the group ("`sender`: The model class."): no page (it cites
        # nothing); its members stay in the index and its links with them.
        return _render(layout, request.title, None, [], _aliases(request), related)
    sections = [{"heading": "Members", "paragraphs": [], "bullets": bullets, "sentences": bullets}] if bullets else []
    text = _render(layout, request.title, lead, sections, _aliases(request), related)
    while count_tokens(text) > request.max_tokens and (bullets or related):
        if related:
            related.pop()
        else:
            bullets.pop()
        sections = [{"heading": "Members", "paragraphs": [], "bullets": bullets, "sentences": bullets}] if bullets else []
        text = _render(layout, request.title, lead, sections, _aliases(request), related)
    return text


# A sentence with no subject of its own, continuing one before it ("Defaults to `'en'`.", "Can be
# configured per tool ..."): a passage cut mid-section opens on one.
_SUBJECTLESS = re.compile(
    r"^(?:Defaults?|Can|Cannot|May|Must|Should|Will|Would|Could|Is|Are|Was|Were|Has|Have|Does|Do|Did|Used|"
    r"Allows?|Specifies|Sets|Controls|Enables|Disables|Determines|Returns|Takes|Accepts|Only|If|When|"
    r"Previously|Formerly|Now|Currently|Otherwise|Additionally|Always|Never|Two|Three|Four|"
    r"First(?:ly)?|Second(?:ly)?|Third(?:ly)?|Finally)\b")
# At the opening of a section or document, "This extension ...", "These options ..." point at what
# the heading names, not at a sentence before.
_POINTS_AT_HEADING = re.compile(
    r"^(?:There\s+(?:is|are)\s+[a-z]+|(?:This|These)\s+(?!(?:can|cannot|may|must|will|would|should|could|is|are|was|were|has|have|do|does)\b)"
    r"[a-z][\w-]*\b)")


_LOOSE_WORD = re.compile(r"[a-z][a-z0-9]{2,}")


def _loosely(title: str) -> frozenset[str]:
    """A title's content words cut to five letters: the contents page's "Contribute to Sphinx" is
    the document "Contributing to Sphinx"."""
    return frozenset(w[:5] for w in _LOOSE_WORD.findall(title.lower()) if w not in FUNCTION_WORDS)


def _openings(pool: list[_Sentence]) -> set[int]:
    """The sentences opening a passage's section or document: the first one, or the first after
    the asides the authors put first ("New in version 1.4."), in the order its excerpt has them
    (a claim it also holds included)."""
    out: set[int] = set()
    by_chunk: dict[str, list[_Sentence]] = {}
    for s in pool:
        if s.place >= 0:
            by_chunk.setdefault(s.chunk_id, []).append(s)
    for said in by_chunk.values():
        said.sort(key=lambda s: s.place)
        if not said[0].opens_section:
            continue
        first = next((s for s in said if not _ASIDE.match(s.text)), None)
        if first is not None and all(_ASIDE.match(s.text) for s in said[: said.index(first)]):
            out.add(first.order)
    return out


def _group_lead(request: PageRequest, pool: list[_Sentence]) -> dict | None:
    """A sentence defining the topic's title, or opening the section so titled or the document so
    titled (its opening paragraph); else None."""
    names = _names_of(request.title)
    matcher = _matcher(names)
    titles = {n.lower() for n in names}
    plain = [s for s in pool if not _ASIDE.match(s.text) and not s.text.rstrip().endswith(":")
             and not _SUBJECTLESS.match(s.text)]
    usable = [s for s in plain if _may_lead(s.text)]
    for s in usable:
        end = matcher.opening(s.text)
        if end is not None and STRONG.match(s.text[end:]) and not _capitals_apart(s.text[:end], request.title):
            return _lead(s)
    openings = _openings(pool)
    # (a definition block opening a passage defines its term, not the section)
    opening = [s for s in plain if s.order in openings and _BLOCK.match(s.text) is None
               and (_may_lead(s.text) or (_POINTS_AT_HEADING.match(s.text) and _may_lead(s.text.split(None, 2)[-1])))]
    loose = {_loosely(n) for n in names} - {frozenset()}
    # The opening paragraph of the section the group is named after: of the passages under its
    # heading, the one first in the document (a later passage of a long section opens on the tail
    # of an entry: "Other option values depend on splitter value which you choose.").
    named = [s for s in opening if s.section.lower().strip("`*") in titles or _loosely(s.section) in loose]
    if named:
        first = [s for s in named if s.document == named[0].document]
        return _lead(min(first, key=lambda s: (s.at < 0, s.at, s.order)))
    for s in opening:  # the opening paragraph of the document the group is named after
        if ((s.document.lower().strip("`*") in titles or _loosely(s.document) in loose)
                and (len(s.headings) <= 2 or s.section.lower() in _DESCRIBING)):
            return _lead(s)
    return None  # (a sentence merely opening with the title is about one of its members as often)


def _member_lines(request: PageRequest, pool: list[_Sentence]) -> list[tuple[str, str, _Sentence]]:
    """(slug, the member's name as the sentence writes it, the sentence) for each member with a
    sentence of the sources saying what it is, opening with its name, members most central
    first: a defining sentence ("X is a ...", "`X`: ..."), else "X is ..." opening a passage."""
    out = []
    taken: set[int] = set()
    for link in request.links:
        if link.slug == request.slug:
            continue
        names = _names_of(link.title)
        matcher = _matcher(names)
        best = None
        for s in pool:
            if s.order in taken or _ASIDE.match(s.text) or s.text.rstrip().endswith(":"):
                continue  # (a line opens with the member's name: a pronoun after it points at it)
            block = _block_term(s.text)
            end = block[1] if block is not None and _defines_member(block[0], names) else matcher.opening(s.text)
            if end is None or _ASIDE.match(s.text[end:].lstrip(" :")):
                continue  # an aside ("`x`: New in version 1.5.") says when, not what
            if _COMPARES.match(s.text[end:]):
                continue  # "The exact format is the same as ...": what it is like, not what it is
            if block is not None and end == block[1] and _constructs(s.text[end:], names):
                continue  # "`X(String message)`: Creates a new instance of `X` ...": X's constructor, not X
            if block is not None and end == block[1] and len(s.text[end:].split()) >= 2:
                rank = (0, -s.support, s.order)  # the authors' definition block of the member
            elif STRONG.match(s.text[end:]):
                rank = (0, -s.support, s.order)  # "X is a ...", "`X`: what it is"
            elif s.opens_section and WEAK.match(s.text[end:]):
                rank = (1, -s.support, s.order)  # "X is ...", opening the passage about it
            else:
                continue  # a sentence merely opening with the member says what it does, not what it is
            if best is None or rank < best[0]:
                best = (rank, s, end)
        if best is not None:
            _rank, s, end = best
            taken.add(s.order)
            out.append((link.slug, s.text[:end], s))
    return out
