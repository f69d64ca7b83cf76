"""Finds named spans in a sentence, normalises names, matches acronyms and assigns types."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ...errors import TemplateError
from ...templates.patterns import Pattern, PatternError, compile_pattern
from ...templates.schema import Template
from .words import (
    BOILERPLATE,
    FUNCTION_WORDS,
    GENERIC_ACRONYMS,
    SENTENCE_STARTERS,
    UNITS,
    WEEKDAYS_MONTHS,
)

_CAP = r"[A-Z][A-Za-z0-9]*(?:['’/-][A-Za-z0-9]+)*"
_CONNECT = r"(?:(?:of|for|de|du|von|van|la)\s+(?:the\s+)?)"
_VERSION = r"(?:\s+v?\d+(?:\.\d+)*(?![\w.]))"

# One pass over a sentence finds every candidate span; alternatives are tried in this order.
# Each starts at a backtick, an asterisk or a word's first character: the opening assertion
# turns away every other position at once. The possessive runs (++, *+) end where nothing
# after them could match a character sooner, so they only spare the engine its backtracking.
SPAN = re.compile(
    r"(?:(?=[`*])|(?<!\w))(?:"
    r"`(?P<code>[^`\n]{1,60})`"
    r"|\*\*(?P<strong>[^*\n]{2,60}?)\*\*"
    r"|(?<![\w*])\*(?P<em>[^*\n\s][^*\n]{0,58}?)\*(?![\w*])"
    r"|(?<![\w/.:-])(?P<file>[\w-]++\.(?:conf|py|c|h|sql|json|ya?ml|toml|sh|so|dll|exe|ini|cfg|js|ts|log))\b"
    r"|(?P<ident>\b[A-Za-z][A-Za-z0-9]*+(?:_[A-Za-z0-9]++)++\b(?:\(\))?"
    r"|\b[a-z]++(?:[A-Z][a-z0-9]*+)++\b(?:\(\))?"
    r"|\b[A-Za-z_][\w.]*+\(\))"
    rf"|(?P<name>\b{_CAP}(?:\s+{_CONNECT}?{_CAP})*{_VERSION}?))"
)

_ACRONYM = re.compile(r"^[A-Z][A-Z0-9&]{1,7}s?$")
_TOKEN_SPLIT = re.compile(r"[\s_/-]+")
_NON_WORD = re.compile(r"[^\w\s-]")
_DIGITS = re.compile(r"\d+(?:\.\d+)*")
_ORGANIZATION = re.compile(
    r"\b(?:Inc|Corp|Corporation|Ltd|LLC|GmbH|Foundation|University|Institute|Group|Project|Consortium|Association|Society|Committee|Agency|Department)\b\.?$"
)
_LETTER_RUN = re.compile(r"[^\W\d_]{2,}")
_CAPITAL_PAIR = re.compile(r"[A-Z]{2}")
_SHOUTED_WORDS = 8  # fewer words in capitals are a heading or a run of names, not a shouted sentence


def shouted(sentence: str) -> bool:
    """A sentence written in capitals throughout ("THE UNIVERSITY OF CALIFORNIA SPECIFICALLY
    DISCLAIMS ANY WARRANTIES ..."): its capitals mark no names."""
    if sentence.isascii() and len(_CAPITAL_PAIR.findall(sentence)) < _SHOUTED_WORDS:
        return False  # each word in capitals holds a pair of capitals: most sentences, told at once
    words = _LETTER_RUN.findall(sentence)
    return len(words) >= _SHOUTED_WORDS and sum(map(str.isupper, words)) * 10 >= len(words) * 9


_BOILER_NUMBERED = re.compile(r"^(?:[A-Z][a-z]+)\s+[\dIVX]+(?:[.-]\d+)*$")


@dataclass(slots=True)
class Span:
    start: int
    end: int
    text: str
    kind: str  # code | term | file | ident | name | acronym


def find_spans(
    sentence: str,
    mid_caps: set[str] | frozenset[str] = frozenset(),
    lowercase: set[str] | frozenset[str] = frozenset(),
) -> list[Span]:
    """Named spans in one sentence, with boilerplate and sentence-initial common words removed.

    `mid_caps` holds the capitalised words seen away from a sentence start in the same text: a
    sentence-initial single word is kept only when it is capitalised elsewhere too.
    `lowercase` holds the words the text also writes in lowercase: a single plain capitalised
    word among them ("Operators", "Storage") is a common word in a title, not a name.
    """
    spans: list[Span] = []
    lead = len(sentence) - len(sentence.lstrip("\"'“‘([*`"))
    capitals_say_nothing = shouted(sentence)
    for m in SPAN.finditer(sentence):
        kind = m.lastgroup or "name"
        text = m.group(kind)
        start = m.start(kind)
        if kind in ("strong", "em"):
            kind = "term"
        if kind == "name":
            if capitals_say_nothing:
                continue
            span = _clean_name(
                # after a label's colon a clause starts: "Changed in version 3.8: Similar to ..."
                text, start, at_start=start <= lead or sentence[start - 2 : start] == ": ",
                mid_caps=mid_caps, lowercase=lowercase,
            )
            if span is not None:
                spans.append(span)
            continue
        text = text.strip()
        if kind in ("term", "code"):  # "**WAL.**", "`autovacuum:`": trailing punctuation is no part
            text = text.rstrip(".,:;").strip()
        if kind == "term" and text.endswith(")"):  # "**Write-Ahead Log (WAL)**": the name, then its short form
            text = _TRAILING_PARENTHESIS.sub("", text) or text
        if kind == "code" and not _code_name(text):
            continue  # a code fragment, not a name
        if kind == "term" and (len(text.split()) > 6 or text.lower() in BOILERPLATE):
            continue
        spans.append(Span(start, start + len(m.group(m.lastgroup or "name").strip()), text, kind))
    return spans


def _clean_name(
    text: str,
    start: int,
    *,
    at_start: bool,
    mid_caps: set[str] | frozenset[str],
    lowercase: set[str] | frozenset[str],
) -> Span | None:
    tokens = text.split()
    offset = 0
    first = True
    # Drop leading words that are only capitalised because they open the sentence, and units
    # or generic abbreviations left over from a quantity ("16 MB WAL segment", "IDs of the X").
    # A boilerplate word is kept inside a longer name ("Index Scan"): labels end in a colon.
    while tokens and (
        tokens[0].lower() in SENTENCE_STARTERS
        or tokens[0].lower() in WEEKDAYS_MONTHS
        or _is_filler(tokens[0])
        or (at_start and first and tokens[0] in _CHANGE_VERBS)
    ):
        if len(tokens) > 1 and _BOILER_NUMBERED.match(" ".join(tokens[:2])):
            return None  # "Table 3", "Section 25.1"
        offset = text.index(tokens[1], offset + len(tokens[0])) if len(tokens) > 1 else len(text)
        tokens = tokens[1:]
        first = False
    while tokens and (tokens[-1].lower() in FUNCTION_WORDS or tokens[-1].lower() in UNITS):
        tokens = tokens[:-1]
    if tokens and tokens[-1][-2:] in _POSSESSIVES:  # "Java’s garbage collector": the name is Java
        tokens[-1] = tokens[-1][:-2]
    if not tokens or not tokens[-1]:
        return None
    # a connector left dangling at the front ("of Write-Ahead Log") is dropped too
    while tokens and tokens[0] in ("of", "for", "de", "du", "von", "van", "la", "the"):
        offset = text.index(tokens[1], offset + len(tokens[0])) if len(tokens) > 1 else len(text)
        tokens = tokens[1:]
    if not tokens:
        return None
    if len(tokens) > 1 and len({t.lower() for t in tokens}) == 1:
        return None  # "Flag Flag": a table's cells run together, not a name
    name = " ".join(tokens)
    lower = name.lower()
    if lower in BOILERPLATE or lower in WEEKDAYS_MONTHS or _BOILER_NUMBERED.match(name):
        return None
    if all(t.lower() in WEEKDAYS_MONTHS or _DIGITS.fullmatch(t) for t in tokens):
        return None
    if len(tokens) == 1:
        word = tokens[0]
        if len(word) < 2 or word.isdigit() or word.lower() in FUNCTION_WORDS or _is_filler(word):
            return None
        if not _distinctive(word):
            if at_start and first and word not in mid_caps:
                return None  # "Replication is ...": capitalised only because it opens the sentence
            if word.lower() in lowercase or (word.endswith("ing") and word[1:].islower()):
                return None  # a common word in a title ("Operators", "Creating")
    kind = "acronym" if len(tokens) == 1 and _ACRONYM.match(tokens[0]) else "name"
    begin = start + offset
    return Span(begin, begin + len(name), name, kind)


# A change note's verb, capitalised because it opens the clause ("Changed in version 3.2: Added
# Windows support."): no part of the name after it.
_CHANGE_VERBS = frozenset("Added Removed Renamed Deprecated Moved Replaced Dropped Improved Updated Extended".split())
_POSSESSIVES = ("’s", "'s")
_TRAILING_PARENTHESIS = re.compile(r"\s+\([^()]{1,40}\)$")
_CODE_WORD = re.compile(r"[A-Za-z_][\w.-]*(?:\(\))?")
_DOCUMENT_FILE = re.compile(r"\.(?:html?|md|markdown|rst|txt|pdf|docx?)$", re.I)


def _code_name(text: str) -> bool:
    """Inline code the text treats as a name: an identifier, dotted path or call (`os.path`,
    `max_wal_size`, `open()`), or a few keyword-like words (`CREATE TABLE`). Anything with
    arguments, quotes, operators, options or paths (`f(x)`, `'L'`, `a=1`, `--force`) is code,
    and so is a document file name (`README.txt`). (A single letter, `x` or `f()`, is a name
    here but never a subject: subjects.never_subject.)"""
    words = text.split()
    if not 1 <= len(words) <= 4 or not all(_CODE_WORD.fullmatch(w) for w in words):
        return False
    if _DOCUMENT_FILE.search(text):
        return False
    return len(words) == 1 or words[0].lower() not in FUNCTION_WORDS


def _is_filler(word: str) -> bool:
    """A unit (KB, ms) or a generic abbreviation (ID, IDs, I/O, CPU): never a name on its own."""
    lower = word.lower()
    return lower in UNITS or lower in GENERIC_ACRONYMS or lower.rstrip("s") in GENERIC_ACRONYMS


def _distinctive(word: str) -> bool:
    """Capitals or digits inside the word (PostgreSQL, WAL, IPv6): a name wherever it stands."""
    return any(c.isupper() or c.isdigit() for c in word[1:])


@lru_cache(maxsize=65536)
def name_key(name: str) -> str:
    """Normalised form used to tell two mentions of one name apart from two names."""
    text = _NON_WORD.sub(" ", name.replace("()", "")).lower()
    if _CONSTANT.match(name.strip().strip("`").removesuffix("()")):
        return " ".join(t for t in _TOKEN_SPLIT.split(text) if t)  # AC_CHECK_FUNCS is not AC_CHECK_FUNC
    tokens = [singular(t) for t in _TOKEN_SPLIT.split(text) if t]
    return " ".join(tokens)


# A macro's or constant's name (AC_CHECK_FUNCS, O_NONBLOCK): letter for letter, no plural of another.
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")


def singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "os")):
        return word[:-1]
    return word


