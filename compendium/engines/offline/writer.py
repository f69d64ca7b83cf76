"""REFINE without a model: a page assembled from its evidence sentences, each one cited."""

from __future__ import annotations

import re
from functools import lru_cache

from ...templates.render import render
from ...templates.schema import Template
from ...tokens import count_tokens
from ..tasks import PageRequest
from .definitions import defines_heading
from .entry_labels import labels_subject, type_parts
from .layout import render_default
from .leads import (
    _choose_lead,
    _history,
    _matcher,
    _names,
    _names_heading,
    _needs_before,
)
from .sentence_pool import (
    _DEFINITION_OPENING,
    _ENDS_SENTENCE,
    _evidence_sentences,
    _Sentence,
    _spaced,
    _specific,
    _subject_marks,
    _subject_words,
)
from .standalone import entry_label, never_alone, only_points, points_ahead
from .subjects import owner_name, release_notes

_SECTION_MIN = 2  # sentences from one source heading before they earn their own section


_PARAGRAPH_MAX = 3  # sentences of one passage per paragraph


_OTHER_FACTS = "Other facts"


_PER_SENTENCE = 4  # tokens of citation and spacing around each sentence


_PER_SECTION = 6


_FEW_FACTS = 2  # sentences beside a passing lead that still make no page


def write_page(request: PageRequest, template: Template) -> str:
    """Markdown for the page: a lead sentence that defines the subject, sections of the other
    evidence sentences grouped by related entity or source heading, aliases and related links.

    Every sentence is copied from the evidence and cited with that evidence's ref; the only
    words of our own are the section headings and the labels of the layout. The page is
    rebuilt from the evidence on UPDATE too, so writing twice gives the same page.
    """
    pool = _evidence_sentences(request.evidence, _subject_words(request), _subject_marks(request))
    if request.kind != "topic":
        pool = _about_subject(request, pool)
    pool = [s for s in pool if not _restates_its_entry(s, pool)]

    lead, rest = _choose_lead(request, pool)
    passing = (lead is None or lead.get("passing")) and len(rest) < _FEW_FACTS
    said_once = lead is not None and lead.get("said_of") and not rest
    if request.kind != "topic" and not request.description.strip() and (passing or said_once):
        # No authored definition, nothing says what the subject is and little is said of it:
        # passing mentions, or one sentence said of it, make no page. One citing nothing is withheld.
        lead, rest = None, []
    related = _related(request)
    aliases = _aliases(request)
    layout = template.refine.page_template if template.refine.page_template.strip() else ""

    def page(chosen: list[_Sentence]) -> str:
        return _render(layout, request.title, lead, _sections(request, chosen, lead_chunk, home), aliases, related)

    budget = request.max_tokens
    # What a section names is defined before anything else of it is said (a method's signature
    # and what it does, before its parameters): a section without it is unanchored.
    # The rest of the lead's passage first, then the passages under headings naming the subject.
    names = {n.lower().strip("`*") for n in _names(request)}
    lead_chunk = lead.get("chunk_id", "") if lead else ""
    home = next((s.document for s in pool if lead and s.order == lead.get("order")), "")
    ranked = sorted(rest, key=lambda s: (s.chunk_id != lead_chunk,
                                         not _names_heading(s.section.lower().strip("`*"), names),
                                         not _heads(s), -s.support, s.order))
    if _fits_whole(request.title, lead, aliases, related, ranked, budget):
        # Everything fits with room to spare: no choosing, so no page to render for its cost.
        chosen = _readable(ranked, lead, pool, names)
        text = page(chosen)
        if count_tokens(text) <= budget:
            return text
    used = count_tokens(page([]))  # rendered once: rendering is most of the writer's time
    while related and used > budget:
        related = related[:-1]  # a tiny budget: links go before evidence does
        used = count_tokens(page([]))
    chosen: list[_Sentence] = []
    headings: set[str] = set()
    for sentence in ranked:
        cost = _tokens(sentence.text) + _PER_SENTENCE
        if sentence.heading not in headings:
            cost += _tokens(sentence.heading) + _PER_SECTION
        if used + cost > budget:
            continue
        chosen.append(sentence)
        headings.add(sentence.heading)
        used += cost
    chosen = _readable(chosen, lead, pool, names)
    text = page(chosen)
    while chosen and count_tokens(text) > budget:
        chosen.pop()  # the estimate ran low: drop the least supported sentences
        text = page(chosen)
    return text


