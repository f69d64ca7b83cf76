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
    text with inline code in backticks (a longer run of them when the code holds one); an item
    starts with "- " (or "N. ") indented two spaces per level; a quote starts with "> "; code is
    fenced with its language; a table is a pipe table whose first row is the header.

    A definition is what the authors say a thing is (a definition-list item, a glossary entry,
    an API entry, a man page's NAME line, an identifier heading's first paragraph). Its text
    opens with the term as the source writes it (a signature for an API entry), code-like terms
    in backticks, then ": " and the description ("`--squash`: Produce the working tree ..."),
    so every sentence cited from it names what it is about. `term` is the bare name defined
    ("--squash", "Field"), `scope` its owner where the source gives one (the command of a man
    page, the class of a member, the group heading of a setting). A `term` block is a term
    with no description of its own.
    """

    kind: str  # heading | paragraph | item | term | definition | quote | code | table
    start: int
    end: int
    heading_path: tuple[str, ...]  # headings above it; a heading's path ends with itself
    level: int = 0  # heading level (1-6), list depth of an item (1 = top)
    language: str = ""  # of a code block, when the source says
    rows: tuple[tuple[str, ...], ...] = ()  # cells of a table, header row first
    term: str = ""  # of a definition: the name it defines; of a later paragraph or item of its entry, that name
    scope: str = ""  # of a definition: the owner of that name, "" when the source names none


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


def code_span(text: str) -> str:
    """`text` as inline code: fenced with one more backtick than its longest run inside, and
    padded with a space where it starts or ends with one (CommonMark's rule)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