def is_acronym(name: str) -> bool:
    return bool(_ACRONYM.match(name.strip()))


def acronym_matches(acronym: str, expansion: str) -> bool:
    """Does `acronym` abbreviate `expansion`? Every word gives its first letter, in order; a word
    may give more letters (MVCC: MultiVersion Concurrency Control); stop words may be skipped."""
    letters = (
        acronym.rstrip("s").lower()
        if acronym.endswith("s") and acronym[:-1].isupper()
        else acronym.lower()
    )
    letters = re.sub(r"[^a-z0-9]", "", letters)
    words = [w.lower() for w in _TOKEN_SPLIT.split(expansion.strip()) if w]
    if len(letters) < 2 or len(words) < 2 or len(words) > len(letters) + 3:
        return False
    return _align(letters, words, 0, 0)


def _align(letters: str, words: list[str], li: int, wi: int) -> bool:
    if li == len(letters):
        return all(w in FUNCTION_WORDS for w in words[wi:])
    if wi == len(words):
        return False
    word = words[wi]
    if word in FUNCTION_WORDS and _align(letters, words, li, wi + 1):
        return True
    if word.startswith("ex") and letters[li] == "x":
        word = word[1:]  # X for eXtensible, eXtension: the usual spelling of such acronyms
    if not word or word[0] != letters[li]:
        return False
    # this word gives its first letter and maybe more letters from inside it
    li += 1
    pos = 1
    while True:
        if _align(letters, words, li, wi + 1):
            return True
        if li == len(letters):
            return False
        found = word.find(letters[li], pos)
        if found < 0:
            return False
        li += 1
        pos = found + 1


