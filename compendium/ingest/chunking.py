"""Splits a parsed document into chunks under a token budget: by heading, block, sentence."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..fingerprint import short_id, text_hash
from ..tokens import count_tokens, truncate_to_tokens
from .examples import DocumentExamples
from .readers import PROSE_KINDS, Block, ParsedDocument


@dataclass(frozen=True, slots=True)
class ChunkSpan:
    """One chunk: `text == document text[start:end]`; the id depends only on the document id,
    the chunk's text and how many earlier chunks of the document have the same text."""

    id: str
    ordinal: int
    start: int
    end: int
    text: str
    heading_path: tuple[str, ...]
    tokens: int
    content_hash: str  # text_hash of text
    # (kind, start, end) in the chunk's text; a definition adds (..., term, scope) when it has them
    blocks: tuple[tuple[Any, ...], ...] = ()
    # (name, where in `text` its example ends; 0: before the chunk) of each code name the chunk's
    # text names that an example of its section made up (examples.DocumentExamples)
    examples: tuple[tuple[str, int], ...] = ()
    # its text starts in the paragraphs after a code block of its section (cut off before it)
    follows_code: bool = False


@dataclass(frozen=True, slots=True)
class _Unit:
    """The smallest piece a chunk boundary may fall between."""

    start: int
    end: int
    joinable: bool  # a whole block or a prose sentence: an overlap may start here


