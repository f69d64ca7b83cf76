"""A chunk's claims: the sentences that state a fact, each naming only the subjects it is about."""

from __future__ import annotations

import re

from ..tasks import ClaimItem
from .sentences import starts_mid_sentence
from .words import BOILERPLATE, FUNCTION_WORDS, VERBS

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_CLAIM_WORDS = (5, 70)


def is_claim_sentence(text: str) -> bool:
    """Informative prose: bounded length, ends like a sentence, has a verb, not a question."""
    words = _WORD.findall(text)
    if not _CLAIM_WORDS[0] <= len(words) <= _CLAIM_WORDS[1]:
        return False
    if text.endswith(("?", ":", ",", ";")) or text[-1:] not in ".!)\"'”`":
        return False
    if text.count("`") > 6 or text.count("=") > 1 or starts_mid_sentence(text):
        return False
    lower = [w.lower() for w in words]
    if lower[0] in BOILERPLATE and len(lower) < 8:
        return False
    content = [w for w in lower if w not in FUNCTION_WORDS]
    if len(content) < 3:
        return False
    return any(w in VERBS or (len(w) > 4 and w.endswith("ed")) for w in lower)


def claim_items(label: str, sentences, claim_like, about: list[list[str]], names, limit: int) -> list[ClaimItem]:
    """The chunk's claim sentences, each naming only the subjects it is about, in text order."""
    out = []
    for i, sentence in enumerate(sentences):
        if not claim_like[i]:
            continue
        subjects = [names[k] for k in about[i] if k in names]
        if subjects:
            out.append(ClaimItem(chunk=label, text=sentence.text, entities=list(dict.fromkeys(subjects))))
        if len(out) >= limit:
            break
    return out
