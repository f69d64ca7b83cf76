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
from collections import defaultdict
from collections.abc import Collection, Iterable
from functools import lru_cache

from ..storage.records import Claim

MAX_CLAIMS_PER_TERM = 60  # enough to carry a page; more only slows the writer
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


def term_claims(
    terms: dict[int, list[str]], claims: Iterable[Claim], code_only: Collection[int] = ()
) -> dict[int, list[Claim]]:
    """For each term (key -> its lowercase spellings), the claims naming one of the spellings as
    whole words (plurals allowed), in claim id order, at most MAX_CLAIMS_PER_TERM.

    Keys in `code_only` were only ever seen as inline code: where the claims write the word
    plain more often than as code, only the claims writing it as code are the term's."""
    # Only the words of the terms are looked up: index those alone (most words of most claims
    # name no term, and a list per word of the KB costs more than the search).
    wanted = {f for spellings in terms.values() for s in spellings for w in s.split() for f in plural_forms(w)}
    index: dict[str, list[Claim]] = defaultdict(list)
    if wanted:
        for claim in sorted(claims, key=lambda c: c.id):
            for word in wanted.intersection(_WORD.findall(claim.text.lower())):
                index[word].append(claim)
    out: dict[int, list[Claim]] = {}
    for key, spellings in terms.items():
        hits: dict[str, Claim] = {}
        for spelling in spellings:
            words = spelling.split()
            # the rarest word's claims are the only candidates (the last word may be plural)
            candidates = min(
                ([c for form in (plural_forms(w) if n == len(words) - 1 else (w,)) for c in index.get(form, [])]
                 for n, w in enumerate(words)),
                key=len,
            )
            plain = _spelling_pattern(spelling, code=False)
            pattern = plain
            if key in code_only:
                code = _spelling_pattern(spelling, code=True)
                as_code = sum(len(code.findall(c.text)) for c in candidates)
                as_word = sum(len(plain.findall(c.text)) for c in candidates) - as_code
                if as_word > as_code:
                    pattern = code
            for claim in candidates:
                if claim.id not in hits and pattern.search(claim.text):
                    hits[claim.id] = claim
        if hits:
            out[key] = [hits[c] for c in sorted(hits)][:MAX_CLAIMS_PER_TERM]
    return out
