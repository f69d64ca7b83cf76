"""The evidence as the offline writer's pool of sentences: each prose sentence of a page's evidence
once, with its citation, its place in its passage and document, its support and its words (a
sentence said twice, or nearly, folds into one)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..tasks import EvidenceItem, PageRequest
from .definitions import is_purpose_line
from .sentences import clean_heading, sentences_of, starts_mid_sentence, without_label
from .standalone import narrates_code
from .summary import NEAR_DUPLICATE, content_tokens
from .words import BOILERPLATE, FUNCTION_WORDS

_MIN_WORDS = 4


_ENDS_SENTENCE = re.compile(r"[.!](?:[\"')\]”’*_`]*)$")


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
    entry: int = -1  # where the entry it is a later sentence of starts (EvidenceItem.entry_at), -1: none
    entry_term: str = ""  # the term that entry defines
    opens_entry: bool = False  # the first sentence of an entry (a definition block)
    on_example: bool = False  # names what an example before it made up (EvidenceItem.examples)
    intro: int = -1  # where the sentence starts whose list it is an item of (EvidenceItem.intros)


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
            # an entry's text names what it defines, whatever example showed the name first
            example = not item.opens_entry(at) and item.entry_at(at)[0] < 0 and not _DEFINITION_OPENING.match(text) \
                and (_on_example(text, at, item.examples, subject_marks) or (item.follows_code(at) and narrates_code(text)))
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
                if item.entry_at(at)[0] < 0:
                    twin.entry, twin.entry_term = -1, ""  # said elsewhere as a sentence of its own
                twin.opens_entry = twin.opens_entry or item.opens_entry(at)
                twin.on_example = twin.on_example and example  # said elsewhere without the example
                if item.intro_at(at) < 0:
                    twin.intro = -1  # said elsewhere as a sentence of its own
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
                    entry=(entry := item.entry_at(at))[0],
                    entry_term=entry[1],
                    opens_entry=item.opens_entry(at),
                    on_example=example,
                    intro=item.intro_at(at),
                )
            )
            exact[flat] = pool[-1]
            previous = len(pool) - 1
    return pool


def _on_example(text: str, at: int, examples: list[tuple[int, str]], subject_marks: frozenset[str]) -> bool:
    """Whether the sentence at `at` names a code name that an example before it made up (and
    that is not the page's subject, which its page may name however its passage came to it)."""
    if at < 0 or not examples:
        return False
    written = {m.strip().lower() for m in _CODE.findall(text)}
    return any(made <= at and name in written and name.split("(")[0] not in subject_marks for made, name in examples)


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
    # a type named with or without its parameters ("CircuitBreaker<T>", "CircuitBreaker") is one name
    marks = {_TYPE_PARAMETERS.sub("", _MAN_SECTION.sub("", m.strip().lower())) for m in _CODE.findall(sentence)}
    marks.update(w for w in words if not w.isalpha())
    return flat, _stemmed(words), frozenset(marks)


_TYPE_PARAMETERS = re.compile(r"(?<=[a-z0-9_])<[^<>]*(?:<[^<>]*>[^<>]*)*>$")


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


def _specific(heading: str) -> bool:
    text = heading.strip().strip("#").strip()
    return bool(text) and text.lower() not in _GENERIC_HEADINGS
