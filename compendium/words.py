"""A text's words as the support checks compare them: content words, their light fold, sentences.

Pure and dependency-free: support.py and statements.py both read words by these rules.
"""

from __future__ import annotations

import re

# A citation marker [^3] (footnote definitions "[^3]:" are not citations).
CITE = re.compile(r"\[\^([^\]\s]+)\](?!:)")
LINK = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|([^\[\]\n]+?))?\]\]")
MD_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
_LETTERS = re.compile(r"[^\W_]", re.UNICODE)
_WORD = re.compile(r"[^\W_]+(?:[_.'-][^\W_]+)*", re.UNICODE)
# Abbreviations whose stop never ends a sentence ("e.g. vacuumdb", "cf. the WAL"). A stop inside
# a number ("2.1 billion") needs no rule: a sentence's stop is followed by a space or the end.
_ABBREVIATIONS = (r"(?i:\be\.g)", r"(?i:\bi\.e)", r"\bcf", r"\bvs")


def not_after_abbreviation(stop: str = "") -> str:
    """A pattern that fails where an abbreviation ends (followed by `stop`, a pattern): one
    fixed-width lookbehind each, to put before a sentence's stop, or after it with stop=r"\\."."""
    return "".join(f"(?<!{a}{stop})" for a in _ABBREVIATIONS)


# A sentence ends at . ! ? followed by its citations, then space or the end.
_STOP = re.compile(
    not_after_abbreviation() + r"[.!?](?:[ \t]*\[\^[^\]\s]+\])*(?=\s|$)|(?:\[\^[^\]\s]+\])+(?=\s*$)"
)

STOPWORDS = frozenset(
    """a about above after again against all also an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else
    etc every few for from further had has have having he her here hers him his how however i
    if in into is it its itself just may might more most much must no nor not now of off on
    once one only or other our ours out over own same shall she should so some such than that
    the their theirs them then there these they this those through thus to too under until up
    upon us very via was we were what when where whether which while who whom whose why will
    with within without would yet you your page section see called known used using uses use
    e.g i.e""".split()
)


def fold(word: str) -> str:
    """A word's comparable form: case folded, common English suffixes taken off (light)."""
    w = word.casefold().strip("'")
    if len(w) <= 3 or not w.isalpha():
        return w
    for suffix in ("ational", "ization", "ations", "ation", "ments", "ment", "ness", "ings", "ing",
                   "edly", "ies", "ied", "ers", "er", "ed", "es", "ly", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            stem = w[: -len(suffix)]
            if suffix in ("ies", "ied"):
                stem += "y"
            return stem
    return w


def content_words(text: str) -> set[str]:
    """The folded content words of a text: no stopwords, no one-letter words, links as their text."""
    text = CITE.sub(" ", text)
    text = LINK.sub(lambda m: f" {m.group(2) or m.group(1)} ", text)
    text = MD_LINK.sub(lambda m: f" {m.group(1)} ", text)
    out = set()
    for match in _WORD.finditer(text):
        word = match.group(0)
        lower = word.casefold()
        if lower in STOPWORDS or (len(lower) < 2 and not lower.isdigit()):
            continue
        out.add(fold(word))
        if any(ch in word for ch in "_.-'"):  # max_wal_size also as its parts
            out.update(fold(p) for p in re.split(r"[_.'-]", word) if len(p) > 1 and p.casefold() not in STOPWORDS)
    return out


def overlap(sentence: str | set[str], evidence: str | set[str]) -> float:
    """The share of the sentence's content words the evidence holds (1.0 when it has none)."""
    words = sentence if isinstance(sentence, set) else content_words(sentence)
    if not words:
        return 1.0
    held = evidence if isinstance(evidence, set) else content_words(evidence)
    return len(words & held) / len(words)


def split_sentences(line: str) -> list[str]:
    """A line of prose cut after each sentence's stop and the citations that follow it."""
    out: list[str] = []
    at = 0
    for match in _STOP.finditer(line):
        _take(out, line[at : match.end()])
        at = match.end()
    if line[at:].strip():
        _take(out, line[at:])
    return out


def _take(out: list[str], piece: str) -> None:
    """A piece of markers and stops only ("[^4]." after "... [^3]") joins the sentence before it."""
    if out and not _LETTERS.search(CITE.sub("", piece)):
        out[-1] += piece
    else:
        out.append(piece)
