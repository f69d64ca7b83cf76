"""REFINE without a model: a page assembled from its evidence sentences, each one cited."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ...templates.render import render
from ...templates.schema import Template
from ...tokens import count_tokens
from ..tasks import EvidenceItem, PageRequest
from .definitions import STRONG, WEAK, defines_heading, is_purpose_line
from .layout import render_default
from .sentences import clean_heading, sentences_of, starts_mid_sentence, without_label
from .standalone import ABOUT_ITSELF, OWN_KIND, entry_label, points_back
from .subjects import owner_name, release_notes
from .summary import NEAR_DUPLICATE, content_tokens
from .words import BOILERPLATE, FUNCTION_WORDS

_MIN_WORDS = 4
_SECTION_MIN = 2  # sentences from one source heading before they earn their own section
_PARAGRAPH_MAX = 3  # sentences of one passage per paragraph
_ENDS_SENTENCE = re.compile(r"[.!](?:[\"')\]”’*_`]*)$")
# Sentences leaning on the one before ("It ...", "This ...") read well only after it.
_ANAPHORA = re.compile(
    r"^(?:It|Its|This|These|That|Those|They|Their|Them|He|She|Such|Both|Here|There|Then|"
    r"Also|However|Otherwise|Instead|Therefore|Thus|Hence|Second|Third|Finally|Next|"
    r"But|And|Or|Nor|So|Yet|Moreover|Furthermore|Besides|Likewise|Similarly|Still|Nevertheless|"
    r"Nonetheless|Meanwhile|Consequently|Accordingly|In\s+addition|In\s+this\s+case|"
    r"In\s+that\s+case|On\s+the\s+other\s+hand|As\s+a\s+result|For\s+this\s+reason|"
    r"(?:With|Without|From|For|By|In|On|To|Of|Through)\s+(?:it|them)(?=[\s,]))\b"
)
# An aside the authors set apart ("Note: ...", "Changed in version 3.8: ..."): it qualifies the
# subject, so it leads its page only when no other sentence can.
_ASIDE = re.compile(
    r"^(?:(?:Note|Notes|Warning|Caution|Tip|Hint|Important|Attention|Danger|See\s+also)\s*:"
    r"|(?:New|Changed)\s+in\s+version\b|Deprecated\s+(?:since|in)\s+version\b|(?:Previously|Formerly),)",
    re.IGNORECASE,
)
# A pronoun or demonstrative among a sentence's first words points back too ("If this option is
# given, ...", "Initially it returns ...", "Together they allow ..."), unless it is the "it" of
# "it is possible to ..." that points at nothing.
_POINTS_BACK = re.compile(r"^(?:\S+\s+){0,3}?(?P<word>this|these|those|it|its|they|them|their)\b", re.IGNORECASE)
_EMPTY_IT = re.compile(r"it\s+(?:is|was|(?:may|can|might|would|will)\s+be)\s+(?:\w+\s+){1,3}?(?:to|that)\b", re.IGNORECASE)
# A sentence opening by comparing with something ("Similar to `clock_gettime()` but ...", "Unlike
# `INHERITS`, the new table ..."): what it compares with is not what it is about.
_COMPARES = re.compile(
    r"^(?:Note:\s*)?(?:As\s+with|As\s+in|Just\s+as(?:\s+in|\s+with)?|Like|Unlike|Similar(?:ly)?\s+to|"
    r"Compared\s+(?:to|with)|In\s+contrast\s+to|Contrary\s+to|Same\s+as|Equivalent\s+to|Identical\s+to)\s"
    r"(?P<clause>(?:(?!\s(?:but|except|only|while|whereas)\b)[^,;:])*)"
)
_OTHER_FACTS = "Other facts"
# Sections that qualify a subject rather than say what it is: their sentences lead only after
# the same kind of sentence from anywhere else ("ALTER INDEX is a PostgreSQL extension", under
# "Compatibility", after "ALTER INDEX — change the definition of an index").
_QUALIFYING = frozenset({"compatibility", "notes", "note", "see also", "examples", "example", "history",
                         "caveats", "bugs", "deprecated", "portability"})
# Sections whose first sentence says what the document's subject is.
_DESCRIBING = frozenset({"description", "overview", "introduction", "name", "purpose", "summary",
                         "definition", "about", "basics", ""})
_CODE_MARKS = re.compile(r"[=;{}\[\]<>]|\(\(|--|\)\)")  # a sentence this full of them is code, not a lead
_PER_SENTENCE = 4  # tokens of citation and spacing around each sentence
_PER_SECTION = 6
_GENERIC_HEADINGS = BOILERPLATE | {"general", "misc", "miscellaneous", "other", "more", "about"}
# Two sentences about the subject say the same thing when, its names left out, every word of the
# shorter one is in the longer one ("X, also known as x, is the background process that starts
# Vacuum" beside "X, also known as x, is the background process that decides when ... and starts
# ..."), one word excepted from _RESTATES_LOOSE words on; below _RESTATES_MIN words left, a short
# sentence is too easily inside another.
_RESTATES_MIN = 5
_RESTATES_LOOSE = 10
_RESTATES_SPREAD = 0.3  # and this share of the longer one's: a long list holds any few words
_CODE = re.compile(r"`([^`]+)`")
_DEFINITION_OPENING = re.compile(r"`[^`\n]{1,120}`:\s")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(slots=True)
class _Sentence:
    text: str
    ref: int
    order: int
    support: int
    about: list[str]
    heading: str
    previous: int = -1  # order of the sentence before it in the same passage, -1 if none
    chunk_id: str = ""
    opens_section: bool = False  # the first sentence under its source heading
    section: str = ""  # the innermost source heading, as written
    headings: tuple[str, ...] = ()  # every source heading above it, lowercase
    flat: str = ""  # lowercase, single-spaced: for containment checks
    own_support: int = 1  # the support of the kept sentence's own evidence, before folding
    words: frozenset[str] = field(default_factory=frozenset)  # stemmed content words, subject left out
    marks: frozenset[str] = field(default_factory=frozenset)  # code names and numbers, subject left out
    stems: frozenset[str] = field(default_factory=frozenset)  # stemmed content words
    document: str = ""
    place: int = -1  # where its chunk's excerpt has it (sentence number), -1 if no excerpt does
    claimed: bool = False  # a claim about the page's subject says it, not only a passage around one
    at: int = -1  # where it stands in its chunk's single-spaced words, -1 if unknown
    # where the same sentence ends under the page's other headings (chunk, position): what
    # follows it there leans on it there, not where the page shows it
    ends_elsewhere: list[tuple[str, int]] = field(default_factory=list)
    # where its copies under the same heading end (an overload's second copy of a note)
    ends_too: list[tuple[str, int]] = field(default_factory=list)


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
        chosen = _readable(ranked, lead, pool)
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
    chosen = _readable(chosen, lead, pool)
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
    return [s for s in pool if s.claimed or any(_names_heading(h, names) for h in s.headings[1:])
            or matcher.opening(s.text) is not None]


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


def _subject_words(request: PageRequest) -> frozenset[str]:
    return frozenset(_stems(" ".join((request.title, *request.aliases))))


def _subject_marks(request: PageRequest) -> frozenset[str]:
    return frozenset(_MAN_SECTION.sub("", n.strip().strip("`").lower()) for n in (request.title, *request.aliases))


_MAN_SECTION = re.compile(r"\(\d[a-z]*\)$")  # "git-whatchanged(1)" names git-whatchanged
_CITED_SECTION = re.compile(r"(?<=[\w-])\(\d[a-z]*\)")


def _evidence_sentences(evidence: list[EvidenceItem], subject: frozenset[str] = frozenset(),
                        subject_marks: frozenset[str] = frozenset()) -> list[_Sentence]:
    """Prose sentences of the evidence in source order. A sentence equal to, inside, or nearly
    the same as one before is folded into it (its support added). When the two say one thing in
    different words (_RESTATES), the one with more support of its own is kept, on a tie the one
    with more words, in the place of the first."""
    pool: list[_Sentence] = []
    exact: dict[str, _Sentence] = {}  # flat text -> its sentence: most twins are exact copies
    for item in sorted(evidence, key=lambda e: e.ref):
        if item.kind == "relation":  # written from a graph edge, not found in the source
            continue
        heading, section, path = _placed(item.document, tuple(item.heading_path))
        previous = -1
        any_kept = False  # a prose sentence of this item came before
        opens_chunk = not item.text.startswith(("…", "..."))
        excerpt = item.kind == "excerpt"
        for place, (text, position, flat, stems, code, offset) in enumerate(_prose_of(item.text)):
            at = item.position + offset if item.position >= 0 and offset >= 0 else -1
            if not text:
                previous = -1
                continue
            opens = item.kind == "excerpt" and opens_chunk and not any_kept
            any_kept = True
            words, marks = stems - subject, code - subject_marks
            twin, restates = (exact[flat], False) if flat in exact else \
                _twin(pool, flat, stems, words, marks, item.document)
            if twin is not None:
                support = max(item.support, 1)
                if restates and (support, len(words)) > (twin.own_support, len(twin.words)):
                    # the later one is better cited, or says more: it takes the first one's place
                    twin.text, twin.ref, twin.flat, twin.words, twin.marks = text, item.ref, flat, words, marks
                    twin.stems, twin.document = stems, item.document
                    twin.about, twin.heading, twin.chunk_id = list(item.about), heading or item.document, item.chunk_id
                    twin.previous = previous if position > 0 else -1
                    twin.own_support, twin.at, twin.place = support, at, place if excerpt else -1
                    exact[flat] = twin
                twin.support += support
                twin.claimed = twin.claimed or item.kind == "claim"
                if excerpt and twin.place < 0 and twin.chunk_id == item.chunk_id:
                    twin.place = place  # a claim the passage also holds: placed where the passage has it
                if twin.at < 0 and twin.chunk_id == item.chunk_id:
                    twin.at = at
                if opens and not twin.opens_section:  # the claim is also a passage's first sentence
                    twin.opens_section, twin.section, twin.headings = True, section, path
                if at >= 0 and (twin.document, twin.heading) != (item.document, heading or item.document):
                    twin.ends_elsewhere.append((item.chunk_id, at + len(_spaced(text)) + 1))
                    previous = -1  # its antecedent here is shown under the other heading
                else:
                    if at >= 0 and twin.chunk_id != item.chunk_id:
                        twin.ends_too.append((item.chunk_id, at + len(_spaced(text)) + 1))
                    previous = twin.order
                continue
            pool.append(
                _Sentence(
                    text,
                    item.ref,
                    len(pool),
                    max(item.support, 1),
                    list(item.about),
                    heading or item.document,
                    previous if position > 0 else -1,
                    item.chunk_id,
                    opens_section=opens,
                    section=section,
                    flat=flat,
                    headings=path,
                    words=words,
                    marks=marks,
                    stems=stems,
                    document=item.document,
                    own_support=max(item.support, 1),
                    place=place if excerpt else -1,
                    claimed=item.kind == "claim",
                    at=at,
                    ends_elsewhere=[(c, where + len(_spaced(text)) + 1) for c, where in item.elsewhere],
                )
            )
            exact[flat] = pool[-1]
            previous = len(pool) - 1
    return pool


@lru_cache(maxsize=16384)
def _spaced(text: str) -> str:
    return " ".join(text.split())


@lru_cache(maxsize=16384)
def _placed(document: str, heading_path: tuple[str, ...]) -> tuple[str, str, tuple[str, ...]]:
    """(the innermost specific heading, else the document's title, the innermost heading, every
    heading lowercased with the document first) of an item's place: cached, a chunk's items reach
    many pages. A heading loses its number and label ("Appendix M. Glossary" is "Glossary"); the
    title keeps them if it is generic without ("13.1. Introduction" says more than "Introduction")."""
    heading = next((h for h in map(without_label, reversed(heading_path)) if _specific(h)), "")
    if not heading and _specific(title := without_label(document)):
        heading = title
    section = clean_heading(heading_path[-1]) if heading_path else ""
    return heading, section, tuple(clean_heading(h).lower().strip("`*") for h in (document, *heading_path))


@lru_cache(maxsize=65536)
def _prose_of(text: str) -> tuple[tuple[str, int, str, frozenset[str], frozenset[str], int], ...]:
    """(sentence, position in its block, flat lowercase, stemmed content words, code names and
    numbers, where it starts in the text's single-spaced words or -1) for each sentence of an
    evidence text; ("", ...) for one too short or unfinished to quote. Cached: the same chunk
    excerpt and claim reach many pages."""
    out = []
    spaced = " ".join(text.split())
    at = 0
    for s in sentences_of(text):
        found = spaced.find(" ".join(s.text.split()[:8]), at)
        if found >= 0:
            at = found
        quoted = _quotable(s.text)
        if quoted is None:
            out.append(("", s.position, "", frozenset(), frozenset(), found))
        else:
            out.append((s.text, s.position, *quoted, found))
    return tuple(out)


@lru_cache(maxsize=65536)
def _quotable(sentence: str) -> tuple[str, frozenset[str], frozenset[str]] | None:
    """(flat lowercase, stemmed content words, code names and numbers) of a sentence worth
    quoting, else None. Cached apart from _prose_of: a claim is also a sentence of the excerpts
    of its chunk (half the sentences of a compile's evidence recur so)."""
    if len(sentence.split()) < _MIN_WORDS or not (_ENDS_SENTENCE.search(sentence) or is_purpose_line(sentence)):
        return None
    if starts_mid_sentence(sentence):
        return None  # "is compared to the total ...": its start is not in the source's prose
    lower = _CITED_SECTION.sub("", sentence.lower())  # "git-log(1)" is git-log, its "1" no number
    flat = " ".join(lower.split()).rstrip(".!")
    words = frozenset(_WORD.findall(lower))  # the words of `flat` too: split once for both
    marks = {_MAN_SECTION.sub("", m.strip().lower()) for m in _CODE.findall(sentence)}
    marks.update(w for w in words if not w.isalpha())
    return flat, _stemmed(words), frozenset(marks)


def _stems(text: str) -> frozenset[str]:
    return _stemmed(content_tokens(text))


def _stemmed(words: frozenset[str]) -> frozenset[str]:
    """The content words (summary.content_tokens of the text the words are from), a plural's -s
    taken off, roughly ("tables" -> "table", "needs" -> "need"): enough to compare. (One
    expression: a call per word was most of its time.)"""
    return frozenset(w[:-1] if len(w) > 3 and w[-1] == "s" and not w.endswith(("ss", "us", "is")) else w
                     for w in words - FUNCTION_WORDS)


def _twin(pool: list[_Sentence], flat: str, stems: frozenset[str], words: frozenset[str],
          marks: frozenset[str], document: str) -> tuple[_Sentence | None, bool]:
    """The pool sentence that contains `flat` or is contained in it; or, from another document,
    nearly equals it (word Jaccard at or above NEAR_DUPLICATE) or says what it says in other
    words (_RESTATES_*: the subject's names left out); and whether it is the last kind.

    Alike sentences of one document are a reference's siblings ("interested in read events"
    beside "... write events", "the decoder must" beside "the encoder must"), and sentences
    naming other code or numbers are other facts ("calls `write_history()`" beside "calls
    `replace_history_entry()`", "1 GB" beside "3.5 GB"): those all stay."""
    size, count = len(stems), len(words)
    # Word counts another sentence can have and still reach a threshold: the shared words are at
    # most the shorter's. Outside them only the substring test is worth its time.
    low, high = NEAR_DUPLICATE * size, size / NEAR_DUPLICATE
    fewest, most = (max(_RESTATES_MIN, _RESTATES_SPREAD * count), count / _RESTATES_SPREAD) \
        if count >= _RESTATES_MIN else (1, 0)
    for p in pool:
        # a sentence inside another says nothing the other does not
        if flat in p.flat or p.flat in flat:
            return p, False
        if marks != p.marks or document == p.document:
            continue
        n = len(p.stems)
        if low <= n <= high and len(stems & p.stems) >= NEAR_DUPLICATE * len(stems | p.stems):
            return p, False
        m = len(p.words)
        if fewest <= m <= most:
            shared = len(words & p.words)
            shorter, longer = (count, m) if count <= m else (m, count)
            if shared >= shorter - (shorter >= _RESTATES_LOOSE) and shared >= _RESTATES_SPREAD * longer:
                return p, True
    return None, False


def _names(request: PageRequest) -> tuple[str, ...]:
    names = sorted(
        {n.strip() for n in (request.title, *request.aliases) if n.strip()}, key=len, reverse=True
    )
    return tuple(names) or (request.slug,)


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


class _NameMatcher:
    """Finds the subject's names in a sentence, case-insensitively, by plain string search:
    a regular expression per page cost more to compile than all its searches."""

    __slots__ = ("names",)

    def __init__(self, names: tuple[str, ...]):
        self.names = [n.lower() for n in names]  # longest first, as _names sorts them

    def opening(self, text: str) -> int | None:
        """Where the name ends when the sentence opens with it (after "The", "A", "An", and a
        backtick or star that must close after it: "`BEGIN` initiates ..."); else None."""
        lower = text.lower()
        if len(lower) != len(text):
            return None  # a letter whose lowercase is longer: positions would not match
        starts = [0]
        word = lower.split(None, 1)[0] if lower.strip() else ""
        if word in ("the", "a", "an") and lower[:1] == word[:1]:
            after = len(word)
            rest = len(lower) - len(lower[after:].lstrip())
            if rest > after:
                starts.insert(0, rest)
        for at in starts:
            mark = lower[at : at + 1] if lower[at : at + 1] in ("`", "*") else ""
            for with_mark in ((True, False) if mark else (False,)):
                begin = at + 1 if with_mark else at
                for name in self.names:
                    if not lower.startswith(name, begin):
                        continue
                    end = begin + len(name)
                    after_char = lower[end : end + 1]
                    if _is_word(name[-1]) and after_char and _is_word(after_char):
                        continue  # the name runs on into a longer word
                    if with_mark:
                        if lower[end : end + 1] == "<":  # its type parameters: "`Pair<L,R>`"
                            close = lower.find(">", end)
                            if close > 0 and lower[close + 1 : close + 2] == mark:
                                end = close + 1
                        if lower[end : end + 1] != mark:
                            continue
                        end += 1
                    return end
        return None

    def first(self, text: str) -> int:
        """Where the first whole-word mention of a name starts, or -1."""
        lower = text.lower()
        best = -1
        for name in self.names:
            at = lower.find(name)
            while at >= 0 and (best < 0 or at < best):
                before = lower[at - 1 : at] if at else ""
                after = lower[at + len(name) : at + len(name) + 1]
                if not (before and (_is_word(before) or before == "-")) and not (
                    after and (_is_word(after) or after == "-")
                ):
                    best = at
                    break
                at = lower.find(name, at + 1)
        return best


@lru_cache(maxsize=4096)
def _matcher(names: tuple[str, ...]) -> _NameMatcher:
    return _NameMatcher(names)


def _choose_lead(
    request: PageRequest, pool: list[_Sentence]
) -> tuple[dict | None, list[_Sentence]]:
    """The sentence that best says what the subject is, never one leaning on another.

    In order: a sentence defining the subject ("X is a ...", "X, short for ...", "X — does
    ..."); the first sentence under a source heading named after the subject (a glossary
    entry, a reference page); a sentence opening with the subject; the description; a
    sentence naming it early; any plain sentence. A sentence opening with a connective
    ("Also", "However", "This") is never a lead; an aside ("Note: ...", "Changed in version
    3.8: ...") leads only when no other sentence can.
    """
    matcher = _matcher(_names(request))
    names = {n.lower().strip("`*") for n in _names(request)}
    described = " ".join(request.description.split())
    # "This extension allows you to ...", the document's own first word on its subject (MAP's
    # description), may lead though it opens with "This".
    usable = [s for s in pool if (_may_lead(s.text) or (described and s.text in described and OWN_KIND.match(s.text)))
              and not _compares_with_subject(s.text, matcher) and not _history(s) and not _member_of_another(s, names)]
    # An aside, or a line that only repeats the title ("zoneinfo — IANA time zone support" atop
    # the page so titled), leads only when nothing else can.
    plain = [s for s in usable if not _ASIDE.match(s.text) and not _repeats_title(s, request.title)]
    lead, rest = _best_lead(request, pool, plain, matcher)
    if lead is None and len(plain) < len(usable):
        lead, rest = _best_lead(request, pool, usable, matcher)
    return lead, rest


def _member_of_another(s: _Sentence, names: set[str]) -> bool:
    """An entry ("`widgets`: An iterable ...") under a heading naming a code subject that is not
    this page's (`MultiWidget`): that owner's member, which shares the page's name only. It never
    says what this page's subject is."""
    entry = _DEFINITION_OPENING.match(s.text)
    heading = s.section.strip().strip("`*")
    if entry is None or not heading or _names_heading(heading.lower(), names):
        return False
    term = s.text[1:entry.end()].rstrip(": `").lower()
    if any(c in term for c in ". "):
        return False  # a qualified name ("`class views.edit.BaseDeleteView`: ...") names its own scope
    inner_capital = any(c.isupper() for c in heading[1:]) and not heading.isupper()
    return heading.lower() != term and " " not in heading and (inner_capital or any(c in heading for c in "_.:("))


def _repeats_title(s: _Sentence, title: str) -> bool:
    """Whether the sentence holds the title's words and nothing else (its length tells first)."""
    return abs(len(s.text) - len(title)) <= 16 and _WORD.findall(s.flat or s.text.lower()) == _WORD.findall(title.lower())


def _best_lead(
    request: PageRequest, pool: list[_Sentence], usable: list[_Sentence], matcher: _NameMatcher
) -> tuple[dict | None, list[_Sentence]]:
    names = {n.lower() for n in _names(request)}
    title = request.title.strip().lower()
    description = " ".join(request.description.split())
    tiers: list[tuple[float, int, int, _Sentence]] = []  # (tier, -support, order, sentence)
    naming = []
    for s in usable:
        m = matcher.opening(s.text)
        headed = s.opens_section and _names_heading(s.section.lower().strip("`*"), names)
        own = any(_names_heading(h, names) for h in s.headings)  # from the passage about the subject itself
        described = bool(description) and (s.text == description or s.text in description)
        if m is not None and STRONG.match(s.text[m:]):
            tier = 0.0  # "X is a ...", "X refers to ...", "X — does ..."
        elif headed or (m is not None and own and s.opens_section and s.section.lower() in _DESCRIBING):
            tier = 0.4  # a glossary entry, a reference page's "Description": the authors' own opening
        elif described and (s.opens_section or request.kind != "topic"):
            # MAP's description is the authors' definition (a definition list's entry, a NAME
            # line, a glossary entry): it says what the subject is before any sentence merely
            # opening with it does.
            # Of its pieces (REDUCE joins the descriptions of several passages), the first
            # is the best ranked: the document's own opening before a member's entry.
            tier = (0.5 if not _ASIDE.match(s.text) else 1.0) + 0.1 * description.find(s.text) / len(description)
        elif m is not None and WEAK.match(s.text[m:]):
            tier = 1.5  # "X is removed ...": says what X does, not what it is
        elif described:
            tier = 2
        elif m is not None:
            tier = 3 if own and s.opens_section else 4
        else:
            found = matcher.first(s.text)
            if found >= 0 and _opens_sentence(s.text):
                naming.append((found, s))
            continue
        if s.section.lower().strip("`*: ") in _QUALIFYING:
            tier += 0.25
        # Of two alike, the one naming the subject by its title: "`Tokenizer`: Splits ..." over
        # "`Tokenizer()`: Constructs ..." of the same page.
        titled = m is not None and _opened_name(s.text[:m]) == title
        tiers.append((tier, not titled, -s.support, s.order, s))

    if tiers:
        best = min(tiers, key=lambda t: t[:4])[4]
        return _lead(best), [s for s in pool if s is not best]
    if description:
        for s in usable:
            if s.text == description or description in s.text:
                return _lead(s), [p for p in pool if p is not s]
        if not pool and not _leans_back(description):
            return {"text": description, "ref": None}, []
    if naming:
        best = min(naming, key=lambda x: (x[0] > 40, -x[1].support, x[0], x[1].order))[1]
        return _lead(best), [s for s in pool if s is not best]
    plain = [s for s in usable if _opens_sentence(s.text)]
    if plain:
        # A topic's page opens on what its members share: a sentence naming its most central
        # member (its links come most central first) before any well-supported one.
        rank = _member_rank(request, plain) if request.kind == "topic" else {}
        best = min(plain, key=lambda s: (rank.get(s.order, len(request.links)), -s.support, s.order))
        return _lead(best), [s for s in pool if s is not best]
    return None, list(pool)


_OPENING_ARTICLE = re.compile(r"^(?:the|an?)\s+", re.IGNORECASE)


def _opened_name(opening: str) -> str:
    """The name a sentence opens with, as matched (without article, code marks or type
    parameters), lowercase."""
    name = _OPENING_ARTICLE.sub("", opening.strip().strip("`*")).strip("`* ").lower()
    return name.split("<", 1)[0] if name.endswith(">") else name


def _member_rank(request: PageRequest, sentences: list[_Sentence]) -> dict[int, int]:
    """Sentence order -> index of the first (most central) member page it names."""
    matchers = [_matcher((link.title,)) for link in request.links]
    out: dict[int, int] = {}
    for s in sentences:
        for i, m in enumerate(matchers):
            if m.first(s.text) >= 0:
                out[s.order] = i
                break
    return out


def _compares_with_subject(text: str, matcher: _NameMatcher) -> bool:
    """Whether the sentence opens by comparing with the subject ("Similar to X, but ..."): it is
    about something else, so it never leads the subject's page."""
    compared = _COMPARES.match(text)
    if compared is None:
        return False
    at = matcher.first(text)
    return 0 <= at < compared.end("clause")


@lru_cache(maxsize=65536)
def _may_lead(text: str) -> bool:
    """Neither leaning on the sentence before nor full of code marks (cached: a sentence is in
    the pool of every page it is evidence for)."""
    return not _leans_back(text) and not points_back(text, subjectless=False) and len(_CODE_MARKS.findall(text)) < 4


def _leans_back(text: str, possessive: bool = True) -> bool:
    """Whether the sentence points at one before it: a connective or pronoun opening it, or a
    pronoun among its first words other than an "it" that points at nothing. A definition's
    "This ..." after its term ("`BuildError`: This error may be raised ...") points at the term.
    Without `possessive`, a possessive among the first words ("`x` reads its settings ...") is
    its own subject's, not a pointer."""
    if _DEFINITION_OPENING.match(text) or entry_label(text) or ABOUT_ITSELF.match(text):
        return False
    if _ANAPHORA.match(text):
        return True
    pointing = _POINTS_BACK.match(text)
    if pointing is None or (not possessive and pointing["word"].lower() in ("its", "their")):
        return False
    return pointing["word"].lower() != "it" or _EMPTY_IT.match(text, pointing.start("word")) is None


# "This class ...", "These flags ...": an entry's text naming the kind of thing it describes.
def _needs_before(text: str) -> bool:
    """Whether a sentence reads only after the one before it in its passage: standalone's
    signs, or _leans_back's less a possessive, unless it names the kind of thing its entry is."""
    return points_back(text) or (not OWN_KIND.match(text) and _leans_back(text, possessive=False))


def _opens_sentence(text: str) -> bool:
    """Starts like a sentence of its own (a capital or a quoted name), not mid-thought."""
    return text[:1].isupper() or text[:1] in "`*\"'“"


def _lead(s: _Sentence) -> dict:
    return {"text": s.text, "ref": s.ref, "order": s.order, "chunk_id": s.chunk_id}


def _readable(chosen: list[_Sentence], lead: dict | None, pool: list[_Sentence]) -> list[_Sentence]:
    """Without sentences that lean on a sentence the page does not show ("It also ...", "The
    price of this flexibility is ...", "Defaults to the configured upstream.")."""
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
    kept = []
    in_entry: set[int] = set()  # sentences after an entry's label ("`--keep`: Keeps ... It also ...")
    for s in sorted(chosen, key=lambda s: s.order):
        before = s.previous if s.previous >= 0 else ending.get((s.chunk_id, s.at), -1)
        apart = elsewhere.get((s.chunk_id, s.at)) if s.previous < 0 else None
        if apart is not None and lead is not None and apart.order == lead.get("order"):
            apart = None  # the subject's own entry, said in two places: its text goes on either way
        if before >= 0 and (before in in_entry or (before < len(pool) and entry_label(pool[before].text))):
            in_entry.add(s.order)
        elif apart is not None and entry_label(apart.text) and not entry_label(s.text):
            in_entry.add(s.order)
            before = -1  # its entry's label is shown, but under the other heading
        # Past its first sentence, an entry's text is about the entry's term, which only the
        # first sentence names: without it, "Stash only the changes ..." says of what?
        if (_needs_before(s.text) or s.order in in_entry) and before not in shown:
            shown.discard(s.order)
            continue
        kept.append(s)
    return kept


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


def _history(s: _Sentence) -> bool:
    """A sentence of release notes or a changelog: history of its subject, never what it is."""
    return release_notes(s.document, s.headings[1:])


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


# A heading naming its subject after the kind of thing it is ("Class Pair", "Module json").
_KIND_HEADING = re.compile(
    r"^(?:abstract\s+|final\s+)?(?:class|interface|enum|enum class|record|record class|exception|error|"
    r"annotation type|annotation interface|module|package|namespace|struct|union|function|macro|"
    r"program|command|variable|setting|option|directive|role)\s+`?(?P<name>[^\s`]+)`?$"
)


def _names_heading(heading: str, names: set[str]) -> bool:
    """Whether a lowercase heading is one of the subject's names, or one after its kind."""
    if heading in names or any(n.endswith("." + heading) for n in names):  # "Mixin" of "views.base.Mixin"
        return True
    kind = _KIND_HEADING.match(heading)
    return kind is not None and kind["name"].split("<", 1)[0] in names


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


def _paragraphs(ordered: list[_Sentence]) -> list[list[dict]]:
    """A paragraph per chunk's run of sentences (at most _PARAGRAPH_MAX), `ordered` by
    _in_passage_order; a definition's opening ("`--squash`: Produce ...") starts one of its own,
    so an owner's options and fields read one by one."""
    paragraphs: list[list[dict]] = []
    last_chunk = None
    for s in ordered:
        if (s.chunk_id != last_chunk or len(paragraphs[-1]) >= _PARAGRAPH_MAX or _DEFINITION_OPENING.match(s.text)
                or not _ENDS_SENTENCE.search(paragraphs[-1][-1]["text"])):  # a line with no full stop ends its own
            paragraphs.append([])
        paragraphs[-1].append({"text": s.text, "ref": s.ref})
        last_chunk = s.chunk_id
    return paragraphs


def _cited(items: list[_Sentence]) -> list[dict]:
    return [{"text": s.text, "ref": s.ref} for s in items]


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