def chunk_document(
    doc: ParsedDocument, *, max_tokens: int, overlap_tokens: int, document_id: str = ""
) -> list[ChunkSpan]:
    """Chunks of `doc` in reading order. A chunk never spans two sections (a section is a
    heading and what follows it up to the next heading), except that a heading with no text
    of its own is joined to the section after it. Sections over the budget are split between
    blocks; a block over the budget is split at sentences if it is prose, at lines if it is
    code or a table (never at sentences), then at words. The next chunk of the same section
    starts with the previous chunk's last sentences, up to `overlap_tokens`."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be positive")
    overlap_tokens = max(0, min(overlap_tokens, max_tokens // 2))
    spans: list[tuple[int, int, tuple[str, ...], int | None, int]] = []
    sections = _sections(doc.blocks)
    examples = DocumentExamples(doc.text, sections)
    after_code = [_after_code(blocks) for blocks in sections]
    for index, blocks in enumerate(sections):
        for start, end, path, tokens in _split_section(doc.text, blocks, max_tokens, overlap_tokens):
            spans.append((start, end, path, tokens, index))
    seen: Counter[str] = Counter()
    chunks = []
    for ordinal, (start, end, path, tokens, index) in enumerate(spans):
        text = doc.text[start:end]
        digest = text_hash(text)
        chunk_id = short_id(document_id, digest, seen[digest])
        seen[digest] += 1
        chunks.append(
            ChunkSpan(
                chunk_id, ordinal, start, end, text, path, count_tokens(text) if tokens is None else tokens, digest,
                _blocks_within(sections[index], start, end), examples.made_up(index, start, end),
                _follows_code(sections[index], after_code[index], start),
            )
        )
    return chunks


def _blocks_within(blocks: list[Block], start: int, end: int) -> tuple[tuple[Any, ...], ...]:
    out: list[tuple[Any, ...]] = []
    for b in blocks:
        if b.end > start and b.start < end:
            span = (b.kind, max(b.start, start) - start, min(b.end, end) - start)
            # A definition cut by the chunk's start lost its term's text: it keeps the term.
            out.append((*span, b.term, b.scope) if b.term or b.scope else span)
    return tuple(out)


def _after_code(blocks: list[Block]) -> list[bool]:
    """For each count `i` of a section's first blocks, whether past the paragraphs among them
    the last block is code: a chunk starting after them starts in the prose after a code block."""
    out = [False]
    for block in blocks:
        out.append(block.kind == "code" or (block.kind == "paragraph" and out[-1]))
    return out


def _follows_code(blocks: list[Block], after_code: list[bool], start: int) -> bool:
    """Whether a chunk starting at `start` starts in the paragraphs after a code block (blocks
    are in order: the last one ending before `start` is found by bisection)."""
    return after_code[bisect_right(blocks, start, key=lambda b: b.end)]


def _sections(blocks: list[Block]) -> list[list[Block]]:
    """Blocks grouped by heading; a heading-only section joins the next one. A block whose path
    is its section's parent's (a man page's closing paragraph after a group of options) starts
    a section of its own, under that parent."""
    sections: list[list[Block]] = []
    for block in blocks:
        if block.kind == "heading" or not sections or _left(block, sections[-1][-1]):
            sections.append([block])
        else:
            sections[-1].append(block)
    merged: list[list[Block]] = []
    pending: list[Block] = []
    for section in sections:
        if all(b.kind == "heading" for b in section):
            pending.extend(section)
            continue
        merged.append(pending + section)
        pending = []
    if pending:  # headings at the very end with nothing after them
        if merged:
            merged[-1].extend(pending)
        else:
            merged.append(pending)
    return merged


def _left(block: Block, before: Block) -> bool:
    path, previous = block.heading_path, before.heading_path
    return len(path) < len(previous) and previous[: len(path)] == path


def _split_section(
    text: str, blocks: list[Block], max_tokens: int, overlap: int
) -> list[tuple[int, int, tuple[str, ...], int | None]]:
    """(start, end, heading path, tokens) of each chunk of a section; tokens when they were
    counted on the way (None otherwise): a chunk's text is not counted twice."""
    # The section's path is that of its last heading, i.e. its deepest one after merging.
    headings = [b for b in blocks if b.kind == "heading"]
    path = (headings[-1] if headings else blocks[-1]).heading_path
    start, end = blocks[0].start, blocks[-1].end
    whole = count_tokens(text[start:end])
    if whole <= max_tokens:
        return [(start, end, path, whole)]
    units: list[_Unit] = []
    for block in blocks:
        if count_tokens(text[block.start : block.end]) <= max_tokens:
            units.append(_Unit(block.start, block.end, True))
            continue
        prose = block.kind in PROSE_KINDS
        for s, e in _sentences(text, block) if prose else _lines(text, block):
            if count_tokens(text[s:e]) <= max_tokens:
                units.append(_Unit(s, e, prose))
            else:
                units.extend(_Unit(ps, pe, False) for ps, pe in _pieces(text, s, e, max_tokens))
    out: list[tuple[int, int, tuple[str, ...], int | None]] = []
    first = 0  # index of the unit the current chunk starts with
    chunk_start, chunk_end = units[0].start, units[0].end
    tokens: int | None = None  # of text[chunk_start:chunk_end], when counted
    for i in range(1, len(units)):
        unit = units[i]
        grown = count_tokens(text[chunk_start : unit.end])
        if grown <= max_tokens:
            chunk_end, tokens = unit.end, grown
            continue
        out.append((chunk_start, chunk_end, path, tokens))
        tail = _overlap_start(text, units[first:i], overlap)
        with_tail = count_tokens(text[tail : unit.end]) if tail is not None else max_tokens + 1
        if with_tail <= max_tokens:
            chunk_start, tokens = tail, with_tail  # type: ignore[assignment]
        else:
            chunk_start, tokens = unit.start, None
        first = next(j for j in range(first, i + 1) if units[j].start >= chunk_start)
        chunk_end = unit.end
    out.append((chunk_start, chunk_end, path, tokens))
    return out


# A sentence ends at . ! ? (with closing quotes/brackets) before whitespace, or at a line end.
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'’”)\]]*(?=\s)|\n")


def _sentences(text: str, block: Block) -> list[tuple[int, int]]:
    """Spans of the sentences of a prose block, whitespace trimmed, covering its text."""
    region = text[block.start : block.end]
    boundaries = [m.end() + block.start for m in _SENTENCE_END.finditer(region)]
    return _trimmed(text, block.start, [*boundaries, block.end])


def _lines(text: str, block: Block) -> list[tuple[int, int]]:
    """Spans of the lines of a code block or table (rows), whitespace trimmed."""
    region = text[block.start : block.end]
    boundaries = [m.end() + block.start for m in re.finditer(r"\n", region)]
    return _trimmed(text, block.start, [*boundaries, block.end])


def _trimmed(text: str, start: int, boundaries: list[int]) -> list[tuple[int, int]]:
    spans = []
    s = start
    for b in boundaries:
        seg = text[s:b]
        stripped = seg.strip()
        if stripped:
            lead = len(seg) - len(seg.lstrip())
            spans.append((s + lead, s + lead + len(stripped)))
        s = b
    return spans


def _pieces(text: str, start: int, end: int, max_tokens: int) -> list[tuple[int, int]]:
    """Hard cuts of a sentence (or code line) too long for one chunk, at spaces when possible."""
    pieces = []
    window = max_tokens * 16  # chars: far more than max_tokens tokens ever hold
    while start < end:
        head = truncate_to_tokens(text[start : min(end, start + window)], max_tokens)
        stop = start + max(len(head), 1)
        pieces.append((start, stop))
        start = stop
        while start < end and text[start].isspace():
            start += 1
    return pieces


def _overlap_start(text: str, units: list[_Unit], overlap: int) -> int | None:
    """Where the trailing whole sentences or blocks of the chunk just cut, worth at most
    `overlap` tokens, begin; never inside code or a table, never the whole chunk."""
    if overlap <= 0:
        return None
    best = None
    end = units[-1].end
    for unit in reversed(units[1:]):
        if not unit.joinable or count_tokens(text[unit.start : end]) > overlap:
            break
        best = unit.start
    return best
