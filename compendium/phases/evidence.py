"""Evidence packs: the claims, relations and source excerpts a page is written from, under a budget."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from ..engines.offline.definitions import Definer, defines_heading
from ..engines.offline.sentences import split_sentences
from ..engines.offline.standalone import entry_label
from ..engines.tasks import EvidenceItem
from ..fingerprint import text_hash
from ..titles import clean_heading
from .claim_index_keys import text_key
from .excerpts import (
    EXCERPT_WORDS,
    Paragraph,
    not_prose_starts,
    opening_excerpt,
    prose_excerpt,
    split_paragraphs,
)
from .leaning import Leaning


def estimate_tokens(text: str) -> int:
    """About four characters per token: close enough to budget a pack."""
    return max(1, (len(text) + 3) // 4)


@dataclass
class Source:
    """A chunk a piece of evidence comes from."""

    chunk_id: str
    text: str
    document: str = ""
    heading_path: list[str] = field(default_factory=list)
    about: list[str] = field(default_factory=list)  # slugs of entities with pages mentioned there
    blocks: list[list] = field(default_factory=list)  # the chunk's [kind, start, end] from its reader
    start: int = 0  # where the chunk starts in its document's text
    examples: tuple = ()  # (name, where in `text` the example that made it up ends) (Chunk.examples)
    follows_code: bool = False  # the chunk starts in the paragraphs after a code block (Chunk.follows_code)

    @cached_property
    def flat(self) -> str:
        """The chunk's text on one line, single-spaced, worked out once however many pages it is
        offered to: its paragraphs' words joined (paragraphs are split once per chunk text)."""
        return " ".join(p.block for p in self.paragraphs)

    @cached_property
    def entries(self) -> tuple[tuple[int, int, str], ...]:
        """Where each definition block (an option's, a method's entry) starts and ends in `flat`,
        with the term it defines."""
        out = []
        for i, block in enumerate(self.blocks):
            if block and block[0] == "definition" and len(block) >= 3:
                words = self.text[block[1]:block[2]].split()
                at = self.flat.find(" ".join(words[:12])) if words else -1
                if at < 0:
                    continue
                end = at + len(" ".join(words))
                # its later paragraphs and items, which the reader marks with its term and scope
                # (code and tables between them hold no sentence)
                for later in self.blocks[i + 1:]:
                    if later[0] in ("code", "table"):
                        continue
                    if later[0] not in ("paragraph", "item") or tuple(later[3:5]) != tuple(block[3:5]):
                        break
                    more = " ".join(self.text[later[1]:later[2]].split())
                    found = self.flat.find(more[:80], end)
                    if found < 0:
                        break
                    end = found + len(more)
                out.append((at, end, block[3] if len(block) > 3 else ""))
        return tuple(out)

    @cached_property
    def leaning(self) -> Leaning:
        """What a sentence of the chunk leans on besides the sentence before it."""
        return Leaning(self.text, self.blocks, self.flat, self.start, self.examples, frozenset(self.about),
                       self.follows_code)

    @cached_property
    def paragraphs(self) -> tuple[Paragraph, ...]:
        """The chunk's paragraphs, split once however many pages it is offered to."""
        return split_paragraphs(self.text, not_prose_starts(self.blocks))


@dataclass
class Statement:
    """A claim or relation sentence and every chunk that supports it."""

    text: str
    chunk_ids: list[str]
    about: list[str] = field(default_factory=list)
    kind: str = "claim"  # claim (verbatim from its chunk) | relation (written from a graph edge)


