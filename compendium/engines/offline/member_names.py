"""A member's name carries its owner: `consumeToAny` defined in class TokenQueue's entry is the
subject "TokenQueue.consumeToAny", never the same-named method of another class.

A subject has a scope: its identity is (owner, name). The reader gives a definition's owner
where the source names one (the class of a method's entry); where that owner is the type the
page declares, the chunk's name of the member is written with it. REDUCE then keeps two
owners' members apart (two qualified names with other owners are two identifiers), and a
member never joins a class whose name differs only in case or number (`dataNodes` of
Element beside the class `DataNode`).
"""

from __future__ import annotations

import re

from ..tasks import ChunkInput
from .chunk_names import Item
from .names import name_key
from .sentences import Sentence
from .subjects import is_type, term_name

# An owner written as code: a type's name ("TokenQueue", "Connection.Request"), capitalised;
# a lowercase scope is a method owning its parameters, or a command owning its options.
_TYPE_NAME = re.compile(r"^[A-Z][\w$]*(?:\.[A-Z][\w$]*)*$")
# A heading declaring a type ("Class TokenQueue", "Interface Connection.Request<T>").
_TYPE_HEADING = re.compile(r"^(?:Class|Interface|Enum|Enum Class|Annotation Type|Annotation Interface|Record|"
                           r"Record Class|Exception|Error)\s+(?P<name>[\w$.]+)")
# An API reference page's title: its type, then the API's name ("Selector (jsoup 1.15.3 API)").
_API_TITLE = re.compile(r"^(?P<name>[\w$.]+)\s+\([^()]*\bAPI\)$")


def _page_types(chunk: ChunkInput) -> set[str]:
    """The types the chunk's page declares: in a heading of its path, or as an API page's title."""
    found = {m["name"] for h in chunk.heading_path if (m := _TYPE_HEADING.match(h.strip()))}
    title = _API_TITLE.match(chunk.document_title.strip())
    if title is not None:
        found.add(title["name"])
    return found


def qualify_members(chunk: ChunkInput, items: dict[str, Item], sentences: list[Sentence],
                    alias_of: dict[str, str]) -> dict[str, str]:
    """Name each member the chunk defines under the type its page declares by that owner and
    its own name ("TokenQueue.consumeToAny"). Returns each member's name as written -> its
    qualified name."""
    qualified: dict[str, str] = {}
    types: set[str] | None = None
    for sentence in sentences:
        if not sentence.defines or not sentence.scope or is_type(sentence.defines):
            continue
        owner = sentence.scope.strip().strip("`")
        if not _TYPE_NAME.match(owner) or owner.isupper():
            continue
        types = _page_types(chunk) if types is None else types
        if owner not in types:
            continue  # a field of a record its section describes, a value of a setting: not a type's member
        term = term_name(sentence.defines)
        key = name_key(term)
        item = items.get(alias_of.get(key, key))
        if item is None or not term or term == owner or term.startswith(owner + "."):
            continue
        if owner.rpartition(".")[2] == term:
            continue  # a constructor: its class itself
        # The member's entry is what its chunk is about: a name the chunk spells otherwise under
        # the same key (the class `DataNode` beside `dataNodes`, "HTML" beside `html`) is the
        # member here, never a page of that other spelling.
        call = "()" if item.name.endswith("()") and not term.endswith("()") else ""
        item.name = qualified[term] = f"{owner}.{term}{call}"
    return qualified
