"""Plain text reader: paragraphs at blank lines; reST-looking .txt files go to the reST reader."""

from __future__ import annotations

import re
from pathlib import Path

from .builder import Builder
from .model import Deadline, ParsedDocument, clean
from .source import decode, title_from_name

_BLANK = re.compile(r"\n[ \t]*\n")


def paragraphs_of(text: str) -> list[str]:
    return [p for p in _BLANK.split(text) if p.strip()]


def read_text(data: bytes, path: Path, deadline: Deadline) -> ParsedDocument:
    from .rest import looks_like_rest, read_rest_text

    warnings: list[str] = []
    text = clean(decode(data, path, warnings))
    if looks_like_rest(text):
        doc = read_rest_text(text, path, deadline, strict=True)
        if doc is not None:
            doc.warnings[:0] = warnings
            return doc
    out = Builder(deadline)
    for para in paragraphs_of(text):
        out.paragraph_lines(para)
    first = text.strip().split("\n", 1)[0].strip()
    title = first if 0 < len(first) <= 120 else title_from_name(path)
    return out.finish("text", title, {}, warnings)