def build_evidence(
    statements: Sequence[Statement],
    sources: dict[str, Source],
    names: Sequence[str],
    budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> list[EvidenceItem]:
    """Most supported first, numbered 1..N, within `budget` tokens.

    Identical statements from several chunks count once with their support summed; every
    source chunk also offers an excerpt around the first mention of one of `names`. Items
    that do not fit are skipped, so smaller ones later in line may still get in.
    """
    return choose_evidence(rank_evidence(statements, sources, names), budget, count_tokens)


def rank_evidence(
    statements: Sequence[Statement], sources: dict[str, Source], names: Sequence[str], *, own: str = "",
    furniture: Collection[str] = (), description: str = "", openings: Collection[str] = (),
) -> list[EvidenceItem]:
    """Every piece of evidence a page could be written from, best first (unnumbered).

    `own` is the page's slug: an item's `about` never names the page itself. The statements
    and sources are left as they are, so the pages they are offered to can share them.
    `furniture`: text keys of sentences the manual writes in so many documents that they are
    no subject's fact (see claim_index.REPEATED_IN); excerpts leave them out. `description`:
    the subject's authored definition as MAP found it; the statement saying it ranks as one
    defining the subject ("This document provides ..." defines no name, yet is the definition).
    `openings`: passages that are the page's own (an overview's part opening, its members' first
    passages), offered whatever claims they hold. A passage opening the section named after the
    page (a document's first paragraph under its title) is its own too: its excerpt runs from that
    opening and ranks right after the sentences defining the subject, since it says what the
    subject is in the authors' order.
    """
    merged: dict[str, Statement] = {}
    for s in statements:
        key = _sentence_key(s.text)
        if not key:
            continue
        known = merged.get(key)
        if known is None:
            merged[key] = s  # the caller's statement: copied only when a duplicate merges into it
        else:
            merged[key] = Statement(
                known.text.strip(),
                list(dict.fromkeys([*known.chunk_ids, *s.chunk_ids])),
                list(dict.fromkeys([*known.about, *s.about])),
                known.kind,
            )

    definer = Definer(names).defines
    described = " ".join(description.split())

    def defines(text: str) -> bool:
        return definer(text) or (bool(described) and " ".join(text.split()) == described)
    claims_per_chunk: dict[str, int] = {}
    claimed: set[str] = set()  # chunks holding a claim about the page's subject
    candidates: list[tuple[bool, bool, bool, int, int, tuple[int, str], str, int, EvidenceItem]] = []
    for s in merged.values():
        ids = s.chunk_ids
        if len(ids) == 1:  # most statements: one chunk
            only = ids[0]
            first = sources.get(only)  # type: ignore[assignment]
            if first is None:
                continue
            support = 1
            claims_per_chunk[only] = claims_per_chunk.get(only, 0) + 1
            if s.kind == "claim":
                claimed.add(only)
        else:
            known_chunks = [c for c in dict.fromkeys(ids) if c in sources]
            if not known_chunks:
                continue
            first = sources[known_chunks[0]]
            for c in known_chunks:
                claims_per_chunk[c] = claims_per_chunk.get(c, 0) + 1
            if s.kind == "claim":
                claimed.update(known_chunks)
            support = len(known_chunks)
        text = s.text.strip()
        about = [slug for slug in dict.fromkeys([*s.about, *first.about] if s.about else first.about) if slug != own]
        item = _item(text, first, support, about, s.kind)
        if support > 1:
            item.elsewhere = _elsewhere(text, first, known_chunks, sources)
        heads = bool(first.heading_path) and defines_heading(text, first.heading_path[-1])
        # an authored entry said of this subject (a command's option, a class's method, routed
        # to its owner): the owner's page holds its members before other facts
        entry = s.kind == "claim" and text.startswith("`") and entry_label(text) > 0  # a label in code marks
        candidates.append((not defines(text), not heads, not entry, -support, 0, (0, first.chunk_id), text,
                           len(candidates), item))
    wanted = [n.lower() for n in names if n.strip()]
    titled = {" ".join(n.split()).casefold() for n in names if n.strip()}
    for chunk_id, source in sources.items():
        opens = _opens_own_section(source, titled)
        if claimed and chunk_id not in claimed and not opens and chunk_id not in openings:
            # A passage that only mentions the subject is about something else: its sentences
            # stay on their own subjects' pages (with no claim at all, any passage is all there is).
            continue
        excerpt = (opening_excerpt(source.paragraphs, EXCERPT_WORDS) if opens
                   else prose_excerpt(source.paragraphs, wanted, EXCERPT_WORDS))
        for piece in _pieces(excerpt, furniture) if excerpt and furniture else [excerpt] if excerpt else []:
            # One passage is one source; among excerpts, those holding more of the page's claims first.
            rank = (-claims_per_chunk.get(chunk_id, 0), chunk_id)
            item = _item(piece, source, 1, [slug for slug in source.about if slug != own], "excerpt")
            candidates.append((not defines(piece), not opens, True, -1, 1, rank, piece, len(candidates), item))
            opens = False  # (only the first piece opens the section)
    # A sentence defining the page's subject goes first, whatever its support: it is the lead.
    # Then the definitions of what the page's sections name (a class's methods, a command's
    # options with headings of their own): without them the rest of a section is unanchored.
    # Ties keep their order (the counter), so items themselves are never compared.
    candidates.sort()
    return [c[-1] for c in candidates]


def _opens_own_section(source: Source, titled: Collection[str]) -> bool:
    """Whether the passage opens the section named after the page: it starts with headings (the
    last ones of its heading path) of which one is a name of the page."""
    leading = 0
    for block in source.blocks:
        if not block or block[0] != "heading":
            break
        leading += 1
    # (its number aside: the chapter "13. The Maintainer's View" is the page "The Maintainer's View")
    return any(_KIND.sub("", clean_heading(h)).casefold() in titled
               for h in source.heading_path[-leading:]) if leading else False


# The kind an API reference's heading names before its subject ("Class StringUtils", "Package x.y").
_KIND = re.compile(r"^(?:class|interface|enum|package|module|exception|annotation\s+(?:type|interface)|record)\s+(?=\S)",
                   re.IGNORECASE)


@lru_cache(maxsize=65536)
def _sentence_key(text: str) -> str:
    """A statement as it is compared with others: case and spacing ignored (cached: a claim is
    offered to every page about its entities)."""
    return " ".join(text.lower().split())


_SMALLEST_COST = 8  # the ref overhead alone: no item costs less


def choose_evidence(
    ranked: Sequence[EvidenceItem],
    budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
    *,
    keep: Collection[str] | None = None,
    offered: Collection[str] | None = None,
) -> list[EvidenceItem]:
    """The items that fit in `budget`, numbered 1..N in rank order.

    For a page that already exists, pass `keep` (keys of the items it was written from) and
    `offered` (keys of every item it could have used then): kept items come first, then items
    new since (not in `offered`); evidence passed over before stays out. So a page whose
    evidence is full is not rewritten because some other fact appeared, and a removed item is
    not backfilled with older ones: the page changes only where its own evidence did.
    """
    if keep is None:
        passes: list[Iterable[int]] = [range(len(ranked))]
    else:
        keys = [evidence_key(item) for item in ranked]
        old = set(offered or ()) | set(keep)
        passes = [
            [i for i, k in enumerate(keys) if k in keep],
            [i for i, k in enumerate(keys) if k not in old],
        ]
    chosen: list[int] = []
    left = budget
    for indexes in passes:  # no item is in both passes: each is counted once
        for i in indexes:
            if left < _SMALLEST_COST:
                break  # nothing fits any more
            cost = count_tokens(ranked[i].text) + 8  # + ref number, document and headings
            if cost <= left:
                chosen.append(i)
                left -= cost
    out = [ranked[i] for i in sorted(chosen)]
    for n, item in enumerate(out, start=1):
        item.ref = n
    return out


def evidence_key(item: EvidenceItem) -> str:
    """What makes two items the same evidence across compiles, whichever chunk holds it now.

    A claim or relation is its sentence (an edited document re-chunks, the sentence stays);
    an excerpt is its place (document, headings) and opening words.
    """
    if item.kind == "excerpt":
        return _key(item.kind, item.text, item.document, tuple(item.heading_path))
    return _key(item.kind, item.text, "", ())


@lru_cache(maxsize=65536)
def _key(kind: str, text: str, document: str, heading_path: tuple[str, ...]) -> str:
    # Cached: the same claim or excerpt is keyed for every page it is offered to.
    if kind == "excerpt":
        return text_hash("\x1f".join(["excerpt", document, *heading_path, _opening(text)]))[:16]
    return text_hash("\x1f".join([kind, _sentence_key(text)]))[:16]


def _opening(text: str, words: int = 12) -> str:
    """The first `words` words of an excerpt, lowercased, as its key has them: the excerpt's
    whitespace runs made single spaces, then split at each space (so a leading or trailing run
    gives an empty word). Only the opening is split: excerpts run to 90 words."""
    lead = [""] if text[:1].isspace() else []
    need = words - len(lead)
    parts = text.split(None, need)  # `need` words, then the rest unsplit
    if len(parts) > need:
        return " ".join([*lead, *parts[:need]]).lower()
    trail = [""] if text[-1:].isspace() and len(parts) < need else []
    return " ".join([*lead, *parts, *trail]).lower()


def _item(text: str, source: Source, support: int, about: list[str], kind: str) -> EvidenceItem:
    # Positional (ref, text, chunk_id, document, heading_path, support, about, kind): a page
    # makes a hundred of these.
    position = _position(source, text)
    item = EvidenceItem(0, text, source.chunk_id, source.document, list(source.heading_path), support, about, kind,
                        position)
    if position >= 0 and source.entries:
        at = position - source.start
        reach = at + len(" ".join(text.split()))
        item.entries = [(source.start + start, source.start + end, term) for start, end, term in source.entries
                        if start < reach and at < end]
    if position >= 0:
        item.examples = source.leaning.example_names(text)
        item.intros = source.leaning.intros(position, text)
        item.after_code = source.leaning.after_code(position, text)
    return item


def _elsewhere(text: str, first: Source, chunk_ids: Sequence[str], sources: dict[str, Source]) -> list[tuple[str, int]]:
    """Where the sentence also stands under other headings than its first chunk's."""
    out = []
    for cid in chunk_ids:
        other = sources[cid]
        if cid != first.chunk_id and (other.document, other.heading_path) != (first.document, first.heading_path):
            at = _position(other, text)
            if at >= 0:
                out.append((cid, at))
    return out


def _position(source: Source, text: str) -> int:
    """Where `text` stands in its document: the chunk's start and where its opening words are
    in the chunk's single-spaced words (close enough to order a document's passages); -1 when
    the chunk does not hold them. The whole sentence is looked for first: two entries' sentences
    may open alike ("This should be used when creating a `WebSupport` object that will be used
    to build data." / "... to retrieve data.")."""
    whole = " ".join(text[:400].split()).rstrip("…").rstrip()
    at = source.flat.find(whole) if whole else -1
    if at < 0:
        opening = " ".join(text[:160].split()[:12]).rstrip("…")
        at = source.flat.find(opening) if opening else -1
    return source.start + at if at >= 0 else -1


def _pieces(excerpt: str, furniture: Collection[str]) -> list[str]:
    """The excerpt's runs between its furniture sentences, each a contiguous passage of its
    chunk (so it can be quoted and checked), in order."""
    pieces: list[list[str]] = [[]]
    for block in excerpt.split("\n\n"):
        sentences = split_sentences(block)
        if not any(text_key(s) in furniture for s in sentences):
            pieces[-1].append(block)
            continue
        run: list[str] = []
        for sentence in sentences:
            if text_key(sentence) in furniture:
                if run:
                    pieces[-1].append(" ".join(run))
                pieces.append([])
                run = []
            else:
                run.append(sentence)
        if run:
            pieces[-1].append(" ".join(run))
    return ["\n\n".join(p) for p in pieces if p]