def digits_of(name: str) -> list[str]:
    return _DIGITS.findall(name)


# ---- types ---------------------------------------------------------------------------------

_CODE_KINDS = ("code", "ident", "file")
_GENERIC_TYPES = ("concept", "other", "thing", "entity", "term", "topic", "")


class TypeRules(list[tuple[str, list[Pattern]]]):
    """(type name, its compiled patterns) in the template's order; `anything` matches where any
    of them does, so most texts are turned away by one search (None: no single program fits).
    `typed` remembers relation_type's answers under these rules (the same few words join many
    pairs of names)."""

    anything: Pattern | None = None

    def __init__(self) -> None:
        super().__init__()
        self.typed: dict[str, object] = {}


@lru_cache(maxsize=64)
def _compiled_types(
    specs: tuple[tuple[str, tuple[str, ...]], ...],
) -> TypeRules:
    # RE2: a template's patterns come from strangers, and its matching time is linear.
    out = TypeRules()
    for name, patterns in specs:
        compiled = []
        for index, pattern in enumerate(patterns):
            try:
                compiled.append(compile_pattern(pattern))
            except PatternError as exc:
                raise TemplateError(
                    f"bad pattern {pattern!r}: {exc}", key=f"types.{name}.patterns[{index}]"
                ) from exc
        if len(compiled) > 1:
            # One program for the type: any of its patterns matches where the alternation does,
            # and one search costs a fraction of one per pattern.
            try:
                compiled = [compile_pattern("|".join(f"(?:{p})" for p in patterns))]
            except PatternError:
                pass  # too long or too large together: searched one by one
        out.append((name, compiled))
    every = [p for _, patterns in specs for p in patterns]
    if len(every) > 1:
        try:
            out.anything = compile_pattern("|".join(f"(?:{p})" for p in every))
        except PatternError:
            out.anything = None
    return out


