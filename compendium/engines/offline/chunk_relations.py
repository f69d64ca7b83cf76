"""A chunk's relations: two names close together in one sentence, and the document's subject to
each subject its passage says something about."""

from __future__ import annotations

import re

from ..tasks import ChunkInput, RelationItem
from .names import TypeRules, name_key
from .phrases import Mention
from .relations import Typed, describe_between, relation_type
from .sentences import Sentence
from .subjects import owner_name

_CLAUSE_BREAK = re.compile(r"[;:]|\s[—–-]\s")
_MAX_GAP_WORDS = 15  # names further apart than this in a sentence are not related by it
_WINDOW = 3  # a mention is paired with at most the next three mentions of its sentence


def sentence_relations(
    label, sentences, mentions, names, rules: TypeRules, limit: int
) -> list[RelationItem]:
    """Pairs of named items close together in a sentence, typed by the words between them; the
    pairs in most sentences are kept, in the order first seen."""
    pairs: dict[tuple[str, str], dict] = {}
    for i, sentence in enumerate(sentences):
        found = _merge_repeats([m for m in mentions[i] if m.key in names])
        for a in range(len(found)):
            for b in range(a + 1, min(len(found), a + 1 + _WINDOW)):
                first, second = found[a], found[b]
                if first.key == second.key or second.start < first.end:
                    continue
                between = sentence.text[first.end : second.start]
                if len(between.split()) > _MAX_GAP_WORDS or _CLAUSE_BREAK.search(between):
                    continue
                key = (min(first.key, second.key), max(first.key, second.key))
                entry = pairs.get(key)
                if entry is None:
                    entry = pairs[key] = {"sentences": set(), "typed": None, "order": len(pairs)}
                entry["sentences"].add(i)
                typed = relation_type(between, rules)
                if (
                    "," in between and typed.cued
                ):  # a cue in another clause says nothing of these two
                    typed = Typed(relation_type("", rules).type, False, False)
                if entry["typed"] is None or (typed.cued and not entry["typed"][0].cued):
                    source, target = (second, first) if typed.reverse else (first, second)
                    description = describe_between(between) or sentence.text
                    entry["typed"] = (typed, source.key, target.key, description)
    ranked = sorted(pairs.values(), key=lambda e: (-len(e["sentences"]), e["order"]))[:limit]
    out = []
    for entry in sorted(ranked, key=lambda e: e["order"]):
        typed, source, target, description = entry["typed"]
        out.append(
            RelationItem(
                chunk=label,
                source=names[source],
                target=names[target],
                type=typed.type,
                description=description,
                strength=float(len(entry["sentences"])),
            )
        )
    return out


def _merge_repeats(found: list[Mention]) -> list[Mention]:
    """ "Write-Ahead Log (WAL)" is one mention, not two: merge neighbours naming one item."""
    merged: list[Mention] = []
    for mention in found:
        if merged and merged[-1].key == mention.key:
            merged[-1] = Mention(merged[-1].start, max(merged[-1].end, mention.end), mention.key)
        else:
            merged.append(mention)
    return merged


def document_relations(label: str, chunk: ChunkInput, sentences: list[Sentence], about: list[list[str]],
                       names: dict[str, str], rules: TypeRules, found: list[RelationItem],
                       limit: int) -> list[RelationItem]:
    """The document's subject is related to each subject its passage says something about (a
    command to the settings and terms its page defines), by the first sentence about it: what
    ties a wiki's pages to the page of the document that defines them."""
    owner = owner_name(chunk.document_title)
    owner_key = name_key(owner) if owner else ""
    if owner_key not in names:
        return []
    have = {(r.source, r.target) for r in found} | {(r.target, r.source) for r in found}
    out: list[RelationItem] = []
    default = relation_type("", rules).type
    for i, keys in enumerate(about):
        for key in keys:
            if key == owner_key or key not in names or len(found) + len(out) >= limit:
                continue
            pair = (names[owner_key], names[key])
            if pair in have:
                continue
            have.add(pair)
            have.add(pair[::-1])
            out.append(RelationItem(chunk=label, source=pair[0], target=pair[1], type=default,
                                    description=sentences[i].text, strength=1.0))
    return out
