"""What a claim is shaped as: the definition of its subject, an entry of a definition list; and
which subjects are named by one plain word."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ..engines.offline.definitions import is_purpose_line
from ..engines.offline.standalone import ABOUT_ITSELF
from ..engines.offline.subjects import is_member
from ..storage.records import Entity

_PLAIN_TITLE_WORD = re.compile(r"^[A-Z][a-z]+$")


@lru_cache(maxsize=65536)
def defining(text: str) -> bool:
    """A claim shaped as the definition of a subject of its own: a purpose line, or a
    definition block's "`term`: ..." whose term is no member (an option's, a placeholder's or
    a method's definition is a fact of its owner's page, not what the owner is); or a document
    saying what it is ("This document provides an introduction to ..."), its subject's.
    Cached: the claim index asks it of a claim once as itself and once as an entry."""
    if ABOUT_ITSELF.match(text):
        return True
    if not is_purpose_line(text):
        return False
    term = _DEFINED.match(text)
    return term is None or not is_member(term.group(1))


_DEFINED = re.compile(r"`([^`\n]{1,120})`:\s")


def an_entry(text: str) -> bool:
    """A definition, or an entry of a definition list ("`-o, --output-file=FILE`: write output
    to specified file"): its owner's fact however many owners write it (the options programs
    share, a method every interface declares), so never furniture. A page's "This document
    ..." is no entry: written in every document, it is a footer ("This document was generated
    by ...")."""
    return (defining(text) and not ABOUT_ITSELF.match(text)) or _DEFINED.match(text) is not None


def name_word(entity: Entity) -> str | None:
    """The capitalised plain word ("Lock") a subject is named by, when it is one: such a name may
    be a common word, told by whether its claims capitalise it inside a sentence."""
    name = entity.name.strip()
    if name.islower() and entity.aliases and entity.aliases[0].lower() == name:
        name = entity.aliases[0]  # REDUCE took the corpus's lowercase spelling: judge the capitalised one
    if not _PLAIN_TITLE_WORD.match(name) or any(a.lower() != name.lower() for a in entity.aliases):
        return None
    return name


def words_of(entities: Iterable[Entity]) -> dict[str, list[str]]:
    """Entity id -> [its name word, that word in lowercase as the prose would write it], for the
    entities named by one plain word (the others need no word counts)."""
    out = {}
    for e in entities:
        word = name_word(e)
        if word is not None:
            out[e.id] = [word, e.name.strip().lower()]
    return out
