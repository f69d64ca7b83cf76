"""PDF reader: page text from pypdf, headings from the document outline where there is one."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from ...errors import InputError
from .model import Builder, Deadline, ParsedDocument, clean, one_line
from .source import title_from_name
from .text import paragraphs_of


def read_pdf(data: bytes, path: Path, deadline: Deadline) -> ParsedDocument:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputError(f"{path}: PDF is encrypted", hint="save an unprotected copy")
        pages = []
        for page in reader.pages:
            pages.append(clean(page.extract_text() or ""))
            deadline.check()
        outline = _outline(reader)
        info = reader.metadata or {}
        pdf_title = one_line(str(info.get("/Title") or ""))
        meta: dict[str, Any] = {"pages": len(pages)}
        author = info.get("/Author")
        if author:
            meta["author"] = str(author)
    except InputError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise InputError(f"{path}: corrupt or unreadable PDF: {exc}", hint="re-export the PDF") from exc
    out = Builder(deadline)
    by_page: dict[int, list[tuple[int, str]]] = {}
    for page_number, level, title in outline:
        by_page.setdefault(page_number, []).append((level, title))
    for number, text in enumerate(pages):
        cursor = 0
        for level, title in by_page.get(number, []):
            found = _find_title(text, title, cursor)
            if found is not None:
                _paragraphs(out, text[cursor : found[0]])
                cursor = found[1]
            out.heading(level, title)
        _paragraphs(out, text[cursor:])
    first = next((ln.strip() for page in pages for ln in page.splitlines() if ln.strip()), "")[:120]
    title = pdf_title or (outline[0][2] if outline else "") or first or title_from_name(path)
    meta["outline"] = len(outline)
    return out.finish("pdf", title, meta, [])


def _outline(reader: Any) -> list[tuple[int, int, str]]:
    """(page index, level, title) of every outline entry, in outline order, without recursion."""
    entries: list[tuple[int, int, str]] = []
    stack: list[tuple[list[Any], int]] = [(list(reversed(reader.outline or [])), 1)]
    while stack:
        items, level = stack[-1]
        if not items:
            stack.pop()
            continue
        item = items.pop()
        if isinstance(item, list):  # the children of the entry just taken
            stack.append((list(reversed(item)), level + 1))
            continue
        try:
            page = reader.get_destination_page_number(item)
        except Exception:  # a dangling destination: the heading still counts, at the start
            page = 0
        title = one_line(str(getattr(item, "title", "") or ""))
        if title and page is not None and page >= 0:
            entries.append((page, level, title))
    entries.sort(key=lambda e: e[0])  # stable: outline order within a page
    return entries


def _find_title(text: str, title: str, start: int) -> tuple[int, int] | None:
    """Where the heading's words stand on the page as a line of their own (spacing may differ)."""
    words = [re.escape(w) for w in title.split()]
    if not words:
        return None
    match = re.compile(r"(?:^|\n)[ \t]*" + r"\s+".join(words) + r"[ \t]*(?=\n|$)", re.I).search(text, start)
    return (match.start(), match.end()) if match else None


def _paragraphs(out: Builder, text: str) -> None:
    for para in paragraphs_of(text):
        # PDF lines are layout, not structure: re-join words hyphenated at a line end.
        out.prose("paragraph", re.sub(r"(\w)-\n(\w)", r"\1\2", para))
