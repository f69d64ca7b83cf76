"""Key phrases scored by frequency and length, and terms defined by a sentence."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .definitions import API_KIND_DOES
from .names import Span, singular
from .words import (
    BOILERPLATE,
    FUNCTION_WORDS,
    GENERIC_HEADS,
    NUMBER_WORDS,
    PARTICIPLE_PREPOSITIONS,
    SENTENCE_STARTERS,
    VERBS,
    WEAK_MODIFIERS,
)

_TOKEN = re.compile(r"([^A-Za-z0-9]*)([A-Za-z0-9]+(?:'[A-Za-z0-9]+)*)")
_MAX_PHRASES = 8
_PHRASE_WORDS = (2, 3)


@dataclass(slots=True)
class Mention:
    start: int
    end: int
    key: str


@dataclass(slots=True)
class Word:
    key: str  # lowercase, singular: matches names.name_key token by token
    lower: str
    start: int
    end: int
    capital: bool
    joined: bool  # only whitespace or a hyphen separates it from the previous word
    plain: bool  # a lowercase-able content word: may sit inside a key phrase


@lru_cache(maxsize=65536)
def _word_info(raw: str) -> tuple[str, str, bool, bool, bool]:
    """(key, lower, plain, capitalised, capitalised only at its first letter) of a word."""
    lower = raw.lower().replace("'", "")
    plain = (
        lower.isalpha() and len(lower) > 1 and lower not in FUNCTION_WORDS and lower not in VERBS
    )
    capital = raw[0].isupper()
    return singular(lower), lower, plain, capital, capital and raw[1:].islower()


@lru_cache(maxsize=4096)
def _joins(gap: str) -> bool:
    return gap in (" ", "", "-") or not gap.strip(" -")


def word_tokens(text: str, mid_caps: set[str] | frozenset[str] = frozenset()) -> list[Word]:
    """Words split the way name_key splits names (hyphens and underscores separate words).

    The first word counts as lowercase when it is capitalised only because it opens the
    sentence (not capitalised anywhere else in the text, per `mid_caps`).
    """
    words: list[Word] = []
    # Each match starts where the one before ended (its gap takes every character up to the
    # next word), so positions are running sums: no match objects needed.
    end = 0
    for gap, raw in _TOKEN.findall(text):
        key, lower, plain, capital, title = _word_info(raw)
        start = end + len(gap)
        end = start + len(raw)
        if words:
            words.append(Word(key, lower, start, end, capital, _joins(gap), plain))
        else:
            words.append(Word(key, lower, start, end, capital and not (title and raw not in mid_caps), False, plain))
    return words


def key_phrases(
    texts: list[str], tokens: list[list[Word]], mentions: list[list[Mention]], headings: str
) -> list[str]:
    """Multi-word lowercase noun phrases worth a concept: frequent in the chunk, or headings.

    A candidate is a run of words with no function word, verb, punctuation or name inside it;
    its two- and three-word windows are counted once per sentence. A phrase needs two
    sentences (or a heading) behind it; a shorter phrase that never occurs outside a kept longer
    one is dropped. Score: sentences × (1 + 0.3 × extra words).
    """
    seen: dict[str, list] = {}  # key -> [sentences, text, first position]
    order = 0
    for i, words in enumerate(tokens):
        taken = [(m.start, m.end) for m in mentions[i]]
        in_sentence: set[str] = set()
        for run, counted in _runs(words, taken):
            for n in _PHRASE_WORDS:
                for j in range(len(run) - n + 1):
                    window = run[j : j + n]
                    # a run after a numeral measures ("16 kilobyte pages"): its first words name nothing
                    if (j == 0 and counted) or not _phrase_shape(window) or _measures(window, texts[i]) \
                            or _cut_out(window, texts[i]):
                        continue
                    key = " ".join(w.key for w in window)
                    if key in in_sentence:
                        continue
                    in_sentence.add(key)
                    entry = seen.get(key)
                    if entry is None:
                        text = texts[i][window[0].start : window[-1].end]
                        if text[:1].isupper():  # capitalised only as the sentence's first word
                            text = text[0].lower() + text[1:]
                        seen[key] = [1, text, order]
                        order += 1
                    else:
                        entry[0] += 1
    kept = {k: v for k, v in seen.items() if v[0] >= 2 or (headings and v[1].lower() in headings)}
    longer = sorted(kept, key=lambda k: -len(k))
    for key in list(kept):
        padded = f" {key} "
        if any(
            len(other) > len(key) and padded in f" {other} " and kept[other][0] >= kept[key][0]
            for other in longer
        ):
            del kept[key]
    scored = sorted(
        kept.items(), key=lambda kv: (-kv[1][0] * (1 + 0.3 * (len(kv[0].split()) - 1)), kv[1][2])
    )
    return [v[1] for _, v in scored[:_MAX_PHRASES]]


def _runs(words: list[Word], taken: list[tuple[int, int]]) -> list[tuple[list[Word], bool]]:
    """Runs of words a key phrase may be cut from, each with whether a number counts it (the
    word before the run is a numeral: "200 million transactions", "16 kilobyte pages")."""
    runs: list[tuple[list[Word], bool]] = []
    current: list[Word] = []
    counted = False
    previous: Word | None = None
    for word in words:
        usable = (
            word.plain
            and not word.capital
            and not (taken and any(s < word.end and word.start < e for s, e in taken))
        )
        if usable and current and word.joined:
            current.append(word)
            previous = word
            continue
        if len(current) >= 2:
            runs.append((current, counted))
        current = [word] if usable else []
        counted = usable and previous is not None and word.joined and previous.lower.isdigit()
        previous = word
    if len(current) >= 2:
        runs.append((current, counted))
    return runs


def _measures(window: list[Word], text: str) -> bool:
    """A quantity, not a name: "million transactions", "three replicas" (but "two-phase commit")."""
    return any(w.lower in NUMBER_WORDS and text[w.end : w.end + 1] != "-" for w in window)


def _cut_out(window: list[Word], text: str) -> bool:
    """Whether the phrase ends or starts inside a dotted name or a hyphened compound: "valid sys"
    of "a valid sys.path entry", "exception asyncio" of "exception asyncio.TimeoutError", "time
    compilation" of "just-in-time compilation". Its words are part of something longer."""
    after = text[window[-1].end : window[-1].end + 2]
    before = text[max(0, window[0].start - 2) : window[0].start]
    return (len(after) == 2 and after[0] in ".-" and (after[1].isalnum() or after[1] == "_")) or \
        (len(before) == 2 and before[1] in ".-" and (before[0].isalnum() or before[0] == "_"))


