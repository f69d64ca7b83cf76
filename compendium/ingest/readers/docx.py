"""DOCX reader: headings from heading styles, lists, code and quotes from styles, tables whole."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from ...errors import InputError
from .builder import Builder
from .model import Deadline, ParsedDocument, one_line
from .source import title_from_name

_HEADING = re.compile(r"Heading (\d)")
_CODE_STYLES = ("code", "source code", "html preformatted", "macro text", "plain text", "preformatted")
_QUOTE_STYLES = ("quote", "intense quote", "block text")
MAX_UNPACKED = 256 * 1024 * 1024  # what a DOCX may unpack to: a zip bomb fails alone


def read_docx(data: bytes, path: Path, deadline: Deadline) -> ParsedDocument:
    import zipfile

    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError) as exc:
        raise InputError(f"{path}: corrupt or unreadable DOCX: {exc}", hint="re-save it from Word") from exc
    if unpacked > MAX_UNPACKED:
        raise InputError(
            f"{path}: DOCX unpacks to {unpacked / 1e6:.0f} MB, over the {MAX_UNPACKED / 1e6:.0f} MB limit",
            hint="a document this large is likely a zip bomb; re-save it or split it",
        )
    try:
        document = docx.Document(io.BytesIO(data))
        items = list(document.iter_inner_content())
        core_title = one_line(document.core_properties.title or "")
        author = document.core_properties.author or ""
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise InputError(f"{path}: corrupt or unreadable DOCX: {exc}", hint="re-save it from Word") from exc
    except Exception as exc:  # lxml and zip errors come in many types
        raise InputError(f"{path}: corrupt or unreadable DOCX: {exc}", hint="re-save it from Word") from exc
    out = Builder(deadline)
    styled_title = _Paragraphs(out).run(items)
    title = core_title or styled_title or out.first_heading() or title_from_name(path)
    return out.finish("docx", title, {"author": author} if author else {}, [])


class _Paragraphs:
    def __init__(self, out: Builder):
        self.out = out
        self.code: list[str] = []
        self.number = 0  # running number of a "List Number" run

    def run(self, items: list[Any]) -> str:
        from docx.table import Table

        styled_title = ""
        for item in items:
            if isinstance(item, Table):
                self._end_code()
                self.out.table(_rows(item))
                continue
            style = _style_name(item.style)
            text = item.text
            lower = style.lower()
            if not lower.startswith("list number"):
                self.number = 0
            if lower.startswith(_CODE_STYLES):
                self.code.append(text)
                continue
            self._end_code()
            level = _HEADING.fullmatch(style)
            if level:
                self.out.heading(int(level.group(1)), text)
            elif style == "Title":
                styled_title = styled_title or one_line(text)
                self.out.heading(0, text)  # above the Heading 1 sections
            elif lower.startswith("list") or _numbered(item):
                depth = int(style[-1]) if style[-1:].isdigit() else _indent_level(item)
                ordinal = 0
                if lower.startswith("list number"):
                    self.number += 1
                    ordinal = self.number
                self.out.prose("item", text, level=depth, ordinal=ordinal)
            elif lower.startswith(_QUOTE_STYLES):
                self.out.prose("quote", text)
            else:
                self.out.prose("paragraph", text)
        self._end_code()
        return styled_title

    def _end_code(self) -> None:
        if self.code:
            self.out.code("\n".join(self.code))
            self.code = []


def _style_name(style: Any) -> str:
    """The style's name, or that of the heading style it is based on ("My Heading" on
    "Heading 2" is a level-2 heading)."""
    name = (style.name if style is not None else "") or ""
    base = style
    for _ in range(4):  # a short chain: styles based on styles based on a heading
        if base is None or _HEADING.fullmatch(base.name or "") or base.name == "Title":
            return base.name if base is not None else name
        base = base.base_style
    return name


def _numbered(paragraph: Any) -> bool:
    props = paragraph._p.pPr
    return props is not None and props.numPr is not None


def _indent_level(paragraph: Any) -> int:
    props = paragraph._p.pPr
    if props is None or props.numPr is None or props.numPr.ilvl is None:
        return 1
    return int(props.numPr.ilvl.val) + 1


def _rows(table: Any) -> list[list[str]]:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        seen: list[Any] = []
        for cell in row.cells:
            # A cell merged across columns comes once per column: its text goes in the first,
            # as in HTML's colspan, so every column keeps its meaning.
            if any(cell._tc is tc for tc in seen):
                cells.append("")
                continue
            seen.append(cell._tc)
            cells.append(" ".join(p.text for p in cell.paragraphs))
        rows.append(cells)
    return rows