def _about_subject(request: PageRequest, pool: list[_Sentence]) -> list[_Sentence]:
    """The sentences a subject's page may say: its claims (sentences about it), and the other
    sentences of a passage only under a heading naming it (its home section) or when they
    open with it. A passage's neighbours of a claim are about their own subjects: published
    here too, one sentence would be on the page of every name it stands beside."""
    if not any(s.claimed for s in pool):
        return pool  # nothing but passages (an engine that names no claims): all there is
    names = {n.lower().strip("`*") for n in _names(request)}
    matcher = _matcher(_names(request))
    types = type_parts(_names(request))
    return [s for s in pool if s.claimed or any(_names_heading(h, names) for h in s.headings[1:])
            or matcher.opening(s.text) is not None or (s.opens_entry and labels_subject(s.text, names, types))]


# Sentences, headings and titles recur on many pages: their token counts are remembered.
_tokens = lru_cache(maxsize=32768)(count_tokens)


_LAYOUT_ALLOWANCE = 60  # tokens of headings, labels and spacing a layout adds around its parts


def _fits_whole(title: str, lead: dict | None, aliases: list[str], related: list[dict],
                ranked: list[_Sentence], budget: int) -> bool:
    """A generous estimate of the whole page's tokens is within budget (most pages)."""
    total = _LAYOUT_ALLOWANCE + _tokens(title) + (_tokens(lead["text"]) + _PER_SENTENCE if lead else 0)
    total += sum(_tokens(a) + 2 for a in aliases)
    total += sum(_tokens(link["slug"]) + _tokens(link["title"]) + 6 for link in related)
    headings = {s.heading for s in ranked}
    total += sum(_tokens(h) + _PER_SECTION for h in headings)
    total += sum(_tokens(s.text) + _PER_SENTENCE for s in ranked)
    return total <= budget * 0.9


def _readable(chosen: list[_Sentence], lead: dict | None, pool: list[_Sentence],
              names: set[str]) -> list[_Sentence]:
    """Without sentences that lean on a sentence the page does not show ("It also ...", "The
    price of this flexibility is ...", "Defaults to the configured upstream."), nor the later
    sentences of an entry whose first one it does not show, unless that entry is the page's
    subject (`names`, lowercased): elsewhere they would read as the entry shown before them."""
    shown = {s.order for s in chosen}
    placed = list(chosen)
    if lead is not None and lead.get("order") is not None:
        shown.add(lead["order"])
        placed += [p for p in pool[lead["order"]:lead["order"] + 1] if p.order == lead["order"]]
    # A sentence given alone (a claim) has no previous of its own: the one ending where it
    # starts in its chunk is (positions are in the chunk's single-spaced words).
    ending = {(p.chunk_id, p.at + len(_spaced(p.text)) + 1): p.order for p in placed if p.at >= 0}
    ending.update((end, p.order) for p in placed for end in p.ends_too)  # a copy said here is said here
    # A sentence whose antecedent the page shows only under another heading has none here.
    elsewhere = {end: p for p in placed for end in p.ends_elsewhere}
    starts = {p.at for p in placed if p.at >= 0}
    kept = []
    in_entry: set[int] = set()  # sentences after an entry's label ("`--keep`: Keeps ... It also ...")
    passed: dict[int, int] = {}  # a pointer left out -> the sentence before it, which what follows leans on
    # In the text's order, so a sentence left out is known before what leans on it is judged.
    for s in sorted(chosen, key=lambda s: (s.document, s.at, s.order)):
        before = s.previous if s.previous >= 0 else ending.get((s.chunk_id, s.at), -1)
        before = passed.get(before, before)
        if never_alone(s.text) or s.on_example:
            shown.discard(s.order)  # the example it talks about, or its author's "I", is not on the page
            if only_points(s.text):
                passed[s.order] = before  # "See the sites docs." between an entry and its "Requires ..."
            continue
        apart = elsewhere.get((s.chunk_id, s.at)) if s.previous < 0 else None
        if apart is not None and lead is not None and apart.order == lead.get("order"):
            apart = None  # the subject's own entry, said in two places: its text goes on either way
        # a sentence opening an entry of its own is never part of the entry before it
        if not s.opens_entry and before >= 0 and (before in in_entry or (before < len(pool) and entry_label(pool[before].text))):
            in_entry.add(s.order)
        elif apart is not None and entry_label(apart.text) and not entry_label(s.text):
            in_entry.add(s.order)
            before = -1  # its entry's label is shown, but under the other heading
        # Past its first sentence, an entry's text is about the entry's term, which only the
        # first sentence names: without it, "Stash only the changes ..." says of what?
        if (_needs_before(s.text) or s.order in in_entry) and before not in shown:
            shown.discard(s.order)
            continue
        if s.intro >= 0 and s.intro not in starts and not s.opens_entry and not entry_label(s.text):
            shown.discard(s.order)  # an item continuing "... you could now:", which the page does not show
            continue
        if (s.entry >= 0 and s.entry not in starts and before not in shown
                and not _names_heading(s.entry_term.lower().strip("`*"), names)):
            shown.discard(s.order)  # a later sentence of an entry the page does not show
            continue
        kept.append(s)
    kept.sort(key=lambda s: s.order)
    promising = [s for s in kept if points_ahead(s.text) and not _followed(s, kept)]
    if promising:
        # what it promises is not shown: it goes, and so may what leaned on it
        dropped = {s.order for s in promising}
        return _readable([s for s in chosen if s.order not in dropped], lead, pool, names)
    return kept


