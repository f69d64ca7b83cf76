"""Source passages for exports: which chunk a footnote cites, how to name it, and its sentences."""

from __future__ import annotations

import re

from ..storage.records import Chunk, Document, Page
from .snapshot import WikiSnapshot

_NOTE_CHUNK = re.compile(r"\bchunk\s+([A-Za-z0-9_-]+)\s*$")
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"((?<=[.!?])\s+)(?=\S)")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    "the a an and or of to in on for is are be by with it its as at that this from".split()
)


def cited_chunk(note: str, fallback: str | None = None) -> str | None:
    """The chunk id a footnote definition names ('… — chunk 63e0…'), else `fallback`."""
    match = _NOTE_CHUNK.search(note.strip())
    return match.group(1) if match else fallback


def cited_passage(wiki: WikiSnapshot, page: Page, label: str, note: str) -> Chunk | None:
    """The exported passage footnote `label` (defined as `note`) of `page` cites: the chunk its
    note names, else the page's label-th cited chunk; None when its document is not exported."""
    fallback = None
    if label.isdigit() and 0 < int(label) <= len(page.cited_chunks):
        fallback = page.cited_chunks[int(label) - 1]
    chunk = wiki.chunk_by_id.get(cited_chunk(note, fallback) or "")
    return chunk if chunk is not None and chunk.document_id in wiki.source_name else None


def source_label(document: Document | None, chunk: Chunk) -> str:
    """'Vacuum › Cost-based delay': the document's title, then the headings not repeating it."""
    title = (document.title or document.path) if document else ""
    headings = [h for h in chunk.heading_path if h]
    if headings and title and headings[0].strip().casefold() == title.strip().casefold():
        headings = headings[1:]
    return " › ".join([p for p in [title, *headings] if p]) or "Source"


def passage_blocks(chunk: Chunk) -> list[str]:
    """The passage's paragraphs; a leading line repeating its own heading is left out (the
    heading path shows it)."""
    blocks = [b.strip() for b in _PARAGRAPH.split(chunk.text) if b.strip()]
    if len(blocks) > 1 and chunk.heading_path and blocks[0] == chunk.heading_path[-1].strip():
        blocks = blocks[1:]
    return blocks


def paragraphs(chunk: Chunk) -> list[list[tuple[str, str]]]:
    """The passage's paragraphs, each a list of (sentence, the spacing after it), so line
    breaks inside a paragraph (list items) survive. Code and tables stay one piece."""
    out = []
    for block in passage_blocks(chunk):
        if block.startswith(("```", "    ", "\t", "|")):
            out.append([(block, "")])
            continue
        pieces = [*_SENTENCE.split(block), ""]
        out.append([(pieces[i], pieces[i + 1]) for i in range(0, len(pieces) - 1, 2) if pieces[i].strip()])
    return out


def _words(text: str) -> set[str]:
    return {w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if len(w) > 1 and w not in _STOP}


def best_sentence(chunk: Chunk, citing: str) -> int:
    """Index (over all sentences of `paragraphs(chunk)`) of the one that best supports the
    citing sentence, by shared words: it was written from this very passage. 0 when none share."""
    wanted = _words(citing)
    best, best_score = 0, 0
    flat = [sentence for para in paragraphs(chunk) for sentence, _ in para]
    for i, sentence in enumerate(flat):
        score = len(_words(sentence) & wanted)
        if score > best_score:
            best, best_score = i, score
    return best
