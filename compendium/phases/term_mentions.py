"""Defined terms found in every claim of the knowledge base, not only where MAP named them.

MAP reads one chunk at a time: a plain lowercase word ("checkpoint", "decorator") is a term
only in the chunk that defines it, so elsewhere it is never a mention and the term's page has
one chunk behind it. Once REDUCE knows the defined terms of the whole corpus, the claims that
name them as whole words are theirs too.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from ..storage.records import Claim

MAX_CLAIMS_PER_TERM = 60  # enough to carry a page; more only slows the writer
_WORD = re.compile(r"[a-z][a-z-]*")
_TERM = re.compile(r"^[a-z][a-z-]{2,}(?: [a-z][a-z-]+){0,2}$")


def is_term(name: str) -> bool:
    """A lowercase term of one to three plain words ("checkpoint", "logical replication")."""
    return bool(_TERM.match(name)) and len(name) >= 4


def term_claims(terms: dict[int, list[str]], claims: Iterable[Claim]) -> dict[int, list[Claim]]:
    """For each term (key -> its lowercase spellings), the claims naming one of the spellings as
    whole words (a plural s allowed), in claim id order, at most MAX_CLAIMS_PER_TERM."""
    # Only the words of the terms are looked up: index those alone (most words of most claims
    # name no term, and a list per word of the KB costs more than the search).
    wanted = {w + plural for spellings in terms.values() for s in spellings for w in s.split() for plural in ("", "s")}
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
            # the rarest word's claims are the only candidates
            candidates = min((index.get(w, []) + index.get(w + "s", []) for w in words), key=len)
            pattern = re.compile(rf"(?<![\w-]){re.escape(spelling)}(?:s|es)?(?![\w-])", re.IGNORECASE)
            for claim in candidates:
                if claim.id not in hits and pattern.search(claim.text):
                    hits[claim.id] = claim
        if hits:
            out[key] = [hits[c] for c in sorted(hits)][:MAX_CLAIMS_PER_TERM]
    return out
