"""A chunk's names as items: each one's spelling, aliases and mentions, the names that are only
words and are dropped, and their ranking."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .names import Span, name_key
from .phrases import Mention
from .sentences import Sentence
from .subjects import never_subject, value_literal
from .words import (
    BOILERPLATE,
    FUNCTION_WORDS,
    GENERIC_HEADS,
    SENTENCE_STARTERS,
    VERBS,
    WEAK_MODIFIERS,
)

LOWER_WORD = re.compile(r"\b[a-z][a-z-]+\b")


@dataclass(slots=True)
class Item:
    """A name of the chunk under its key: its spelling and kind, aliases, the sentences naming it
    and the authors' definition of it, if the chunk holds one."""

    key: str
    name: str
    kind: str  # span kind, "phrase" or "defined"
    first: int  # sentence index of the first mention
    aliases: list[str] = field(default_factory=list)
    sentences: list[int] = field(default_factory=list)
    definition: str = ""

    @property
    def is_concept(self) -> bool:
        return self.kind in ("phrase", "defined") or (self.kind == "term" and self.name.islower())


def prefer_name(item: Item, span: Span, key: str) -> None:
    """Keep the most name-like spelling: the long form over an acronym, capitals over lowercase."""
    if key != item.key:
        return  # an alias spelling
    current_key = name_key(item.name)
    if current_key != item.key or (item.name.islower() and not span.text.islower()):
        if current_key != item.key and item.name not in item.aliases:
            item.aliases.append(item.name)
        item.name, item.kind = span.text, span.kind


def find_word_mentions(items: dict[str, Item], tokens, mentions: list[list[Mention]]) -> None:
    """Mentions of lowercase phrases and defined terms, looked up as word n-grams."""
    wanted = {key for key, it in items.items() if it.kind in ("phrase", "defined", "term")}
    if not wanted:
        return
    lengths: dict[str, set[int]] = {}  # first word -> lengths of the wanted phrases it opens
    for key in wanted:
        words = key.split()
        if words:  # a name of symbols only has an empty key (seen in the Python manual)
            lengths.setdefault(words[0], set()).add(len(words))
    for i, words in enumerate(tokens):
        found = mentions[i]
        added = False
        for j, word in enumerate(words):
            sizes = lengths.get(word.key)
            if not sizes:
                continue
            for n in sorted(sizes, reverse=True):
                if j + n > len(words):
                    continue
                key = " ".join(w.key for w in words[j : j + n])
                if key not in wanted:
                    continue
                start, end = word.start, words[j + n - 1].end
                if any(m.start < end and start < m.end for m in found):
                    continue
                found.append(Mention(start, end, key))
                added = True
                break
        if added:
            found.sort(key=lambda m: m.start)


_PLAIN_CODE_WORD = re.compile(r"^[a-z]+$")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_COMMON_WORDS = FUNCTION_WORDS | VERBS | GENERIC_HEADS | BOILERPLATE | WEAK_MODIFIERS | SENTENCE_STARTERS


def drop_common_code_words(
    items: dict[str, Item], sentences: list[Sentence], mentions: list[list[Mention]], headings: str, text: str
) -> None:
    """A lone lowercase code word that is also an English word (`current`, `always`, `on`: an
    enum value) needs more than its backticks to be a name: a definition, a heading or a
    glossary term naming it, or code marks in two sentences. Its mentions go with it."""
    prose: set[str] | None = None
    dropped = set()
    for key, item in items.items():
        if item.kind != "code" or not _PLAIN_CODE_WORD.match(item.name) or item.definition:
            continue
        if prose is None:  # the chunk's words outside inline code, read once
            prose = set(LOWER_WORD.findall(_CODE_SPAN.sub(" ", text)))
        if item.name not in _COMMON_WORDS and item.name not in prose:
            continue  # a word only ever written as code (`asyncio`, `pathlib`)
        in_sentences = [i for i, found in enumerate(mentions) if any(m.key == key for m in found)]
        if len(in_sentences) >= 2 or re.search(rf"\b{re.escape(item.name)}\b", headings):
            continue
        if any(sentences[i].term for i in in_sentences):
            continue
        dropped.add(key)
    if dropped:
        for key in dropped:
            del items[key]
        for found in mentions:
            found[:] = [m for m in found if m.key not in dropped]


def drop_never_subjects(items: dict[str, Item], mentions: list[list[Mention]],
                        parameters: dict[str, tuple[str, str]]) -> None:
    """Options, contractions, single letters and lone adjectives are never subjects: an option
    is a part of its owner, the rest are words. Nor is a literal value no one defines here, nor
    a parameter of a signature in the chunk (a part of its function, as an option is)."""
    dropped = {key for key, item in items.items()
               if never_subject(item.name) or (value_literal(item.name) and not item.definition)
               or (parameters.get(key, ("", ""))[1] == item.name.strip("`") and not item.definition)}
    if dropped:
        for key in dropped:
            del items[key]
        for found in mentions:
            found[:] = [m for m in found if m.key not in dropped]


def alias_text(alias_key: str, spans: list[list[Span]], item: Item) -> str:
    """The first spelling in the chunk's spans whose key is `alias_key`, else ""."""
    for sentence_spans in spans:
        for span in sentence_spans:
            if name_key(span.text) == alias_key:
                return span.text
    return ""


def rank(items: list[Item], headings: str) -> list[Item]:
    """The items most worth keeping first: mentioned often, defined, aliased, name-like, in a heading."""
    def score(it: Item) -> tuple[float, int]:
        value = len(it.sentences) + (2.0 if it.definition else 0.0) + 0.5 * len(it.aliases)
        if it.kind in ("name", "acronym", "ident", "code", "file"):
            value += 1.0
        if it.name.lower() in headings:
            value += 1.5
        return (-value, it.first)

    return sorted(items, key=score)
