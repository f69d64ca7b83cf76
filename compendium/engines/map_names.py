"""Which names of a MAP reply name something a reader would look up, by how their chunk writes
them; and the names a reply's claims are about that its bounded entity list left out.

A small model lists the words of its claims as entities: verbs and adjectives ("frozen",
"sleeps", "immutable"), common words ("disk", "space", "table", capitalised by it as "Query"),
clauses ("WAL records describing its modification have been flushed"). The chunk tells them
apart from names: a name is written in code, in capitals past a sentence's first word, or as a
heading; a common word is written in lowercase, or capitalised only where a sentence begins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .offline.names import acronym_matches, is_acronym
from .offline.words import GENERIC_ACRONYMS, VERBS, WEAK_MODIFIERS
from .prompt_text import folded
from .replies import label_key
from .tasks import ChunkInput, EntityItem, ExtractionBatch, ExtractionReply

MAX_NAME_WORDS = 5  # a longer "name" is a phrase of the text, not what a reader looks up
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9']*")
_CODE = re.compile(r"`([^`\n]{1,80})`")
# A name a claim's text writes in code as one identifier (`vacuum_cost_limit`), not a command
# or an expression (`SELECT ... FOR SHARE`, `hot_standby_feedback = on`).
_IDENTIFIER = re.compile(r"`([A-Za-z_][\w.]*[A-Za-z0-9_])`")
_AMOUNT = re.compile(r"^\d[\d.,]*\s")  # a number and its unit: "16 MB", "25 percent", "200 milliseconds"
_WITH_ACRONYM = re.compile(r"^(?P<name>[^()]+?)\s*\((?P<short>[^()\s]{2,10})\)$")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s*|\n\s*(?:[-*+]|\d+[.)])?\s*|[#>*_(\"']\s*)$")


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _key(text: str) -> str:
    return " ".join(_singular(w) for w in folded(text).replace("-", " ").split())


def _headings(chunk: ChunkInput) -> set[str]:
    return {_key(h) for h in (chunk.document_title, *chunk.heading_path) if h.strip()}


def _coded(name: str, text: str) -> bool:
    key = _key(name)
    return any(_key(code.strip("()")) == key for code in _CODE.findall(text))


def _capitalised_in_text(name: str, text: str) -> bool:
    """The text writes the name, in any case, with a capital past where a sentence begins ("the
    Checkpointer writes"), or as several capitalised words ("Buffer Pool", where one capital
    would be the sentence's); not as a part of a longer name ("Space" of "Free Space Map")."""
    stem = name[:-1] if len(name) > 3 and name.endswith("s") and not name.endswith("ss") else name
    for found in re.finditer(rf"(?<![\w-]){re.escape(stem)}(?:e?s)?(?![\w-])", text, re.IGNORECASE):
        spelling = found.group(0)
        if not spelling[0].isupper() or _inside_name(text, found.start(), found.end()):
            continue
        several = len(spelling.split()) > 1 and all(w[0].isupper() for w in spelling.split() if w[0].isalpha())
        if several or not _SENTENCE_START.search(text[: found.start()]):
            return True
    return False


_NEXT_WORD = re.compile(r"[ \t]+([A-Za-z][\w-]*)")
_LAST_WORD = re.compile(r"([A-Za-z][\w-]*)[ \t]+$")


def _inside_name(text: str, start: int, end: int) -> bool:
    """A capitalised word right after it, or right before it where no sentence begins."""
    after = _NEXT_WORD.match(text, end)
    if after and after.group(1)[0].isupper():
        return True
    before = _LAST_WORD.search(text[max(0, start - 60):start])
    if before and before.group(1)[0].isupper():
        at = start - (len(text[max(0, start - 60):start]) - before.start(1))
        return not _SENTENCE_START.search(text[:at])
    return False


def _acronym_in_text(name: str, text: str) -> bool:
    """The text writes a word of the name in capitals ("XID wraparound", "WAL", `INSERT`)."""
    for found in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE):
        if any(w.isupper() and len(w) > 1 for w in _WORD.findall(found.group(0))):
            return True
    return False


