"""A topic's page without a model: what the group is, then its members, each with what it is.

The lead is a sentence of the sources saying what the group is: one defining the topic's title,
else the first sentence under a heading so titled (an index page's introduction, a part's
opening paragraph), else the definition of its most central member. Then each member with a
line of the sources saying what it is: a sentence opening with the member's name, its name
linked where it stands, so the line stays the authors' words. Members with no such line are
the page's related links.
"""

from __future__ import annotations

from ...templates.schema import Template
from ...tokens import count_tokens
from ..tasks import PageRequest
from .definitions import STRONG, WEAK
from .writer import (
    _ASIDE,
    _aliases,
    _evidence_sentences,
    _lead,
    _matcher,
    _may_lead,
    _render,
    _Sentence,
    _subject_marks,
    _subject_words,
)

_MAX_MEMBERS = 30  # member lines on one page; the rest are links


def write_topic(request: PageRequest, template: Template) -> str | None:
    """The topic's page, or None when no sentence says what the group or a member is (the
    writer then opens the page on the sentence naming its most central member)."""
    pool = _evidence_sentences(request.evidence, _subject_words(request), _subject_marks(request))
    lines = _member_lines(request, pool)
    lead = _group_lead(request, pool)
    if lead is None and not lines:
        return None
    used = {lead["order"]} if lead and lead.get("order") is not None else set()
    if lead is None and lines:
        first = lines.pop(0)  # the most central member's definition says what the group is about
        lead = {"text": first[2].text, "ref": first[2].ref, "order": first[2].order}
        used.add(first[2].order)
    bullets = []
    listed = set()
    for slug, label, s in lines:
        if s.order in used or len(bullets) >= _MAX_MEMBERS:
            continue
        used.add(s.order)
        listed.add(slug)
        bullets.append({"text": f"[[{slug}|{label}]]{s.text[len(label):]}", "ref": s.ref})
    related = [{"slug": link.slug, "title": link.title} for link in request.links
               if link.slug not in listed and link.slug != request.slug]
    layout = template.refine.page_template if template.refine.page_template.strip() else ""
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


def _group_lead(request: PageRequest, pool: list[_Sentence]) -> dict | None:
    """A sentence defining the topic's title, opening the section so titled, or opening with the
    title; else None."""
    matcher = _matcher((request.title,))
    title = request.title.strip().lower()
    usable = [s for s in pool if _may_lead(s.text) and not _ASIDE.match(s.text)]
    for s in usable:
        end = matcher.opening(s.text)
        if end is not None and STRONG.match(s.text[end:]):
            return _lead(s)
    for s in usable:
        if s.opens_section and s.section.lower().strip("`*") == title:
            return _lead(s)
    for s in usable:
        if matcher.opening(s.text) is not None:
            return _lead(s)
    return None


def _member_lines(request: PageRequest, pool: list[_Sentence]) -> list[tuple[str, str, _Sentence]]:
    """(slug, the member's name as the sentence writes it, the sentence) for each member with a
    sentence of the sources saying what it is, opening with its name, members most central
    first: a defining sentence ("X is a ...", "`X`: ..."), else "X is ..." opening a passage."""
    out = []
    taken: set[int] = set()
    for link in request.links:
        if link.slug == request.slug:
            continue
        matcher = _matcher((link.title,))
        best = None
        for s in pool:
            if s.order in taken or _ASIDE.match(s.text):
                continue  # (a line opens with the member's name: a pronoun after it points at it)
            end = matcher.opening(s.text)
            if end is None:
                continue
            if STRONG.match(s.text[end:]):
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