def _followed(s: _Sentence, kept: list[_Sentence]) -> bool:
    """Whether the page shows, right after the sentence, what stands after it in its passage."""
    if s.at < 0:
        return any(t.previous == s.order for t in kept)
    end = s.at + len(_spaced(s.text)) + 1
    return any(t.previous == s.order or (t.chunk_id == s.chunk_id and t.at == end) for t in kept)


def _sections(request: PageRequest, chosen: list[_Sentence], lead_chunk: str = "", home: str = "") -> list[dict]:
    """Sections named after the source headings the sentences come from, each made of
    paragraphs of one passage in source order; headings with a single sentence pool into one
    closing section of bullet facts. `home`: the lead's document, whose sections keep its order."""
    title = request.title.strip().lower()
    groups: dict[str, list[_Sentence]] = {}
    names: dict[str, str] = {}
    history = [s for s in chosen if _history(s)]
    chosen = [s for s in chosen if not _history(s)]
    own = {n.lower().strip("`*") for n in _names(request)}
    for s in chosen:
        heading = s.heading if _specific(s.heading) else ""
        key = heading.lower()
        if key == title or not heading or _names_heading(key, own):
            key, heading = "", "Overview"
        names.setdefault(key, heading)
        groups.setdefault(key, []).append(s)
    sections: list[tuple[str, list[_Sentence]]] = []
    loose: list[_Sentence] = []
    for key, items in groups.items():
        if len(items) >= _SECTION_MIN or (lead_chunk and any(s.chunk_id == lead_chunk for s in items)):
            sections.append((names[key], items))
        else:
            loose.extend(items)
    # The subject's own passage first; then its home document's sections in the authors' order
    # (the lead's document: a command's OPTIONS before its EXAMPLES, a guide's steps in turn);
    # then the sections of other documents, those most said about the subject first.
    def place(kv: tuple[str, list[_Sentence]]) -> tuple:
        heading, items = kv
        at_home = [s.at for s in items if s.document == home and s.at >= 0]
        if at_home and len(at_home) * 2 >= len(items):
            return (heading != "Overview", 0, min(at_home), 0)
        return (heading != "Overview", 1, -sum(s.support for s in items), min(s.order for s in items))
    sections.sort(key=place)
    out = []
    for heading, items in sections:
        ordered = _in_passage_order(items, lead_chunk)
        out.append({"heading": heading, "paragraphs": _paragraphs(ordered), "bullets": [],
                    "sentences": _cited(ordered)})
    if loose:
        ordered = sorted(loose, key=lambda s: (-s.support, s.order))
        heading = _OTHER_FACTS if out else "Overview"
        out.append({"heading": heading, "paragraphs": [], "bullets": _cited(ordered),
                    "sentences": _cited(ordered)})
    if history:
        # Each item under the release it comes from, on a line of its own: the sentence cited
        # stays the authors' words alone.
        items = [{"text": f"{_release(s)}:\n  {s.text}", "ref": s.ref}
                 for s in sorted(history, key=lambda s: (s.document, s.order))]
        out.append({"heading": "History", "paragraphs": [], "bullets": items, "sentences": items})
    return out