def names_something(name: str, chunk: ChunkInput, text: str | None = None) -> bool:
    """Whether `name` is written as a name: as a heading of its chunk, or in `text` (default its
    own; MAP passes only that, so a chunk's names never depend on the batch it shared) in code
    or in capitals where no sentence begins; or, of several words, a term in lowercase that is
    no clause ("dead tuples", not "remove or recycle segments") and no fragment ("rarely large")."""
    text = chunk.text if text is None else text
    words = _WORD.findall(name)
    if not words:
        return True  # no letters to judge by: is_real_name decides
    if len(words) == 1 and words[0].lower() in GENERIC_ACRONYMS:
        return False  # "ID", "OS"
    if "`" in name or _AMOUNT.match(name):
        return False  # a piece of code markup ("lumen_wal` directory"), an amount ("16 MB", "8 KB page")
    if _key(name) in _headings(chunk) or _coded(name, text):
        return True
    if len(words) > MAX_NAME_WORDS:
        return False  # a phrase, numbers in it or not ("insert this tuple at ... block 17 of relation 16384")
    if any(ch.isdigit() or ch in "_.()" for ch in name):
        return True
    lowered = [w.lower() for w in words]
    # A verb written in lowercase makes a clause ("remove or recycle segments"); "Write-Ahead Log" is none.
    if any(w in VERBS for w in name.split()):
        return False
    if lowered[-1] in WEAK_MODIFIERS or any(w.endswith("ly") and len(w) > 4 for w in lowered):
        return False
    if _capitalised_in_text(name, text) or (_acronym_in_text(name, text) and not any(w.islower() for w in words)):
        return True
    # One word only in lowercase, or capitalised where a sentence opens, is a common word; a
    # phrase in lowercase the text writes once is a phrase of its sentence ("chunk sequence",
    # "bytes of WAL"), one it uses again is a term ("dead tuples", "replication slots").
    return len(words) > 1 and _uses(name, text) >= 2


def _uses(name: str, text: str) -> int:
    """How often the text writes the name, in any case, singular or plural."""
    key = _key(name)
    stem = re.escape(key).replace(r"\ ", r"[\s-]+")
    return len(re.findall(rf"(?<![\w-]){stem}(?:s|es)?(?![\w-])", folded(text).replace("-", " ")))


def split_acronyms(reply: ExtractionReply) -> None:
    """"Write-Ahead Log (WAL)" is the entity "Write-Ahead Log" also named "WAL": one name per
    spelling, so that REDUCE finds it under each."""
    for entity in reply.entities:
        found = _WITH_ACRONYM.match(entity.name.strip())
        if found and is_acronym(found["short"]) and acronym_matches(found["short"], found["name"]):
            entity.name = found["name"].strip()
            if found["short"] not in entity.aliases:
                entity.aliases = [*entity.aliases, found["short"]]


_INTRODUCED = re.compile(r"((?:[\w'-]+[ \t]+){0,7}[\w'-]+)[ \t]*\(([A-Z][A-Za-z0-9]{1,9})\)")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)


def abbreviations(text: str) -> dict[str, str]:
    """Acronym -> the name it abbreviates, as the text introduces them: "the Oversized-Attribute
    Storage Technique (TOAST)", "Transaction ID (XID)". The name is the fewest words before the
    brackets whose initials spell the acronym."""
    found: dict[str, str] = {}
    for m in _INTRODUCED.finditer(text):
        words, short = m.group(1).split(), m.group(2)
        if not is_acronym(short):
            continue
        for n in range(1, len(words) + 1):
            name = " ".join(words[-n:])
            if acronym_matches(short, name) or acronym_matches(short, _ARTICLE.sub("", name)):
                found.setdefault(short, _ARTICLE.sub("", name) if n > 1 and acronym_matches(short, _ARTICLE.sub("", name))
                                 else name)
                break
    return found


