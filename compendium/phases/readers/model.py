"""The document model every reader produces: normalised text cut into typed blocks."""

from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from ...errors import InputError

# Block kinds. Prose kinds hold sentences; the others are structure and never do.
PROSE_KINDS = frozenset({"paragraph", "item", "definition", "quote"})
KINDS = PROSE_KINDS | {"heading", "term", "code", "table"}


@dataclass(frozen=True, slots=True)
class Block:
    """One structural piece of a document: `text[start:end]` of the ParsedDocument.

    Text conventions, the same for every format: a heading is its plain text; prose is plain
    text with inline code in single backticks; an item starts with "- " (or "N. ") indented two
    spaces per level; a quote starts with "> "; code is fenced with its language; a table is a
    pipe table whose first row is the header.
    """

    kind: str  # heading | paragraph | item | term | definition | quote | code | table
    start: int
    end: int
    heading_path: tuple[str, ...]  # headings above it; a heading's path ends with itself
    level: int = 0  # heading level (1-6), list depth of an item (1 = top)
    language: str = ""  # of a code block, when the source says
    rows: tuple[tuple[str, ...], ...] = ()  # cells of a table, header row first


@dataclass(slots=True)
class ParsedDocument:
    text: str  # normalised text: blocks separated by a blank line
    title: str
    format: str  # markdown | text | rest | html | pdf | docx
    blocks: list[Block] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # problems that did not stop the read


class Deadline:
    """The time a reader may spend on one document; readers call `check` as they go."""

    def __init__(self, label: str, seconds: float):
        self.label = label
        self.seconds = seconds
        self.until = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.until:
            raise InputError(
                f"{self.label}: reading took longer than the {self.seconds:g} s limit",
                hint="split the file into smaller ones or raise the time limit",
            )


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean(text: str) -> str:
    """NFC, Unix newlines, no control characters (they break JSON and prompts)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", unicodedata.normalize("NFC", text))


def one_line(text: str) -> str:
    # str.split and regex \s agree on what whitespace is; split is the cheaper of the two.
    return " ".join(clean(text).split())


def table_text(rows: list[list[str]]) -> str:
    """A pipe table: header row, separator, body rows; pipes inside cells escaped."""
    width = max(len(r) for r in rows)
    lines = []
    for i, row in enumerate(rows):
        cells = [c.replace("|", "\\|") for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


class Builder:
    """Appends blocks to the normalised text, tracking the heading path and spans."""

    def __init__(self, deadline: Deadline | None = None) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []  # (level, heading) of the open sections
        self.path: tuple[str, ...] = ()
        self.deadline = deadline

    def heading(self, level: int, text: str) -> None:
        text = one_line(text)
        if not text:
            return
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, text))
        self.path = tuple(h for _, h in self.headings)
        self._add(Block("heading", 0, 0, self.path, level=level), text)

    def prose(self, kind: str, text: str, *, level: int = 0, ordinal: int = 0) -> None:
        """A paragraph, item, term, definition or quote; whitespace runs become one space."""
        text = one_line(text)
        if not text:
            return
        if kind == "item":
            marker = f"{ordinal}. " if ordinal else "- "
            text = "  " * max(level - 1, 0) + marker + text
        elif kind == "quote":
            text = "> " + text
        self._add(Block(kind, 0, 0, self.path, level=level), text)

    def paragraph_lines(self, text: str) -> None:
        """A paragraph of plain text or PDF, its line breaks kept as the source has them."""
        text = re.sub(r"[ \t]+\n", "\n", clean(text)).strip()
        if text:
            self._add(Block("paragraph", 0, 0, self.path), re.sub(r"\n{2,}", "\n", text))

    def code(self, text: str, language: str = "") -> None:
        text = clean(text).strip("\n")
        if not text.strip():
            return
        language = one_line(language).split(" ")[0]
        fence = "````" if "```" in text else "```"
        self._add(Block("code", 0, 0, self.path, language=language), f"{fence}{language}\n{text}\n{fence}")

    def table(self, rows: list[list[str]]) -> None:
        rows = [[one_line(c) for c in row] for row in rows]
        rows = [row for row in rows if any(row)]
        if not rows:
            return
        width = max(len(r) for r in rows)
        rows = [row + [""] * (width - len(row)) for row in rows]
        block = Block("table", 0, 0, self.path, rows=tuple(tuple(r) for r in rows))
        self._add(block, table_text(rows))

    def _add(self, block: Block, text: str) -> None:
        if self.parts:
            self.parts.append("\n\n")
            self.length += 2
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        self.blocks.append(
            Block(block.kind, start, self.length, block.heading_path, block.level, block.language, block.rows)
        )
        if self.deadline is not None and len(self.blocks) % 256 == 0:
            self.deadline.check()

    def first_heading(self) -> str:
        """The top-level heading that comes first (an h1 when there is one)."""
        headings = [b for b in self.blocks if b.kind == "heading"]
        if not headings:
            return ""
        best = min(headings, key=lambda b: (b.level, b.start))
        return best.heading_path[-1]

    def finish(self, fmt: str, title: str, metadata: dict[str, Any], warnings: list[str]) -> ParsedDocument:
        return ParsedDocument("".join(self.parts), title, fmt, self.blocks, metadata, warnings)
