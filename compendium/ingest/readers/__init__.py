"""Readers of Markdown, reST, text, HTML, PDF and DOCX files into one document model of blocks."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ...errors import InputError
from .model import KINDS, PROSE_KINDS, Block, Deadline, ParsedDocument

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_SECONDS",
    "FORMATS",
    "KINDS",
    "PROSE_KINDS",
    "READER_VERSION",
    "Block",
    "ParsedDocument",
    "inside",
    "read_document",
]

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
DEFAULT_MAX_SECONDS = 120.0
# Bumped when any reader's output changes, so stored documents are read again.
READER_VERSION = "blocks-29"  # 2: an HTML page keeps its link up to its parent page; 3: definitions keep their terms; 4: scopes, group labels, whole sentences; 5: an option's argument is not its owner; 6: groff option tables, placeholders and closing paragraphs; 7: a term with spaced arguments is code; 8: man-page arguments described; 9: texinfo definitions, redirect pages; 10: values listed under or after an option are its values; 11: a reST definition list inside an object is its members; 12: Doxygen anchors, summaries and tooltips are chrome; 13: Doxygen member prototypes; values announced for a variable; 14: Doxygen's title box names its page; 15: an entry's later paragraphs and items carry its term; 16: Javadoc summary grids are definition lists; 17: an empty description ends its item; 18: a name heading's later paragraphs carry its term; 19: a signature under a name heading, camelCase name headings, owners of older Javadoc members; 20: a term defined under several sibling sections is a field of each; 21: chunks name the code names their section's examples made up; 22: a texinfo definition's further signatures lose their category; 23: an example's names are matched word for word; 24: older Javadoc's layout lists and copied-description labels; 25: older Javadoc's type declaration defines its class; 26: a name an example's code defines is the example's; 27: a one-word heading over the code declaring it names a member, owned by the page's declared type; 28: "[src]" links to the source are chrome; 29: a description written as nothing ends its item

FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rest",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}

_NO_TEXT_HINT = {"pdf": "a scanned PDF needs OCR first", "html": "the page has no body text"}


def _reader(fmt: str) -> Callable[[bytes, Path, Deadline], ParsedDocument]:
    # Imported on use: docutils, pypdf and python-docx cost import time nobody else should pay.
    if fmt == "markdown":
        from .markdown import read_markdown as read
    elif fmt == "rest":
        from .rest import read_rest as read
    elif fmt == "text":
        from .text import read_text as read
    elif fmt == "html":
        from .html import read_html as read
    elif fmt == "pdf":
        from .pdf import read_pdf as read
    else:
        from .docx import read_docx as read
    return read


def inside(path: Path, root: Path) -> bool:
    """Whether the file's real path (symlinks followed) lies inside `root`'s real path."""
    try:
        return _inside_real(Path(os.path.realpath(path)), root)
    except (OSError, ValueError):
        return False


def _inside_real(real: Path, root: Path) -> bool:
    try:
        return real.is_relative_to(os.path.realpath(root))
    except (OSError, ValueError):
        return False


def read_document(
    path: Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_seconds: float = DEFAULT_MAX_SECONDS,
    root: Path | None = None,
) -> ParsedDocument:
    """Parse one file by its extension. Raises InputError naming the file when it cannot be
    used: outside `root` (through a symlink), unsupported, empty, too large, binary, corrupt,
    too slow to read, or when the reader fails in any other way."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"{path}: unsupported file type {path.suffix!r}",
            hint=f"supported: {', '.join(sorted(FORMATS))}",
        )
    data = _read_bytes(path, max_bytes, root)
    if not data.strip():
        raise InputError(f"{path}: file is empty", hint="add content or remove the file")
    try:
        doc = _reader(fmt)(data, path, Deadline(str(path), max_seconds))
    except InputError:
        raise
    except RecursionError as exc:
        raise InputError(f"{path}: nested too deeply to read", hint="flatten the document's structure") from exc
    except Exception as exc:  # a reader's failure must cost this document alone
        raise InputError(
            f"{path}: the {fmt} reader failed: {type(exc).__name__}: {exc}",
            hint="check that the file is valid, or convert it to another format",
        ) from exc
    if not doc.text.strip():
        raise InputError(f"{path}: no text could be extracted", hint=_NO_TEXT_HINT.get(fmt))
    return doc


def _read_bytes(path: Path, max_bytes: int, root: Path | None) -> bytes:
    real = Path(os.path.realpath(path)) if root is not None else path
    if root is not None and not _inside_real(real, root):
        raise InputError(
            f"{path}: leads outside the documents folder {root} (through a symlink); not read",
            hint="copy the file into the documents folder instead of linking to it",
        )
    try:
        # O_NOFOLLOW: a symlink swapped in after the check above is refused, not followed.
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                raise InputError(
                    f"{path}: file is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.1f} MB limit",
                    hint="split it into smaller files or raise the size limit",
                )
            return handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