def _phrase_shape(window: list[Word]) -> bool:
    head = window[-1].lower
    if head in PARTICIPLE_PREPOSITIONS or len({w.key for w in window}) < len(window):
        return False  # "object representing", "instance instance"
    # a plural or -s word inside a phrase is nearly always a verb ("server demands password")
    if any(w.lower != w.key for w in window[:-1]):
        return False
    if head in GENERIC_HEADS or head.endswith("ly") or head in WEAK_MODIFIERS:
        return False
    if len(head) > 4 and head.endswith("ed") and not head.endswith("eed"):
        return False  # a participle closes a clause ("exception raised"), never heads a name
    if window[0].lower in WEAK_MODIFIERS or window[0].lower.endswith("ly"):
        return False
    return not any(w.lower in BOILERPLATE for w in window)


# "A checkpoint is a ...", "The WAL (write-ahead log) refers to ...", "X, also called Y, is the ..."
_DEFINES = re.compile(
    r"^(?:(?:An?|The)\s+)?(?P<term>[^\s,;:()][^,;:()]{0,58}?)\s*(?:\([^)]{1,60}\))?"
    r"(?:,\s*(?:or|also\s+called|also\s+known\s+as)\s+[^,]{1,80},)?"
    r"\s+(?P<verb>is|are|refers?\s+to|means|denotes|is\s+defined\s+as|stands\s+for)\s+(?P<rest>\S.*)$"
)
_WHICH = re.compile(
    r"^(?:(?:An?|The)\s+)?(?P<term>[^\s,;:()][^,;:()]{0,58}?)\s*(?:\([^)]{1,60}\))?,\s+which\s+(?:is|are)\s+(?:an?|the)\s"
)
_DEFINITE_REST = re.compile(r"^(?:an?|the|one|any|used|responsible|similar|a\s+kind|a\s+type)\b")


# An API reference's "The `pam_start` function creates ...", "The `json` module provides ...": what
# the code name is, by its kind and what it does.
_API_DEFINES = re.compile(r"^The\s+`(?P<term>[A-Za-z_][\w.:]*(?:\(\))?)`\s+" + API_KIND_DOES)


def definition_of(sentence: str, spans: list[Span], mid_caps: set[str]) -> str | None:
    """The term a definitional sentence defines, as written (or lowercased if it is only
    capitalised because it opens the sentence), else None."""
    api = _API_DEFINES.match(sentence)
    if api is not None:
        return api.group("term").removesuffix("()")
    m = _DEFINES.match(sentence)
    if m and m.group("verb") in ("is", "are") and not _DEFINITE_REST.match(m.group("rest")):
        m = None
    if m is None:
        m = _WHICH.match(sentence)
    if m is None:
        return None
    term = m.group("term").strip().strip("*`\"'“”")
    start = m.start("term")
    for span in spans:
        if span.start <= start + 2 and span.text == term:
            return span.text
    words = term.split()
    if not 1 <= len(words) <= 5:
        return None
    lowered = [w.lower() for w in words]
    if lowered[0] in SENTENCE_STARTERS or lowered[0] in BOILERPLATE:
        return None
    if len(words) > 1 and (lowered[0] in WEAK_MODIFIERS or lowered[-1] in PARTICIPLE_PREPOSITIONS):
        return None  # "The following code is an example": which code is not said
    if any(w in VERBS for w in lowered) or all(w in FUNCTION_WORDS for w in lowered):
        return None
    if any(w in FUNCTION_WORDS and w not in ("of", "for") for w in lowered[1:]):
        return None  # a clause ("Keeping the Visibility Map current is ..."), not a term
    if len(words) == 1 and (len(term) < 4 or lowered[0] in GENERIC_HEADS or not term.isalpha()):
        return None
    if lowered[-1] in GENERIC_HEADS:
        return None
    first = words[0]
    if start == 0 or sentence[:start].strip() in ("A", "An", "The"):
        if first[:1].isupper() and first[1:].islower() and first not in mid_caps:
            term = first.lower() + term[len(first) :]
    return term
