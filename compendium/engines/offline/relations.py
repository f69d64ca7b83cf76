"""Chooses a relation type from the cue words between two names in a sentence."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .names import TypeRules


@dataclass(frozen=True, slots=True)
class Cue:
    pattern: re.Pattern[str]
    relation: str  # our own name for the relation
    reverse: bool  # the cue reads target-first ("is used by")


def _cue(pattern: str, relation: str, reverse: bool = False) -> Cue:
    return Cue(re.compile(rf"\b(?:{pattern})\b"), relation, reverse)


# Checked in order; reversed forms come before the forward forms they contain.
CUES: tuple[Cue, ...] = (
    _cue(r"(?:is|are)\s+(?:a\s+|an\s+)?(?:kind|type|form|variant|subclass)s?\s+of", "is_a"),
    _cue(
        r"(?:is|are)\s+(?:a\s+|an\s+|the\s+)?(?:part|component|member|subset|piece)s?\s+of|belongs?\s+to|within|inside",
        "part_of",
    ),
    _cue(
        r"contains?|includes?|consists?\s+of|comprises?|is\s+made\s+up\s+of|is\s+composed\s+of",
        "part_of",
        True,
    ),
    _cue(r"required\s+by|needed\s+by", "depends_on", True),
    _cue(r"depends?\s+on|requires?|relies\s+on|rely\s+on|needs?", "depends_on"),
    _cue(r"implemented\s+by", "implements", True),
    _cue(r"implements?|(?:is|are)\s+(?:an\s+)?implementations?\s+of|realizes?", "implements"),
    _cue(
        r"extends?|inherits?\s+from|(?:is|are)\s+based\s+on|builds?\s+on|derived\s+from", "extends"
    ),
    _cue(r"replaces?|supersedes?|instead\s+of", "replaces"),
    _cue(r"used\s+by", "uses", True),
    _cue(r"uses?|using|utili[sz]es?|employs?|leverages?|via|through", "uses"),
    _cue(r"configures?|controls?|determines?|governs?|limits?|sets", "configures"),
    _cue(r"created\s+by|generated\s+by|produced\s+by|written\s+by", "produces", True),
    _cue(r"creates?|generates?|produces?|writes?|emits?|spawns?|launches", "produces"),
    _cue(r"stored\s+in|kept\s+in|held\s+in|recorded\s+in", "stores", True),
    _cue(r"stores?|holds?|records?|keeps?|caches?", "stores"),
    _cue(r"reads?|scans?|queries|loads?|fetches", "reads"),
    _cue(r"calls?|invokes?", "calls"),
    _cue(r"connects?\s+to|communicates?\s+with|sends?\s+to", "connects_to"),
    _cue(r"manages?|monitors?|handles?|coordinates?|supervises?", "manages"),
    _cue(r"protects?|prevents?|guards?\s+against", "protects"),
)

_ANY_CUE = re.compile("|".join(f"(?P<c{i}>{cue.pattern.pattern})" for i, cue in enumerate(CUES)))
# Every cue starts a word with a lowercase letter: only there is _ANY_CUE tried (searching it
# tried all its branches at every character, three times the cost).
_WORD_START = re.compile(r"(?<!\w)[a-z]")

# Template relation names that can stand for each of our relations; True flips direction.
_SYNONYMS: dict[str, tuple[tuple[str, bool], ...]] = {
    "is_a": (
        ("is_a", False),
        ("instance_of", False),
        ("type_of", False),
        ("kind_of", False),
        ("subtype_of", False),
    ),
    "part_of": (
        ("part_of", False),
        ("member_of", False),
        ("belongs_to", False),
        ("component_of", False),
        ("contains", True),
        ("has_part", True),
        ("includes", True),
    ),
    "depends_on": (
        ("depends_on", False),
        ("requires", False),
        ("needs", False),
        ("relies_on", False),
        ("uses", False),
    ),
    "implements": (("implements", False), ("realizes", False), ("implemented_by", True)),
    "extends": (
        ("extends", False),
        ("based_on", False),
        ("derived_from", False),
        ("inherits_from", False),
    ),
    "replaces": (("replaces", False), ("supersedes", False)),
    "uses": (("uses", False), ("depends_on", False), ("used_by", True)),
    "configures": (("configures", False), ("controls", False), ("affects", False)),
    "produces": (("produces", False), ("creates", False), ("generates", False), ("writes", False)),
    "stores": (("stores", False), ("writes", False), ("contains", False)),
    "reads": (("reads", False), ("uses", False)),
    "calls": (("calls", False), ("invokes", False), ("uses", False)),
    "connects_to": (("connects_to", False), ("communicates_with", False)),
    "manages": (("manages", False), ("controls", False)),
    "protects": (("protects", False), ("prevents", False)),
}

_LEADING = frozenset({"and", "or", "but", "then", "also", "while"})
_TRAILING = frozenset(
    {"the", "a", "an", "its", "their", "this", "these", "each", "every", "all", "and", "or"}
)
_PARENTHESES = re.compile(r"\([^()]*\)|\(|\)")
_EDGE = re.compile(r"^[\s,;:()\-–—]+|[\s,;:()\-–—]+$")


@dataclass(frozen=True, slots=True)
class Typed:
    type: str
    reverse: bool
    cued: bool  # a cue word (not the fallback) chose the type


_REMEMBERED = 1 << 16  # answers kept per rules; past that they are forgotten and start again


def relation_type(between: str, rules: TypeRules) -> Typed:
    """Type of the relation between two names from the words that separate them.

    `rules` comes from relation_type_rules(template), computed once per batch."""
    typed = rules.typed.get(between)
    if typed is None:
        if len(rules.typed) >= _REMEMBERED:
            rules.typed.clear()
        typed = rules.typed[between] = _relation_type(between, rules)
    return typed  # type: ignore[return-value]


def _relation_type(between: str, rules: TypeRules) -> Typed:
    anything = getattr(rules, "anything", None)
    if anything is None or anything.search(between):
        for name, patterns in rules:
            if any(p.search(between) for p in patterns):
                return Typed(name, False, True)
    allowed = [name for name, _ in rules]
    lowered = between.lower()
    # the leftmost cue word decides; a cue with no counterpart in the template is skipped
    end = 0
    for start in _WORD_START.finditer(lowered):
        m = _ANY_CUE.match(lowered, start.start()) if start.start() >= end else None
        if m is None:
            continue
        end = m.end()  # as finditer goes on: after the cue
        typed = _template_name(CUES[int(m.lastgroup[1:])], allowed)  # type: ignore[index]
        if typed is not None:
            return typed
    return Typed(_fallback(allowed), False, False)


def _template_name(cue: Cue, allowed: list[str]) -> Typed | None:
    if not allowed:
        return Typed(cue.relation, cue.reverse, True)
    lowered = {a.lower(): a for a in allowed}
    for name, flip in _SYNONYMS.get(cue.relation, ((cue.relation, False),)):
        if name in lowered:
            return Typed(lowered[name], cue.reverse != flip, True)
    return None


def _fallback(allowed: list[str]) -> str:
    for name in allowed:
        if name.lower() in ("related_to", "relates_to", "related"):
            return name
    return "related_to"


def describe_between(between: str, max_words: int = 12) -> str:
    """The words between two names, trimmed of punctuation and dangling function words."""
    words = _EDGE.sub("", _PARENTHESES.sub(" ", between)).split()
    while words and words[0].lower() in _LEADING:
        words = words[1:]
    while words and words[-1].lower() in _TRAILING:
        words = words[:-1]
    return " ".join(words[:max_words])
