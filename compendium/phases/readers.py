"""Reads Markdown, text, HTML, PDF and DOCX files into normalised text with headings and blocks."""

from __future__ import annotations

import io
import re
import unicodedata
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError

DEFAULT_MAX_BYTES = 20 * 1024 * 1024

FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}


@dataclass(frozen=True, slots=True)
class Block:
    """One structural piece of a document: `text[start:end]` of the ParsedDocument."""

    kind: str  # heading | paragraph | list | code | table
    start: int
    end: int
    heading_path: tuple[str, ...]  # headings above it; a heading's path ends with itself


@dataclass(slots=True)
class ParsedDocument:
    text: str  # normalised text: blocks separated by a blank line
    title: str
    format: str  # markdown | text | html | pdf | docx
    blocks: list[Block] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # problems that did not stop the read


def read_document(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> ParsedDocument:
    """Parse one file by its extension. Raises InputError naming the file when it cannot be
    used: unsupported, empty, too large, binary, or corrupt."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"{path}: unsupported file type {path.suffix!r}",
            hint=f"supported: {', '.join(sorted(FORMATS))}",
        )
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(
                f"{path}: file is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.1f} MB limit",
                hint="split it into smaller files or raise the size limit",
            )
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    if not data.strip():
        raise InputError(f"{path}: file is empty", hint="add content or remove the file")
    doc = _READERS[fmt](data, path)
    if not doc.text.strip():
        raise InputError(f"{path}: no text could be extracted", hint=_NO_TEXT_HINT.get(fmt))
    return doc


_NO_TEXT_HINT = {"pdf": "a scanned PDF needs OCR first", "html": "the page has no body text"}


class _Builder:
    """Appends blocks to the normalised text, tracking the heading path and spans."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []  # (level, heading) of the open sections

    def heading(self, level: int, text: str) -> None:
        text = " ".join(_clean(text).split())
        if not text:
            return
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, text))
        self._add("heading", text)

    def block(self, kind: str, text: str) -> None:
        text = _clean(text).strip("\n")
        if kind != "code":
            text = re.sub(r"[ \t]+\n", "\n", text).strip()
            text = re.sub(r"\n{3,}", "\n\n", text)
        if text.strip():
            self._add(kind, text)

    def _add(self, kind: str, text: str) -> None:
        if self.parts:
            self.parts.append("\n\n")
            self.length += 2
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        path = tuple(h for _, h in self.headings)
        self.blocks.append(Block(kind, start, self.length, path))

    def first_heading(self) -> str:
        """The top-level heading that comes first (an h1 when there is one)."""
        headings = [b for b in self.blocks if b.kind == "heading"]
        if not headings:
            return ""
        best = min(headings, key=lambda b: (len(b.heading_path), b.start))
        return best.heading_path[-1]

    def finish(self, fmt: str, title: str, metadata: dict[str, Any], warnings: list[str]) -> ParsedDocument:
        return ParsedDocument("".join(self.parts), title, fmt, self.blocks, metadata, warnings)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _clean(text: str) -> str:
    """NFC, Unix newlines, no control characters (they break JSON and prompts)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", unicodedata.normalize("NFC", text))


def _decode(data: bytes, path: Path, warnings: list[str]) -> str:
    """UTF-8 (BOM allowed) or UTF-16 with BOM; otherwise decode with replacement and warn."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: invalid UTF-16 text", hint="save it as UTF-8") from exc
    if b"\x00" in data[:8192]:
        raise InputError(f"{path}: looks like a binary file (NUL bytes)", hint="only text belongs in this file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        bad = text.count("\ufffd")
        if bad > max(16, len(text) // 10):
            raise InputError(
                f"{path}: not text: {bad} undecodable bytes", hint="save it as UTF-8 text"
            ) from exc
        warnings.append(
            f"{path}: not valid UTF-8 (first bad byte at offset {exc.start}); "
            f"{bad} characters replaced"
        )
        return text


def _title_from_name(path: Path) -> str:
    return path.stem.replace("_", " ").replace("-", " ").strip() or path.name


# -- Markdown ---------------------------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)


def _front_matter(text: str, path: Path, warnings: list[str]) -> tuple[dict[str, Any], str]:
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1) or "") or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 2}" if mark is not None else ""
        warnings.append(f"{path}:{where}: front matter is not valid YAML; kept as text")
        return {}, text
    if not isinstance(data, dict):
        warnings.append(f"{path}: front matter is not a mapping; ignored")
        data = {}
    # Dates and other YAML scalars become strings so metadata stays JSON.
    meta = {str(k): v if isinstance(v, str | int | float | bool | list | dict | None) else str(v) for k, v in data.items()}
    # Blank lines keep line numbers of the body equal to those of the file.
    return meta, "\n" * match.group(0).count("\n") + text[match.end() :]


