"""Merges many descriptions of one thing into one, extractively: sentences kept verbatim."""

from __future__ import annotations

import re

from ..tasks import DescriptionRequest
from .definitions import Definer
from .names import name_key
from .sentences import split_sentences
from .words import FUNCTION_WORDS

NEAR_DUPLICATE = 0.8  # token Jaccard at or above which two sentences say the same thing
_WORD = re.compile(r"[a-z0-9]+")
_DEFINES = re.compile(r"\b(?:is|are|refers?\s+to|means|denotes|stands\s+for)\b")


def content_tokens(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower())) - FUNCTION_WORDS


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def summarize(request: DescriptionRequest) -> str:
    """The most informative distinct sentences of the descriptions, within max_chars.

    Near-duplicates (token Jaccard ≥ 0.8) count as support for the first one instead of being
    repeated. Ranking: a sentence that defines the name first, then support, then the number
    of distinct content words, then the order given.
    """
    kept: list[dict] = []
    for description in request.descriptions:
        for sentence in split_sentences(description):
            tokens = content_tokens(sentence)
            if not tokens:
                continue
            twin = next((k for k in kept if jaccard(k["tokens"], tokens) >= NEAR_DUPLICATE), None)
            if twin is not None:
                twin["support"] += 1
                continue
            kept.append({"text": sentence, "tokens": tokens, "support": 1, "order": len(kept)})
    if not kept:
        return ""
    subject = set(name_key(request.name).split())
    definer = Definer([request.name])

    def rank(k: dict) -> tuple:
        lowered = k["text"].lower()
        if definer.defines(k["text"]):  # "X is a ...", "`X`: what it is": the authors' definition
            return (0, -k["support"], -min(len(k["tokens"]), 25), k["order"])
        defines = (
            bool(subject)
            and subject <= set(name_key(lowered).split())
            and bool(_DEFINES.search(lowered))
        )
        return (1 if defines else 2, -k["support"], -min(len(k["tokens"]), 25), k["order"])

    chosen: list[dict] = []
    length = 0
    for k in sorted(kept, key=rank):
        extra = len(k["text"]) + (1 if chosen else 0)
        if length + extra <= request.max_chars:
            chosen.append(k)
            length += extra
    if not chosen:  # even the best sentence is too long: cut it at a word boundary
        best = sorted(kept, key=rank)[0]["text"]
        return best[: request.max_chars].rsplit(" ", 1)[0].rstrip(",;:")
    # read in the order they were given, the defining sentence first
    first = chosen[0]
    rest = sorted(chosen[1:], key=lambda k: k["order"])
    return " ".join(k["text"] for k in [first, *rest])