def _release(s: _Sentence) -> str:
    """The release a history sentence comes from: the heading or title naming it."""
    if release_notes(s.document):
        return owner_name(s.document) or s.document
    for heading in reversed(s.headings[1:]):  # lowercased by _placed
        if release_notes(heading):
            return heading[:1].upper() + heading[1:]
    return owner_name(s.document) or s.document


def _in_passage_order(items: list[_Sentence], lead_chunk: str = "") -> list[_Sentence]:
    """Sentences grouped by chunk (in the order the chunks first come), each chunk's opening with
    the definition of what its heading names, then in the order its excerpt has them ("1. The
    parser ... 4. The planner ..."), then its others as ranked."""
    first: dict[str, tuple[int, int]] = {}  # chunk -> (document order, where it starts)
    documents: dict[str, int] = {}
    for s in sorted(items, key=lambda s: s.order):
        documents.setdefault(s.document, len(documents))
        known = first.get(s.chunk_id)
        here = (documents[s.document], s.at if s.at >= 0 else 1 << 60)
        first[s.chunk_id] = min(known, here) if known else here
    return sorted(items, key=lambda s: (s.chunk_id != lead_chunk, first[s.chunk_id], s.chunk_id, not _heads(s),
                                        s.at < 0, s.at, s.place < 0, s.place, s.order))


_RETURNS_FIELD = re.compile(r"^Returns?:\s")


def _restates_its_entry(s: _Sentence, pool: list[_Sentence]) -> bool:
    """An API entry's "Returns: ..." line saying nothing its entry's text does not ("Returns: a
    matcher for a comma" below "Returns a matcher which matches the comma character")."""
    if not _RETURNS_FIELD.match(s.text):
        return False
    words = s.stems - {"return"}
    return any(p is not s and p.chunk_id == s.chunk_id and not _RETURNS_FIELD.match(p.text) and words <= p.stems
               for p in pool)


def _heads(s: _Sentence) -> bool:
    """Whether the sentence defines what its source heading names."""
    return defines_heading(s.text, s.section)


# An entry whose term is one plain word over its text ("clear: Remove all the stash entries.").
_WORD_ENTRY = re.compile(r"[a-z][\w-]{0,30}:\s+[A-Z]")


def _paragraphs(ordered: list[_Sentence]) -> list[list[dict]]:
    """A paragraph per chunk's run of sentences (at most _PARAGRAPH_MAX), `ordered` by
    _in_passage_order; a definition's opening ("`--squash`: Produce ...") starts one of its own,
    so an owner's options and fields read one by one."""
    paragraphs: list[list[dict]] = []
    last_chunk = None
    for s in ordered:
        if (s.chunk_id != last_chunk or len(paragraphs[-1]) >= _PARAGRAPH_MAX or _DEFINITION_OPENING.match(s.text)
                or _WORD_ENTRY.match(s.text)
                or not _ENDS_SENTENCE.search(paragraphs[-1][-1]["text"])):  # a line with no full stop ends its own
            paragraphs.append([])
        paragraphs[-1].append({"text": s.text, "ref": s.ref})
        last_chunk = s.chunk_id
    return paragraphs


def _cited(items: list[_Sentence]) -> list[dict]:
    return [{"text": s.text, "ref": s.ref} for s in items]


def _related(request: PageRequest) -> list[dict]:
    seen: set[str] = {request.slug}
    out = []
    for link in request.links:
        if link.slug not in seen:
            seen.add(link.slug)
            out.append({"slug": link.slug, "title": link.title})
    return out


def _aliases(request: PageRequest) -> list[str]:
    """The subject's other names, without the title written as a call ("Tokenizer()" of
    Tokenizer: its constructor, not another name for it)."""
    seen = {request.title.lower()}
    out = []
    for alias in request.aliases:
        alias = alias.strip()
        if alias and alias.lower() not in seen and alias.split("(", 1)[0].strip().lower() not in seen:
            seen.add(alias.lower())
            out.append(alias)
    return out


_BLANK_LINES = re.compile(r"\n{3,}")


def _render(layout: str, title: str, lead, sections, aliases, related) -> str:
    """The page in the template's own layout, or in the built-in one ("")."""
    if not layout:
        text = render_default(title, lead, sections, aliases, related)
        return _BLANK_LINES.sub("\n\n", text).strip() + "\n"
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