def entity_type_rules(template: Template) -> TypeRules:
    return _compiled_types(entity_type_specs(template))


def entity_type_specs(template: Template) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The template's entity types and their patterns, as a key for cached_type."""
    return tuple((t.name, tuple(t.patterns)) for t in template.entity_types)


@lru_cache(maxsize=65536)
def cached_type(
    specs: tuple[tuple[str, tuple[str, ...]], ...], name: str, kind: str, aliases: tuple[str, ...]
) -> str:
    """choose_type, remembered: a corpus names the same things in chunk after chunk."""
    return choose_type(name, kind, _compiled_types(specs), aliases)


def relation_type_rules(template: Template) -> TypeRules:
    specs = tuple((t.name, tuple(t.patterns)) for t in template.relation_types)
    return _compiled_types(specs)


def choose_type(name: str, kind: str, rules: TypeRules, aliases: Sequence[str] = ()) -> str:
    """The template's patterns first (first match wins, tried on the name, then its aliases),
    then built-in rules by span kind.

    Names no pattern types all get one default type, whatever their shape: an acronym alone
    ("LSN") and its expansion ("Log Sequence Number") must come out alike in every chunk, or
    REDUCE, which groups by name and type, keeps them apart.
    `rules` comes from entity_type_rules(template), computed once per batch."""
    anything = rules.anything
    for candidate in (name, *aliases):
        if anything is not None and not anything.search(candidate):
            continue  # no type's pattern matches: one search instead of one per type
        for type_name, patterns in rules:
            if any(p.search(candidate) for p in patterns):
                return type_name
    names = [n for n, _ in rules]
    if not names:
        return "concept"
    if kind in _CODE_KINDS:
        preferred: tuple[str, ...] = ("component", "function", "setting", "technology", "tool")
    elif kind == "name" and _ORGANIZATION.search(name):
        preferred = ("organization", "company", "institution")
    else:
        preferred = ("concept", "term", "idea", "topic", "thing", "entity")
    lowered = {n.lower(): n for n in names}
    for want in preferred:
        if want in lowered:
            return lowered[want]
    return names[-1]


def is_generic_type(type_name: str) -> bool:
    return type_name.lower() in _GENERIC_TYPES