def name_acronyms(entities: list[EntityItem], text: str) -> None:
    """An entity named by an acronym the text introduces, or by what it abbreviates, takes one
    name with the other as an alias, so that REDUCE finds one thing: the words ("Write-Ahead
    Log", also "WAL"), or the acronym where its letters need an article ("TOAST", also
    "Oversized-Attribute Storage Technique": "The ..." is no name a reader looks up)."""
    short_of = abbreviations(text)
    long_of = {folded(name): short for short, name in short_of.items()}
    long_of.update({folded(_ARTICLE.sub("", name)): short for short, name in short_of.items()})
    for entity in entities:
        short = entity.name.strip() if entity.name.strip() in short_of else long_of.get(folded(entity.name))
        if short is None:
            continue
        words = _ARTICLE.sub("", short_of[short])
        name, other = (words, short) if acronym_matches(short, words) else (short, words)
        entity.name = name
        entity.aliases = [a for a in entity.aliases if folded(a) != folded(name)]
        if folded(other) not in {folded(a) for a in entity.aliases}:
            entity.aliases.append(other)


def clean_names(reply: ExtractionReply, batch: ExtractionBatch) -> int:
    """MAP's names, as kept: the common words taken out, the names the claims are about added,
    an acronym and what it abbreviates one name. Returns how many names went."""
    gone = drop_common_words(reply, batch)
    claim_names(reply, batch)
    for chunk in batch.chunks:
        label = label_key(chunk.label)
        name_acronyms([e for e in reply.entities if label_key(e.chunk or "") == label], chunk.text)
    return gone


def drop_common_words(reply: ExtractionReply, batch: ExtractionBatch) -> int:
    """Take out the entities and concepts their chunk does not write as names; returns how many
    went. Not counted as dropped: a small model lists the words of its claims beside its names,
    which is noise to leave out, not a reply that failed the prompt (map.most_dropped)."""
    split_acronyms(reply)
    chunks = {label_key(c.label): c for c in batch.chunks}

    def named(label: str | None, name: str) -> bool:
        chunk = chunks.get(label_key(label or ""))
        return chunk is None or names_something(name, chunk)

    before = len(reply.entities) + len(reply.concepts)
    reply.entities = [e for e in reply.entities if named(e.chunk, e.name)]
    reply.concepts = [c for c in reply.concepts if named(c.chunk, c.term)]
    return before - len(reply.entities) - len(reply.concepts)


def claim_names(reply: ExtractionReply, batch: ExtractionBatch) -> int:
    """Add as entities of a claim's chunk the names the claim is about (those it lists, and those
    its text writes in code) that the chunk writes as names (names_something) and the reply's
    entities leave out there; returns how many were added. The 1.5B model listed the settings
    of a copied sentence ("... reaches `vacuum_cost_limit` ...") among neither.
    The entity list is bounded per batch, and a small model spends it on the first chunks: the
    last chunk of a batch of four got none, though its claims named `lumen_stat_activity`."""
    chunks = {label_key(c.label): c for c in batch.chunks}
    listed = {(label_key(e.chunk or ""), _key(e.name)) for e in reply.entities}
    listed |= {(label_key(c.chunk or ""), _key(c.term)) for c in reply.concepts}
    type_of = {_key(e.name): e.type for e in reply.entities if e.type}
    added = 0
    for claim in reply.claims:
        label = label_key(claim.chunk or "")
        chunk = chunks.get(label)
        if chunk is None:
            continue
        for name in _distinct([*claim.entities, *_IDENTIFIER.findall(claim.text)]):
            name = _as_written(name.strip().strip("`"), chunk.text)
            found = _WITH_ACRONYM.match(name)
            short = found["short"] if found and is_acronym(found["short"]) and acronym_matches(found["short"], found["name"]) else ""
            name = found["name"].strip() if short else name
            key = (label, _key(name))
            if key in listed or folded(name) not in folded(chunk.text) or not names_something(name, chunk):
                continue
            listed.add(key)
            reply.entities.append(EntityItem(chunk=claim.chunk, name=name, type=type_of.get(_key(name), ""),
                                             aliases=[short] if short else []))
            added += 1
    return added


def _as_written(name: str, text: str) -> str:
    """The name as the text spells it, where the model changed only its case ("Dead tuple")."""
    found = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE)
    return found.group(0) if found and found.group(0) != name and not found.group(0)[0].isupper() else name


def _distinct(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(n for n in names if isinstance(n, str) and n.strip()))
