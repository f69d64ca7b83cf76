"""What MAP wrote as mentions: each entity and concept of an extract as a Mention, with the
tier-1 keys of its name (normalised name and type)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..errors import InputError
from ..identifiers import identifier_edges
from ..storage.records import Extract

CONCEPT = "concept"
# Everything that is not a letter/digit separates words, except symbols that carry meaning in
# technical names (C++, C#, AT&T) and would otherwise collapse distinct names into one.
_SEPARATORS = re.compile(r"[^\w+#&@]+|_+")


@lru_cache(maxsize=1 << 16)
def normalize_name(name: str) -> str:
    """Tier-1 form of a name: NFKC, casefolded, punctuation and hyphens as spaces, single-spaced;
    underscores at an identifier's ends kept as words of their own.

    A trailing plural 's' is kept on purpose: "Process" and "Processes" are left to tier 2.
    Cached: REDUCE normalises the same few thousand names ~100 times each.
    """
    text = unicodedata.normalize("NFKC", name).casefold()
    words = " ".join(_SEPARATORS.sub(" ", text).split())
    lead, trail = identifier_edges(text)  # `__abs__()` is not `abs()`
    return " ".join(part for part in (lead, words, trail) if part) if words and (lead or trail) else words


# Types that say nothing specific: what an extractor falls back to when no rule applies.
GENERIC_TYPES = frozenset({"concept", "thing", "other", "unknown", "misc", "entity"})


def type_key(type_: str) -> str:
    return normalize_name(type_) or "thing"


@dataclass(slots=True)
class Mention:
    """One entity or concept as MAP wrote it in one chunk."""

    name: str
    type: str  # "" for a concept
    category: str  # entity | concept
    description: str
    aliases: list[str]
    chunk_id: str
    document_id: str

    def keys(self) -> list[str]:
        return list(_keys(self.type if self.category != CONCEPT else None, self.name, tuple(self.aliases)))


@lru_cache(maxsize=1 << 16)
def _keys(type_: str | None, name: str, aliases: tuple[str, ...]) -> tuple[str, ...]:
    # A name is mentioned in thousands of chunks with the same type and aliases: worked out once.
    kind = type_key(type_) if type_ is not None else CONCEPT
    names = (normalize_name(n) + _type_mark(n) for n in (name, *aliases))
    return tuple(dict.fromkeys(f"{kind}|{n}" for n in names if n))


# A qualified code name ("Connection.Request", "forms.CharField").
_QUALIFIED = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$")


def _type_mark(name: str) -> str:
    """A mark " <>" for a type's type ("Connection.Request": both parts a capital, then small
    letters): never the same-lettered member of its owner (the method `Connection.request`),
    which casefolding would make one name. A setting's name (`repack.UseDeltaBaseOffset`)
    is no type's."""
    owner, _, last = name.strip().rpartition(".")
    owner = owner.rpartition(".")[2]
    if not _QUALIFIED.match(name.strip()) or not (_TYPE_PART.match(owner) and _TYPE_PART.match(last)):
        return ""
    return " <>"


_TYPE_PART = re.compile(r"^[A-Z][\w$]*[a-z][\w$]*$")


def _text(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key, "")
    if type(value) is str:  # nearly always: skip the checks below
        return value.strip()
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{where}.{key} must be text, got {type(value).__name__}", field=f"{where}.{key}")
    return value.strip()


def _field(item: dict[str, Any], key: str, extract: Extract, kind: str, i: int) -> str:
    value = item.get(key, "")
    if type(value) is str:  # nearly always: the item's place is spelled out only for an error
        return value.strip()
    return _text(item, key, f"extract {extract.id}: {kind}[{i}]")


def _items(extract: Extract, kind: str) -> Iterable[tuple[int, dict[str, Any]]]:
    for i, item in enumerate(getattr(extract, kind) or []):
        if type(item) is not dict and not isinstance(item, dict):
            raise InputError(f"extract {extract.id}: {kind}[{i}] must be an object", field=f"{kind}[{i}]")
        yield i, item


def collect_mentions(extracts: Iterable[Extract], document_of: dict[str, str] | None = None) -> list[Mention]:
    """Every named entity and concept of the extracts, in a stable order; nameless items skipped."""
    mentions: list[Mention] = []
    for ex in sorted(extracts, key=lambda e: e.id):
        doc = ex.document_id or (document_of or {}).get(ex.id, "")
        for i, item in _items(ex, "entities"):
            name = _field(item, "name", ex, "entities", i)
            aliases = item.get("aliases") or []
            if not isinstance(aliases, list) or not all(isinstance(x, str) for x in aliases):
                where = f"extract {ex.id}: entities[{i}]"
                raise InputError(f"{where}.aliases must be a list of text", field=f"{where}.aliases")
            if normalize_name(name):
                clean = [x.strip() for x in aliases if normalize_name(x)] if aliases else []
                mentions.append(Mention(name, _field(item, "type", ex, "entities", i), "entity",
                                        _field(item, "description", ex, "entities", i), clean, ex.id, doc))
        for i, item in _items(ex, "concepts"):
            term = _field(item, "term", ex, "concepts", i)
            if normalize_name(term):
                mentions.append(Mention(term, "", CONCEPT, _field(item, "definition", ex, "concepts", i), [], ex.id, doc))
    return mentions
