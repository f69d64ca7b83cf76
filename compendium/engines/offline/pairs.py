"""REDUCE tier 3 and PLAN matching without a model: do two names denote one thing?

Rules, applied to the names and aliases of both sides after normalisation (lowercase,
punctuation dropped, hyphens and underscores as spaces, each word singular):

- type agreement: the types must be equal unless one is generic (concept, other, thing,
  entity, term, topic, or empty); otherwise the answer is no;
- digits: names that carry different numbers are different ("PostgreSQL 14" vs
  "PostgreSQL 15"), whatever the other rules say; so are names whose ends differ in
  underscores (`__abs__()` vs `abs()`, `_exit()` vs `exit()`);
- equal: the normalised names (or any alias of one and a name or alias of the other) are
  equal; this covers singular/plural ("Standby Server" / "standby servers");
- acronym: one side is an acronym (2-8 capitals) that abbreviates the other's name, every
  word giving its first letter, a word may give more letters, stop words may be skipped
  ("WAL" / "Write-Ahead Log", "MVCC" / "multiversion concurrency control");
- word order: the same words in another order, unless one is an identifier
  (`update_wrapper` / `WRAPPER_UPDATES`);
- spelling slip: one doubled letter more or less between plain words of 5 to 12 letters
  ("Postgres" / "Postgress"); never between acronyms, keywords or identifiers, and never
  an added word ("Relational ..." / "Object-Relational ...": a modifier makes another thing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...identifiers import is_identifier, other_identifiers
from ..tasks import EntitySketch, MatchQuestion, PairQuestion
from .names import acronym_matches, digits_of, is_acronym, is_generic_type, name_key

_LETTERS = re.compile(r"[^a-z0-9]")
EDIT_LENGTHS = (5, 12)


def judge_pairs(pairs: Iterable[PairQuestion]) -> dict[str, bool]:
    return {p.label: same_thing(p.a, p.b) for p in pairs}


def judge_matches(questions: Iterable[MatchQuestion]) -> dict[str, bool]:
    """A candidate matches a page when the page title names it by the same rules."""
    out: dict[str, bool] = {}
    for q in questions:
        page = EntitySketch(name=q.page_title, type="")
        out[q.label] = same_thing(q.candidate, page)
    return out


def same_thing(a: EntitySketch, b: EntitySketch) -> bool:
    if a.type != b.type and not (is_generic_type(a.type) or is_generic_type(b.type)):
        return False
    names_a = [n for n in (a.name, *a.aliases) if n.strip()]
    names_b = [n for n in (b.name, *b.aliases) if n.strip()]
    if not names_a or not names_b:
        return False
    if _digits_differ(a.name, b.name) or other_identifiers(a.name, b.name):
        return False
    return any(same_name(x, y) for x in names_a for y in names_b)


def same_name(x: str, y: str) -> bool:
    """One name against one name, by the rules in the module docstring."""
    if _digits_differ(x, y) or other_identifiers(x, y):
        return False
    kx, ky = name_key(x), name_key(y)
    if not kx or not ky:
        return False
    if kx == ky:
        return True
    if is_acronym(x.strip()) and not is_acronym(y.strip()):
        return acronym_matches(x.strip(), y)
    if is_acronym(y.strip()) and not is_acronym(x.strip()):
        return acronym_matches(y.strip(), x)
    if sorted(kx.split()) == sorted(ky.split()) and not (is_identifier(x) or is_identifier(y)):
        return True  # the same words in another order (not in an identifier: `update_wrapper` is no WRAPPER_UPDATES)
    # A spelling slip: one doubled letter more or less, in plain words of some length
    # ("Postgres" / "Postgress"). Any other one-letter difference is another name as often as
    # not ("ALTER ROLE" / "ALTER RULE", "int4" / "int8"), and so is an added word
    # ("Relational Database Management System" / "Object-Relational ...").
    if _plain_words(x) and _plain_words(y):
        px, py = _LETTERS.sub("", x.lower()), _LETTERS.sub("", y.lower())
        shorter, longer = sorted((px, py), key=len)
        if EDIT_LENGTHS[0] <= len(shorter) and len(longer) <= EDIT_LENGTHS[1]:
            return _doubled_letter(shorter, longer)
    return False


def _plain_words(name: str) -> bool:
    """Words of letters in ordinary case: not an acronym, keyword, identifier or number."""
    words = name.split()
    return bool(words) and all(w.isalpha() and not (w.isupper() and len(w) > 1) for w in words)


def _doubled_letter(shorter: str, longer: str) -> bool:
    if len(longer) != len(shorter) + 1:
        return False
    for i in range(len(longer)):
        if longer[:i] + longer[i + 1 :] == shorter:
            return (i > 0 and longer[i - 1] == longer[i]) or (i + 1 < len(longer) and longer[i + 1] == longer[i])
    return False


def _digits_differ(x: str, y: str) -> bool:
    dx, dy = digits_of(x), digits_of(y)
    return bool(dx or dy) and dx != dy
