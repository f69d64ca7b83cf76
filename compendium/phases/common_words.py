"""Names the corpus writes in lowercase: "Exception", "Frame" are "exception", "frame" there.

MAP sees one chunk: a word capitalised where a sentence, heading or class name begins looks
like a name. Across every claim of the corpus, a plain capitalised word written in lowercase
more often than capitalised is a common word, and its entity takes the lowercase spelling.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

_PLAIN_TITLE = re.compile(r"^[A-Z][a-z]+(?:-[a-z]+)*$")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def corpus_spellings(names: Sequence[str], texts: Iterable[str]) -> dict[int, str]:
    """Index -> lowercase spelling, for each plain capitalised name (one word, maybe hyphenated)
    that `texts` write in lowercase more often than as written."""
    wanted = {i: n for i, n in enumerate(names) if _PLAIN_TITLE.match(n)}
    if not wanted:
        return {}
    counts = Counter(_WORD.findall("\n".join(texts)))
    return {i: n.lower() for i, n in wanted.items() if counts[n.lower()] > counts[n]}

