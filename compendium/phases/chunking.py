"""Splits a parsed document into chunks under a token budget: by heading, paragraph, sentence."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ..fingerprint import short_id, text_hash
from ..tokens import count_tokens, truncate_to_tokens
from .readers import Block, ParsedDocument


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


def chunk_document(
    doc: ParsedDocument, *, max_tokens: int, overlap_tokens: int, document_id: str = ""
) -> list[ChunkSpan]:
    """Chunks of `doc` in reading order. A chunk never spans two sections (a section is a
    heading and what follows it up to the next heading), except that a heading with no text
    of its own is joined to the section after it. Sections over the budget are split at
    paragraphs, then sentences, then words; the next chunk of the same section starts with
    the previous chunk's last sentences, up to `overlap_tokens`."""
    if max_tokens < 1:
        raise ValueError("max_tokens must be positive")
    overlap_tokens = max(0, min(overlap_tokens, max_tokens // 2))
    spans: list[tuple[int, int, tuple[str, ...]]] = []
    for blocks in _sections(doc.blocks):
        spans.extend(_split_section(doc.text, blocks, max_tokens, overlap_tokens))
    seen: Counter[str] = Counter()
    chunks = []
    for ordinal, (start, end, path) in enumerate(spans):
        text = doc.text[start:end]
        digest = text_hash(text)
        chunk_id = short_id(document_id, digest, seen[digest])
        seen[digest] += 1
        chunks.append(
            ChunkSpan(chunk_id, ordinal, start, end, text, path, count_tokens(text), digest)
        )
    return chunks


def _sections(blocks: list[Block]) -> list[list[Block]]:
    """Blocks grouped by heading; a heading-only section joins the next one."""
    sections: list[list[Block]] = []
    for block in blocks:
        if block.kind == "heading" or not sections:
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


def _split_section(
    text: str, blocks: list[Block], max_tokens: int, overlap: int
) -> list[tuple[int, int, tuple[str, ...]]]:
    # The section's path is that of its last heading, i.e. its deepest one after merging.
    path = blocks[-1].heading_path
    start, end = blocks[0].start, blocks[-1].end
    if count_tokens(text[start:end]) <= max_tokens:
        return [(start, end, path)]
    units: list[tuple[int, int]] = []  # paragraphs that fit, else their sentences or pieces
    for block in blocks:
        if count_tokens(text[block.start : block.end]) <= max_tokens:
            units.append((block.start, block.end))
            continue
        for s, e in _sentences(text, block):
            if count_tokens(text[s:e]) <= max_tokens:
                units.append((s, e))
            else:
                units.extend(_pieces(text, s, e, max_tokens))
    out: list[tuple[int, int, tuple[str, ...]]] = []
    chunk_start, chunk_end = units[0]
    for s, e in units[1:]:
        if count_tokens(text[chunk_start:e]) <= max_tokens:
            chunk_end = e
            continue
        out.append((chunk_start, chunk_end, path))
        tail = _overlap_start(text, chunk_start, chunk_end, overlap)
        if tail is not None and count_tokens(text[tail:e]) <= max_tokens:
            chunk_start = tail
        else:
            chunk_start = s
        chunk_end = e
    out.append((chunk_start, chunk_end, path))
    return out


# A sentence ends at . ! ? (with closing quotes/brackets) before whitespace, or at a line end
# in lists, tables and code, where a line is the natural unit.
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'’”)\]]*(?=\s)|\n")


def _sentences(text: str, block: Block) -> list[tuple[int, int]]:
    """Spans of the sentences (or lines) of a block, whitespace trimmed, covering its text."""
    spans = []
    s = block.start
    region = text[block.start : block.end]
    boundaries = [m.end() + block.start for m in _SENTENCE_END.finditer(region)]
    for b in [*boundaries, block.end]:
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


def _overlap_start(text: str, start: int, end: int, overlap: int) -> int | None:
    """Where the trailing sentences of text[start:end] worth at most `overlap` tokens begin."""
    if overlap <= 0:
        return None
    region = text[start:end]
    cuts = [m.end() for m in _SENTENCE_END.finditer(region) if m.end() < len(region)]
    best = None
    for cut in reversed(cuts):
        begin = cut
        while begin < len(region) and region[begin].isspace():
            begin += 1
        if begin >= len(region):
            continue
        if count_tokens(region[begin:]) > overlap:
            break
        best = start + begin
    return best