def _markdown_parser():  # type: ignore[no-untyped-def]
    from markdown_it import MarkdownIt

    # Only block structure is needed: inline parsing (links, emphasis) would double the time.
    return MarkdownIt("commonmark").enable("table").disable("inline")


def _read_markdown(data: bytes, path: Path) -> ParsedDocument:
    warnings: list[str] = []
    meta, body = _front_matter(_clean(_decode(data, path, warnings)), path, warnings)
    lines = body.split("\n")
    out = _Builder()
    tokens = _markdown_parser().parse(body)
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.level == 0 and tok.map is not None:
            source = "\n".join(lines[tok.map[0] : tok.map[1]])
            if tok.type == "heading_open":
                out.heading(int(tok.tag[1]), tokens[i + 1].content)
            elif tok.type in ("fence", "code_block"):
                out.block("code", source)
            elif tok.type in ("bullet_list_open", "ordered_list_open"):
                out.block("list", source)
            elif tok.type == "table_open":
                out.block("table", source)
            elif tok.type in ("paragraph_open", "blockquote_open", "html_block"):
                out.block("paragraph", source)
        i += 1
    title = str(meta.get("title") or "").strip() or out.first_heading() or _title_from_name(path)
    return out.finish("markdown", title, meta, warnings)


# -- Plain text -------------------------------------------------------------------------


def _read_text(data: bytes, path: Path) -> ParsedDocument:
    warnings: list[str] = []
    text = _clean(_decode(data, path, warnings))
    out = _Builder()
    for para in re.split(r"\n[ \t]*\n", text):
        out.block("paragraph", para)
    first = text.strip().split("\n", 1)[0].strip()
    title = first if 0 < len(first) <= 120 else _title_from_name(path)
    return out.finish("text", title, {}, warnings)


# -- HTML -------------------------------------------------------------------------------

_BOILERPLATE = ("script", "style", "nav", "footer", "header", "noscript", "aside", "form", "iframe", "svg", "template")
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_CONTAINERS = {"html", "body", "main", "article", "section", "div", "span", "center", "figure", "details", "summary", "dl", "font"}


_CHROME = re.compile(r"(?:^|[-_ ])(?:nav|navbar|navheader|navfooter|breadcrumbs?|menu|sidebar|footer|header|skip-?link|toc)(?:$|[-_ ])", re.I)


def _is_chrome(tag: Any) -> bool:
    if tag.name in ("html", "body", "main", "article"):
        return False
    names = " ".join([*(tag.get("class") or []), str(tag.get("id") or ""), str(tag.get("role") or "")])
    if not names.strip() or not _CHROME.search(names):
        return False
    # Chrome is short and holds no section headings (a "page-header" holding the h1 is content).
    return tag.find(["h1", "h2", "h3"]) is None and len(tag.get_text(" ", strip=True)) < 400


