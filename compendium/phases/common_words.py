"""Names the corpus writes in lowercase: "Exception", "Frame" are "exception", "frame" there.

MAP sees one chunk: a word capitalised where a sentence, heading or class name begins looks
like a name. Across every claim of the corpus, a plain capitalised word written in lowercase
more often than capitalised is a common word, and its entity takes the lowercase spelling.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

_PLAIN_TITLE = re.compile(r"^[A-Z][a-z]+(?:-[a-z]+)*$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


_SLICE = 1 << 18  # characters split at once: no list of every word of a large text


def word_counts(text: str) -> Counter[str]:
    """The words of a text as written, counted (what corpus_spellings compares).

    Counted as `_WORD.findall(text)` would, from its whitespace-separated tokens: no word spans
    whitespace, so each distinct token is searched once, and most are one word already."""
    tokens: Counter[str] = Counter()
    start, end = 0, len(text)
    while start < end:
        cut = text.find("\n", start + _SLICE)  # slices end at a line break, never inside a token
        cut = end if cut < 0 else cut
        tokens.update(text[start:cut].split())
        start = cut
    out: Counter[str] = Counter()
    for token, n in tokens.items():
        if token.isalpha() and token.isascii():
            out[token] += n
        else:
            for word in _WORD.findall(token):
                out[word] += n
    return out


def spellings_from_counts(names: Sequence[str], counts: Callable[[str], int]) -> dict[int, str]:
    """Index -> lowercase spelling, for each plain capitalised name (one word, maybe hyphenated)
    that the corpus (`counts`: word as written -> occurrences) writes in lowercase more often."""
    return {i: n.lower() for i, n in enumerate(names) if _PLAIN_TITLE.match(n) and counts(n.lower()) > counts(n)}


def corpus_spellings(names: Sequence[str], texts: Iterable[str]) -> dict[int, str]:
    """spellings_from_counts over the words of `texts`."""
    counts = word_counts("\n".join(texts))
    return spellings_from_counts(names, lambda w: counts[w])
