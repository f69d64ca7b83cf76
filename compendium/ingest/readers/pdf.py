"""PDF reader: page text from pypdf, headings from the document outline where there is one.

pypdf's text keeps every word space on the real PDFs we measured (nine manuals from pdfTeX,
FOP/DocBook and Chrome: no run-together word in 240,000, where its layout mode ran 25 together
and pypdfium2 38). A page whose words are set closer than pypdf's space threshold (tight
justification: "Asawayofshowingourcommitment") is read again with pdfminer.six at a narrow
word margin, which keeps those spaces; only then, since at that margin it splits 25 kerned words
("ob ject") on the same nine manuals."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from ...errors import InputError
from .builder import Builder
from .model import Deadline, ParsedDocument, clean, one_line
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
        tight = [n for n, text in enumerate(pages) if _run_together(text)]
        for n, text in _spaced(data, tight, deadline).items():
            if not _run_together(text):
                pages[n] = text
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


# Share of a page's letters standing in words of 16 letters or more: at most 0.11 on the measured
# manuals, near 1 where the spaces are lost.
_LONG_WORD = re.compile(r"[^\W\d_]{16,}")
_LETTERS = re.compile(r"[^\W\d_]+")


def _run_together(text: str) -> bool:
    letters = sum(len(w) for w in _LETTERS.findall(text))
    return letters >= 200 and sum(len(w) for w in _LONG_WORD.findall(text)) > 0.3 * letters


def _spaced(data: bytes, pages: list[int], deadline: Deadline) -> dict[int, str]:
    """The text of `pages` read by pdfminer.six with a word margin of 0.05 (a gap of a twentieth
    of a character's width is a space), each page's boxes in reading order."""
    if not pages:
        return {}
    import logging

    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams, LTTextContainer

    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # its notes on odd fonts are no warnings of ours
    out = {}
    layouts = extract_pages(io.BytesIO(data), page_numbers=set(pages), laparams=LAParams(word_margin=0.05))
    for n, layout in zip(sorted(pages), layouts, strict=False):
        out[n] = clean("".join(box.get_text() for box in layout if isinstance(box, LTTextContainer)))
        deadline.check()
    return out


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