def _read_html(data: bytes, path: Path) -> ParsedDocument:
    from bs4 import BeautifulSoup, NavigableString, Tag, XMLParsedAsHTMLWarning

    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{path}: looks like a binary file (NUL bytes)", hint="only HTML belongs in this file")
    with warnings.catch_warnings():
        # XHTML (an XML declaration before <html>) is read as HTML on purpose: same tree, and
        # the HTML parser forgives the markup real sites ship.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(data, "lxml")
    for tag in soup.find_all(_BOILERPLATE):
        tag.decompose()
    # Site chrome that is not marked up as <nav>/<footer>: navigation bars, breadcrumbs, menus.
    for tag in soup.find_all(_is_chrome):
        tag.decompose()
    out = _Builder()
    loose: list[str] = []  # text sitting directly in a container, gathered into a paragraph

    def flush() -> None:
        if loose:
            out.block("paragraph", " ".join("".join(loose).split()))
            loose.clear()

    def walk(node: Tag) -> None:
        for child in node.children:
            if isinstance(child, NavigableString):
                if type(child) is NavigableString and child.strip():
                    loose.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name
            if name in _HEADINGS:
                flush()
                out.heading(_HEADINGS[name], child.get_text(" "))
            elif name == "pre":
                flush()
                out.block("code", child.get_text())
            elif name in ("ul", "ol"):
                flush()
                items = [" ".join(li.get_text(" ").split()) for li in child.find_all("li")]
                out.block("list", "\n".join(f"- {item}" for item in items if item))
            elif name == "table":
                flush()
                rows = [
                    " | ".join(" ".join(c.get_text(" ").split()) for c in tr.find_all(["td", "th"]))
                    for tr in child.find_all("tr")
                ]
                out.block("table", "\n".join(r for r in rows if r.strip(" |")))
            elif name in ("p", "blockquote", "dd", "dt", "address"):
                flush()
                out.block("paragraph", " ".join(child.get_text().split()))
            elif name == "br":
                loose.append("\n")
            elif name in _CONTAINERS or name not in ("head", "title", "meta", "link"):
                if name in _CONTAINERS:
                    flush()
                    walk(child)
                    flush()
                else:  # inline element (a, em, strong, code...): part of the running text
                    loose.append(child.get_text())

    walk(soup.body or soup)
    flush()
    head_title = soup.title.get_text(" ").strip() if soup.title else ""
    title = " ".join(head_title.split()) or out.first_heading() or _title_from_name(path)
    meta: dict[str, Any] = {}
    for tag in soup.find_all("meta"):
        name, content = tag.get("name"), tag.get("content")
        if isinstance(name, str) and isinstance(content, str) and name.lower() in ("author", "description", "keywords"):
            meta[name.lower()] = content
    return out.finish("html", title, meta, [])


# -- PDF --------------------------------------------------------------------------------


def _read_pdf(data: bytes, path: Path) -> ParsedDocument:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputError(f"{path}: PDF is encrypted", hint="save an unprotected copy")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata or {}
        pdf_title = str(info.get("/Title") or "").strip()
        meta = {"pages": len(pages)}
        author = info.get("/Author")
        if author:
            meta["author"] = str(author)
    except InputError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise InputError(f"{path}: corrupt or unreadable PDF: {exc}", hint="re-export the PDF") from exc
    out = _Builder()
    for page in pages:
        for para in re.split(r"\n[ \t]*\n", _clean(page)):
            # PDF lines are layout, not structure: re-join words hyphenated at a line end.
            para = re.sub(r"(\w)-\n(\w)", r"\1\2", para)
            out.block("paragraph", " ".join(para.split()))
    first = next((ln.strip() for page in pages for ln in page.splitlines() if ln.strip()), "")[:120]
    title = pdf_title or first or _title_from_name(path)
    return out.finish("pdf", title, meta, [])


# -- DOCX -------------------------------------------------------------------------------


def _read_docx(data: bytes, path: Path) -> ParsedDocument:
    import zipfile

    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        items = list(document.iter_inner_content())
        core_title = (document.core_properties.title or "").strip()
        author = document.core_properties.author or ""
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise InputError(f"{path}: corrupt or unreadable DOCX: {exc}", hint="re-save it from Word") from exc
    except Exception as exc:  # lxml and zip errors come in many types
        raise InputError(f"{path}: corrupt or unreadable DOCX: {exc}", hint="re-save it from Word") from exc
    out = _Builder()
    styled_title = ""
    for item in items:
        if isinstance(item, Table):
            rows = [" | ".join(" ".join(c.text.split()) for c in row.cells) for row in item.rows]
            out.block("table", "\n".join(r for r in rows if r.strip(" |")))
            continue
        style = (item.style.name if item.style is not None else "") or ""
        text = item.text
        level = re.fullmatch(r"Heading (\d)", style)
        if level:
            out.heading(int(level.group(1)), text)
        elif style == "Title":
            styled_title = styled_title or " ".join(text.split())
            out.heading(1, text)
        elif style.startswith("List"):
            out.block("list", f"- {text.strip()}")
        else:
            out.block("paragraph", text)
    title = core_title or styled_title or out.first_heading() or _title_from_name(path)
    return out.finish("docx", title, {"author": author} if author else {}, [])


_READERS = {
    "markdown": _read_markdown,
    "text": _read_text,
    "html": _read_html,
    "pdf": _read_pdf,
    "docx": _read_docx,
}
