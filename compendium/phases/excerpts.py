"""Excerpts of a chunk: its paragraphs, each prose or not, and a passage of prose around a name."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from ..engines.offline.definitions import is_purpose_line
from ..ingest.readers.model import PROSE_KINDS

EXCERPT_WORDS = 90
_BLANK_LINES = re.compile(r"\n[ \t]*\n")


def excerpt_around(
    text: str, names: Sequence[str], words: int = EXCERPT_WORDS, *, blocks: Sequence[Sequence] = ()
) -> str:
    """Up to `words` words of `text`, from the sentence holding the first mention of a name.

    The excerpt stays within prose: it starts in the paragraph of the mention and runs on only
    through the paragraphs that follow it, stopping at a heading, caption or other line that is
    not a sentence, so a heading is never glued to the paragraph after it. It is a contiguous
    passage of `text` (modulo whitespace), so it can be quoted and checked. `blocks`, the
    reader's [kind, start, end] spans, mark terms, headings, code and tables as never prose.
    """
    paragraphs = split_paragraphs(text, not_prose_starts(blocks))
    return prose_excerpt(paragraphs, [n.lower() for n in names if n.strip()], words)


def prose_excerpt(paragraphs: Sequence[Paragraph], wanted: Sequence[str], words: int) -> str:
    """excerpt_around over a text's paragraphs, for names already lowercased."""
    if not paragraphs:
        return ""
    for i, (block, prose, lower, _words) in enumerate(paragraphs):
        hits = [at for at in map(lower.find, wanted) if at >= 0]
        if not hits:
            continue
        if prose:
            ends = [m.end() for m in _SENTENCE_END.finditer(block, 0, min(hits))]
            return _run_from(paragraphs, i, ends[-1] if ends else 0, words)
        if i + 1 < len(paragraphs) and paragraphs[i + 1].prose:  # a heading naming the subject
            return _run_from(paragraphs, i + 1, 0, words)
    first = next((i for i, p in enumerate(paragraphs) if p.prose), 0)
    return _run_from(paragraphs, first, 0, words)


def opening_excerpt(paragraphs: Sequence[Paragraph], words: int) -> str:
    """Up to `words` words of prose from a passage's first prose paragraph on: what opens it."""
    first = next((i for i, p in enumerate(paragraphs) if p.prose), None)
    return "" if first is None else _run_from(paragraphs, first, 0, words)


# Where a sentence ends and the next begins: never in "`.. py:data::`" (a directive written
# as code) or an ellipsis.
_SENTENCE_END = re.compile(r"(?<![.\s])\.\s")


def _run_from(paragraphs: Sequence[Paragraph], first: int, start: int, words: int) -> str:
    """Paragraphs from `start` in paragraph `first` on, while they are prose and the words taken
    are fewer than `words`; cut to `words` words. Paragraphs stay apart (a blank line between),
    so a list item's number never reads as the end of the sentence before it ("… it runs: 1.").
    Paragraphs are single-spaced and start is a word's start, so words are counted, not split."""
    block = paragraphs[first].block
    taken = [block[start:]]
    count = paragraphs[first].words - block.count(" ", 0, start)
    for block, prose, _lower, block_words in paragraphs[first + 1 :]:
        if count >= words or not prose:
            break
        taken.append(block)
        count += block_words
    if count > words:  # the last paragraph taken is cut to the words left
        keep = words - (count - taken[-1].count(" ") - 1)
        taken[-1] = " ".join(taken[-1].split(" ", keep)[:keep]) + " …"
    return "\n\n".join(taken)


class Paragraph(NamedTuple):
    block: str  # flattened to one line
    prose: bool
    lower: str  # `block` lowercased, where names are looked for
    words: int


def not_prose_starts(blocks: Sequence[Sequence]) -> tuple[int, ...]:
    return tuple(int(b[1]) for b in blocks if b[0] not in PROSE_KINDS)


@lru_cache(maxsize=4096)
def split_paragraphs(text: str, starts_not_prose: tuple[int, ...]) -> tuple[Paragraph, ...]:
    """Blank-line separated blocks of `text`, each flattened to one line, with whether it is
    prose: by its shape, and never where the reader says it starts a term, heading, code or table."""
    not_prose = set(starts_not_prose)
    out, start = [], 0
    for gap in [*_BLANK_LINES.finditer(text), None]:
        end = gap.start() if gap else len(text)
        raw = text[start:end]
        words = raw.split()
        if words:
            block = " ".join(words)
            first = start + len(raw) - len(raw.lstrip())
            out.append(Paragraph(block, _is_prose(block, len(words)) and first not in not_prose, block.lower(), len(words)))
        start = gap.end() if gap else end
    return tuple(out)


def _is_prose(block: str, words: int) -> bool:
    """A sentence-like paragraph (of `words` words), not a heading, label or caption; a reference
    page's purpose line ("EXPLAIN — show the execution plan of a statement") reads as its definition."""
    return block.endswith((".", "!", "?", ":", ")", '"', "”")) or words >= 12 or is_purpose_line(block)
