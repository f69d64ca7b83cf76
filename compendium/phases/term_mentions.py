"""Defined terms found in every claim of the knowledge base, not only where MAP named them.

MAP reads one chunk at a time: a plain lowercase word ("checkpoint", "decorator") is a term
only in the chunk that defines it, so elsewhere it is never a mention and the term's page has
one chunk behind it. Once REDUCE knows the defined terms of the whole corpus, the claims that
name them as whole words are theirs too.

A term MAP only ever met as inline code (`current`, `always`) that the corpus mostly writes as
a plain word ("the current row") is a name only where it is written as code: the plain word
is English, not a mention.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from typing import Any

from ..engines.offline.whole_words import caseless, count_code, count_words
from ..storage.records import Claim

MAX_CLAIMS_PER_TERM = 60  # enough to carry a page; more only slows the writer
_SPLIT_ALL = 32  # words searched for, past which every claim is split into words instead
_WORD = re.compile(r"[a-z][a-z-]*")
_TERM = re.compile(r"^[a-z][a-z-]{2,}(?: [a-z][a-z-]+){0,2}$")


def is_term(name: str) -> bool:
    """A lowercase term of one to three plain words ("checkpoint", "logical replication")."""
    return bool(_TERM.match(name)) and len(name) >= 4


def plural_forms(word: str) -> tuple[str, ...]:
    """The word and its plurals: -s, -es (indexes, processes), -ies (dictionaries)."""
    forms = [word, word + "s", word + "es"]
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        forms.append(word[:-1] + "ies")
    return tuple(forms)


@lru_cache(maxsize=8192)
def _spelling_pattern(spelling: str, code: bool) -> re.Pattern[str]:
    if spelling.endswith("y") and len(spelling) > 2 and spelling[-2] not in "aeiou":
        word = rf"{re.escape(spelling[:-1])}(?:y|ies)"
    else:
        word = rf"{re.escape(spelling)}(?:s|es)?"
    if code:
        return re.compile(rf"`{word}(?:\(\))?`", re.IGNORECASE)
    return re.compile(rf"(?<![\w-]){word}(?![\w-])", re.IGNORECASE)


@lru_cache(maxsize=8192)
def _spelling_parts(spelling: str) -> tuple[str, tuple[str, ...]] | None:
    """(stem, its endings in the order _spelling_pattern tries them) of an ASCII spelling, which
    whole_words finds in a caseless text where the pattern finds it; None for others."""
    if not spelling or not spelling.isascii():
        return None
    if spelling.endswith("y") and len(spelling) > 2 and spelling[-2] not in "aeiou":
        return spelling[:-1].lower(), ("y", "ies")
    return spelling.lower(), ("s", "es", "")


def _mentions(spelling: str, text: str, lower: str | None) -> tuple[int, int]:
    """How often the text names the spelling as whole words, and how often as inline code;
    `lower` is caseless(text)."""
    parts = _spelling_parts(spelling)
    if parts is not None and lower is not None:
        # what the patterns find, without a pattern to compile per spelling
        found = count_words(lower, *parts)
        return found, count_code(lower, *parts) if found and "`" in text else 0
    found = len(_spelling_pattern(spelling, code=False).findall(text))
    return found, len(_spelling_pattern(spelling, code=True).findall(text)) if found and "`" in text else 0


_OPENING = re.compile(r"^(?:(?:the|a|an|this|each|every|all|both|any|some)\s+)?[`*\"'“(]*", re.IGNORECASE)


def opens_with(spelling: str, text: str) -> bool:
    """Whether the claim's grammatical subject is the spelling: the claim opens with it (or its
    plural), after at most an article or determiner and markup. A claim that only mentions a
    term elsewhere is the term's mention, not its fact: it stays on its own subject's page."""
    lower = text.lower()
    start = _OPENING.match(lower)
    at = start.end() if start else 0
    for form in plural_forms(spelling.lower()):
        if lower.startswith(form, at):
            after = lower[at + len(form) : at + len(form) + 1]
            if not after or not (after.isalnum() or after in "_-"):
                return True
    return False


def claim_words(text: str) -> set[str]:
    """The lowercase words of a claim, as terms are looked up."""
    return set(_WORD.findall(text.lower()))


# The only characters besides A-Z, a-z, ' and - whose lowercase holds one of a-z or -: in a text
# without them, the lowercase words are those of its words as written (common_words), lowered.
_LOWER_TO_ASCII = ("\u0130", "\u212a")  # capital I with dot, Kelvin sign


def lowercase_counts(text: str, written: Counter[str]) -> Counter[str]:
    """How often each lowercase word (as claim_words finds them) occurs in text, from `written`,
    its words as written counted (common_words.word_counts): a pass over the words, not the text."""
    if any(c in text for c in _LOWER_TO_ASCII):
        return Counter(_WORD.findall(text.lower()))
    out: Counter[str] = Counter()
    for word, n in written.items():
        for part in _WORD.findall(word.lower()):
            out[part] += n
    return out


def could_name(spelling: str, words: Callable[[str], int]) -> bool:
    """Whether any claim can name the spelling, from `words` (occurrences of each lowercase word):
    each of its words must occur (the last in any plural form)."""
    parts = spelling.split()
    return all(
        sum(words(f) for f in (plural_forms(w) if n == len(parts) - 1 else (w,))) > 0 for n, w in enumerate(parts)
    )


@dataclass
class SpellingHits:
    """The claims naming one spelling: as a plain word (`plain`) and as inline code (`code`), and
    how often the claims among them write it each way (what decides a code-only term)."""

    plain: set[str] = field(default_factory=set)
    code: set[str] = field(default_factory=set)
    as_code: int = 0
    as_word: int = 0

    def add(self, claim_id: str, text: str, spelling: str, sign: int = 1) -> None:
        if opens_with(spelling, text):
            self.add_counts(claim_id, *_mentions(spelling, text, caseless(text)), sign)

    def add_counts(self, claim_id: str, found: int, code: int, sign: int = 1) -> None:
        """A claim naming the spelling `found` times, `code` of them as inline code (see _mentions)."""
        if not found:
            return
        self.as_code += sign * code
        self.as_word += sign * (found - code)
        (self.plain.add if sign > 0 else self.plain.discard)(claim_id)
        if code:
            (self.code.add if sign > 0 else self.code.discard)(claim_id)

    def chosen(self, code_only: bool) -> set[str]:
        """A code-only term that the claims write plain more often than as code is a name only as code."""
        return self.code if code_only and self.as_word > self.as_code else self.plain

    def to_json(self) -> dict[str, Any]:
        return {"p": sorted(self.plain), "k": sorted(self.code), "a": self.as_code, "w": self.as_word}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SpellingHits:
        return cls(set(value["p"]), set(value["k"]), value["a"], value["w"])


def _holding(claims: Iterable[Claim], words: Collection[str]) -> list[Claim]:
    """The claims whose lowercase text holds one of `words` anywhere (those naming one as a whole
    word are among them), in their order: a search of all the text per word, where splitting
    every claim into words would cost a pass over each."""
    claims = list(claims)
    lowered = [c.text.lower() for c in claims]
    text = "\n".join(lowered)
    starts = list(accumulate((len(t) + 1 for t in lowered), initial=0))
    found: set[int] = set()
    for word in {w for w in words if not any(v != w and v in w for v in words)}:  # "index" finds "indexes"
        at = text.find(word)
        while at >= 0:
            n = bisect_right(starts, at) - 1
            found.add(n)
            at = text.find(word, starts[n + 1])  # on to the next claim
    return [claims[n] for n in sorted(found)]


def spelling_hits(spellings: Collection[str], claims: Iterable[Claim]) -> dict[str, SpellingHits]:
    """For each spelling, the claims among `claims` naming it as whole words (plurals allowed)."""
    # Only the words of the spellings are looked up: index those alone (most words of most claims
    # name no term, and a list per word of the KB costs more than the search).
    wanted = {f for s in spellings for w in s.split() for f in plural_forms(w)}
    index: dict[str, list[Claim]] = defaultdict(list)
    lowered: dict[int, str | None] = {}  # id(claim) -> caseless(claim.text), made once per claim
    if wanted:
        # A search of the text costs about what splitting every claim into words does over
        # _SPLIT_ALL words: a whole compile's thousands of words split instead.
        holding = list(claims) if len(wanted) > _SPLIT_ALL else _holding(claims, wanted)
        for claim in holding:
            lower = lowered[id(claim)] = caseless(claim.text)
            for word in wanted.intersection(_WORD.findall(claim.text.lower() if lower is None else lower)):
                index[word].append(claim)
    out: dict[str, SpellingHits] = {}
    for spelling in spellings:
        words = spelling.split()
        # the rarest word's claims are the only candidates (the last word may be plural)
        candidates = min(
            ({c.id: c for form in (plural_forms(w) if n == len(words) - 1 else (w,)) for c in index.get(form, [])}
             for n, w in enumerate(words)),
            key=len,
        )
        hits = out[spelling] = SpellingHits()
        for claim in candidates.values():
            if opens_with(spelling, claim.text):
                hits.add_counts(claim.id, *_mentions(spelling, claim.text, lowered[id(claim)]))
    return out


def term_window(spellings: Iterable[str], hits: dict[str, SpellingHits], code_only: bool) -> list[str]:
    """The ids of the claims a term gathers, in id order, at most MAX_CLAIMS_PER_TERM."""
    found: set[str] = set()
    for s in spellings:
        found |= hits[s].chosen(code_only)
    return sorted(found)[:MAX_CLAIMS_PER_TERM]


def term_claims(
    terms: dict[int, list[str]], claims: Iterable[Claim], code_only: Collection[int] = ()
) -> dict[int, list[Claim]]:
    """For each term (key -> its lowercase spellings), the claims naming one of the spellings as
    whole words (plurals allowed), in claim id order, at most MAX_CLAIMS_PER_TERM.

    Keys in `code_only` were only ever seen as inline code: where the claims write the word
    plain more often than as code, only the claims writing it as code are the term's."""
    by_id = {c.id: c for c in claims}
    hits = spelling_hits({s for spellings in terms.values() for s in spellings}, by_id.values())
    out: dict[int, list[Claim]] = {}
    for key, spellings in terms.items():
        window = term_window(spellings, hits, key in code_only)
        if window:
            out[key] = [by_id[c] for c in window]
    return out
