"""REFINE without a model: a page assembled from its evidence sentences, each one cited."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...templates.render import prompt_source, render
from ...templates.schema import Template
from ...tokens import count_tokens
from ..tasks import EvidenceItem, PageRequest
from .sentences import clean_heading, sentences_of
from .summary import NEAR_DUPLICATE, content_tokens, jaccard
from .words import BOILERPLATE

_MIN_WORDS = 4
_SECTION_MIN = 2  # sentences about one related entity before it earns its own section
_PER_SENTENCE = 4  # tokens of citation and spacing around each sentence
_PER_SECTION = 6
_GENERIC_HEADINGS = BOILERPLATE | {"general", "misc", "miscellaneous", "other", "more", "about"}


@dataclass(slots=True)
class _Sentence:
    text: str
    ref: int
    order: int
    support: int
    about: list[str]
    heading: str
    tokens: frozenset[str] = field(default_factory=frozenset)


def write_page(request: PageRequest, template: Template) -> str:
    """Markdown for the page: a lead sentence that defines the subject, sections of the other
    evidence sentences grouped by related entity or source heading, aliases and related links.

    Every sentence is copied from the evidence and cited with that evidence's ref; the only
    words of our own are the section headings and the labels of the layout. The page is
    rebuilt from the evidence on UPDATE too, so writing twice gives the same page.
    """
    pool = _evidence_sentences(request.evidence)
    lead, rest = _choose_lead(request, pool)
    related = _related(request)
    aliases = _aliases(request)
    layout = prompt_source(template.refine.page_template, "page_layout.md")

    def page(chosen: list[_Sentence]) -> str:
        return _render(layout, request.title, lead, _sections(request, chosen), aliases, related)

    budget = request.max_tokens
    while related and count_tokens(page([])) > budget:
        related = related[:-1]  # a tiny budget: links go before evidence does
    ranked = sorted(rest, key=lambda s: (-s.support, s.order))
    chosen: list[_Sentence] = []
    used = count_tokens(page([]))
    headings: set[str] = set()
    for sentence in ranked:
        cost = count_tokens(sentence.text) + _PER_SENTENCE
        if sentence.heading not in headings:
            cost += count_tokens(sentence.heading) + _PER_SECTION
        if used + cost > budget:
            continue
        chosen.append(sentence)
        headings.add(sentence.heading)
        used += cost
    text = page(chosen)
    while chosen and count_tokens(text) > budget:
        chosen.pop()  # the estimate ran low: drop the least supported sentences
        text = page(chosen)
    return text


def _evidence_sentences(evidence: list[EvidenceItem]) -> list[_Sentence]:
    """Prose sentences of the evidence in source order, near-duplicates folded into the first."""
    pool: list[_Sentence] = []
    for item in sorted(evidence, key=lambda e: e.ref):
        if item.kind == "relation":  # written from a graph edge, not found in the source
            continue
        heading = next(
            (clean_heading(h) for h in reversed(item.heading_path) if _specific(clean_heading(h))),
            "",
        )
        for s in sentences_of(item.text):
            if len(s.text.split()) < _MIN_WORDS or s.text.endswith((":", "?", ",", "…")):
                continue
            tokens = content_tokens(s.text)
            twin = next((p for p in pool if jaccard(p.tokens, tokens) >= NEAR_DUPLICATE), None)
            if twin is not None:
                twin.support += max(item.support, 1)
                continue
            pool.append(
                _Sentence(
                    s.text,
                    item.ref,
                    len(pool),
                    max(item.support, 1),
                    list(item.about),
                    heading or item.document,
                    tokens,
                )
            )
    return pool


def _subject_pattern(request: PageRequest) -> re.Pattern[str]:
    names = sorted(
        {n.strip() for n in (request.title, *request.aliases) if n.strip()}, key=len, reverse=True
    )
    alternatives = "|".join(re.escape(n) for n in names) or re.escape(request.slug)
    return re.compile(rf"^(?:(?:the|a|an)\s+)?(?:{alternatives})\b", re.IGNORECASE)


_DEFINES = re.compile(
    r"^(?:\s*\([^)]*\))?(?:,[^,]{1,80},)?\s+(?:is|are|was|refers?\s+to|means|denotes|stands\s+for|describes)\b",
    re.IGNORECASE,
)


def _choose_lead(
    request: PageRequest, pool: list[_Sentence]
) -> tuple[dict | None, list[_Sentence]]:
    subject = _subject_pattern(request)
    defining, opening = [], []
    for s in pool:
        m = subject.match(s.text)
        if m is None:
            continue
        (defining if _DEFINES.match(s.text[m.end() :]) else opening).append(s)
    candidates = defining or opening
    if candidates:
        best = min(candidates, key=lambda s: (-s.support, s.order))
        return {"text": best.text, "ref": best.ref}, [s for s in pool if s is not best]
    description = " ".join(request.description.split())
    if description:
        for s in pool:
            if s.text == description or description in s.text:
                return {"text": s.text, "ref": s.ref}, [p for p in pool if p is not s]
        if not pool:
            return {"text": description, "ref": None}, []
    if pool:
        best = min(pool, key=lambda s: (-s.support, s.order))
        return {"text": best.text, "ref": best.ref}, [s for s in pool if s is not best]
    return ({"text": description, "ref": None} if description else None), []


def _sections(request: PageRequest, chosen: list[_Sentence]) -> list[dict]:
    titles = {link.slug: link.title for link in request.links if link.slug != request.slug}
    about_counts: dict[str, int] = {}
    for s in chosen:
        for slug in s.about:
            if slug in titles:
                about_counts[slug] = about_counts.get(slug, 0) + 1
    groups: dict[str, list[_Sentence]] = {}
    for s in chosen:
        slugs = [slug for slug in s.about if about_counts.get(slug, 0) >= _SECTION_MIN]
        if slugs:
            best = max(slugs, key=lambda slug: (about_counts[slug], -s.about.index(slug)))
            heading = titles[best]
        else:
            heading = s.heading if _specific(s.heading) else f"More on {request.title}"
        groups.setdefault(heading, []).append(s)
    ordered = sorted(
        groups.items(),
        key=lambda kv: (-sum(s.support for s in kv[1]), min(s.order for s in kv[1])),
    )
    return [
        {
            "heading": heading,
            "sentences": [
                {"text": s.text, "ref": s.ref}
                for s in sorted(items, key=lambda s: (-s.support, s.order))
            ],
        }
        for heading, items in ordered
    ]


def _specific(heading: str) -> bool:
    text = heading.strip().strip("#").strip()
    return bool(text) and text.lower() not in _GENERIC_HEADINGS


def _related(request: PageRequest) -> list[dict]:
    seen: set[str] = {request.slug}
    out = []
    for link in request.links:
        if link.slug not in seen:
            seen.add(link.slug)
            out.append({"slug": link.slug, "title": link.title})
    return out


def _aliases(request: PageRequest) -> list[str]:
    seen = {request.title.lower()}
    out = []
    for alias in request.aliases:
        alias = alias.strip()
        if alias and alias.lower() not in seen:
            seen.add(alias.lower())
            out.append(alias)
    return out


_BLANK_LINES = re.compile(r"\n{3,}")


def _render(layout: str, title: str, lead, sections, aliases, related) -> str:
    text = render(
        layout,
        where="page_layout",
        title=title,
        lead=lead,
        sections=sections,
        aliases=aliases,
        related=related,
    )
    return _BLANK_LINES.sub("\n\n", text).strip() + "\n"
