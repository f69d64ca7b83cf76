"""Whether two groups' names could name one thing by what the sources show (REDUCE's guard on
tier-3 answers: a pair whose names meet nowhere is never merged)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .resolution import Evidence

_NAME_WORD = re.compile(r"[a-z0-9]+")
_FILLER = frozenset({"the", "and", "for", "with", "from", "into", "its", "their", "that", "this", "one", "two"})


def _words(name: str) -> set[str]:
    """A name's words of three letters or more, a plural's -s taken off, fillers left out."""
    out = set()
    for w in _NAME_WORD.findall(name.lower()):
        if len(w) >= 3 and w not in _FILLER:
            out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def _one_edit(x: str, y: str) -> bool:
    """Whether one letter added, dropped or changed turns x into y."""
    if abs(len(x) - len(y)) > 1:
        return False
    if len(x) == len(y):
        return sum(a != b for a, b in zip(x, y, strict=True)) <= 1
    short, long = (x, y) if len(x) < len(y) else (y, x)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def _initials(name: str) -> str:
    return "".join(w[0] for w in _NAME_WORD.findall(name.lower()) if w not in _FILLER)


def _one_common_word(names: list[str]) -> bool:
    """Every name is one plain word, not an acronym or code ("table", "Tuples")."""
    return bool(names) and all(n.strip().isalpha() and not n.strip().isupper() for n in names)


def _compounds(names: list[str]) -> bool:
    return bool(names) and all(len(n.split()) >= 2 for n in names)


def names_meet(a: Evidence, b: Evidence) -> bool:
    """Whether two groups' names could name one thing by what the sources show: a word in
    common ("Standby server" / "Hot Standby server"), one the initials of the other ("WAL" /
    "Write-Ahead Log"), or one named in the other's description ("... Log (WAL) is ...",
    "also known as the optimizer"). A model's "same" for names that meet nowhere (Vacuum /
    value, TOAST / transaction, as a small model answered) merges two things: it is not taken."""
    a_names, b_names = list(a.names), list(b.names)
    a_words = set().union(*(_words(n) for n in a_names)) if a_names else set()
    b_words = set().union(*(_words(n) for n in b_names)) if b_names else set()
    # A common word and compounds of it ("table" / "TOAST table", "index" / "full pass over the
    # index") share a word as a kind shares it with its cases: that is no sign they are one.
    kind_and_cases = (_one_common_word(a_names) and _compounds(b_names)) or (
        _one_common_word(b_names) and _compounds(a_names))
    if a_words & b_words and not kind_and_cases:
        return True
    for x in a_words if not kind_and_cases else ():  # one word spelled apart ("Postgres" / "Postgress")
        for y in b_words:
            if min(len(x), len(y)) >= 5 and (x.startswith(y) or y.startswith(x) or _one_edit(x, y)):
                return True
    for x in a_names:
        for y in b_names:
            bare_x, bare_y = re.sub(r"[^a-z]", "", x.lower()), re.sub(r"[^a-z]", "", y.lower())
            if (len(bare_x) >= 2 and bare_x == _initials(y)) or (len(bare_y) >= 2 and bare_y == _initials(x)):
                return True
    for names, descriptions in ((a_names, b.descriptions), (b_names, a.descriptions)):
        said = " ".join(descriptions).lower()
        if any(re.search(rf"(?<![\w-]){re.escape(n.lower())}(?![\w-])", said) for n in names if len(n) >= 2):
            return True
    return False


def adds_words(a: Evidence, b: Evidence) -> bool:
    """Whether one group's name is the other's with words added ("TOAST" / "TOAST table",
    "snapshot" / "snapshot records"): a modifier or a head makes another thing, however close
    a small embedder puts them."""
    wa, wb = _words(a.name), _words(b.name)
    return bool(wa) and bool(wb) and wa != wb and (wa < wb or wb < wa)
