"""Markdown reader: markdown-it block tokens, YAML front matter as metadata."""

from __future__ import annotations

import html
import re
import threading
from pathlib import Path
from typing import Any

import yaml

from .builder import Builder
from .model import Deadline, ParsedDocument, clean
from .source import decode, title_from_name
from .text import paragraphs_of

# Deeper block nesting than this is read as plain text: markdown-it drops what lies past its
# limit without a word, and its block parser recurses.
MAX_NESTING = 100

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
_TAG = re.compile(r"<[^>]*>")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*{1,3}|_{1,3})(?=\S)(.+?)(?<=\S)\1")
_ONE_CODE_SPAN = re.compile(r"(`+)[^`](?:.*?[^`])?\1")  # a heading that is all code: "## `DEBUG`"


def front_matter(text: str, path: Path, warnings: list[str]) -> tuple[dict[str, Any], str]:
    """Metadata from a leading YAML block, and the body with that block blanked out."""
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
    for key in ("tags", "aliases"):
        if key in meta:
            meta[key] = _names(meta[key], strip="#" if key == "tags" else "")
    if "title" in meta:
        meta["title"] = " ".join(str(meta["title"] or "").split())
    # Blank lines keep line numbers of the body equal to those of the file.
    return meta, "\n" * match.group(0).count("\n") + text[match.end() :]


def _names(value: Any, strip: str) -> list[str]:
    """Tags or aliases as a list of strings, from a list or a comma-separated string."""
    items = value if isinstance(value, list) else str(value or "").split(",")
    names = [" ".join(str(v).split()).lstrip(strip) for v in items if v is not None]
    return [n for n in names if n]


def plain_inline(text: str) -> str:
    """Inline Markdown as plain text, for headings: links, emphasis, code marks and tags go."""
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\2", text)
    return html.unescape(_TAG.sub("", text.replace("`", "")))


_PARSERS = threading.local()


def _parser():  # type: ignore[no-untyped-def]
    """This thread's parser, built once: building one cost a third of reading a short file.
    One per thread, since documents are read in worker threads and a parser keeps state."""
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        from markdown_it import MarkdownIt
        from mdit_py_plugins.deflist import deflist_plugin

        # Only block structure is needed: inline parsing (links, emphasis) would double the time.
        # Definition lists ("Term" over ": description") are authored definitions: kept as such.
        parser = (MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).enable("table").disable("inline")
                  .use(deflist_plugin))
        _PARSERS.parser = parser
    return parser


def read_markdown(data: bytes, path: Path, deadline: Deadline) -> ParsedDocument:
    warnings: list[str] = []
    meta, body = front_matter(clean(decode(data, path, warnings)), path, warnings)
    out = Builder(deadline)
    tokens = _parser().parse(body)
    if any(t.level >= MAX_NESTING - 2 for t in tokens):
        warnings.append(f"{path}: blocks nested deeper than {MAX_NESTING} levels; read as plain text")
        out = Builder(deadline)
        for para in paragraphs_of(body):
            out.prose("paragraph", para)
    else:
        _blocks(tokens, out)
    title = str(meta.get("title") or "").strip() or out.first_heading() or title_from_name(path)
    return out.finish("markdown", title, meta, warnings)


def _blocks(tokens: list[Any], out: Builder) -> None:
    contexts: list[list[Any]] = []  # [kind, depth, ordinal, emitted] of list items and quotes
    lists: list[list[int]] = []  # [ordered, next number]
    rows: list[list[str]] = []
    terms: list[list[str]] = []  # per open definition list, the terms waiting for a description
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if terms and terms[-1] and kind in _NOT_PROSE:
            out.prose("term", ", ".join(terms[-1]))  # described by code, a list or a table first
            terms[-1].clear()
        if kind == "heading_open":
            raw = tokens[i + 1].content.strip()
            out.heading(int(tok.tag[1]), plain_inline(raw), code=_ONE_CODE_SPAN.fullmatch(raw) is not None)
            i += 2
        elif kind == "paragraph_open":
            if terms and terms[-1] and contexts and contexts[-1][0] == "definition" and not contexts[-1][3]:
                contexts[-1][3] = True
                out.definition(", ".join(terms[-1]), tokens[i + 1].content)
                terms[-1].clear()
            else:
                _prose(out, contexts, tokens[i + 1].content)
            i += 2
        elif kind == "dl_open":
            terms.append([])
        elif kind == "dt_open":
            terms[-1].append(tokens[i + 1].content)
            i += 2
        elif kind == "dd_open":
            contexts.append(["definition", 0, 0, False])
        elif kind == "dd_close":
            contexts.pop()
            if terms[-1]:
                out.prose("term", ", ".join(terms[-1]))
                terms[-1].clear()
        elif kind == "dl_close":
            terms.pop()
        elif kind in ("bullet_list_open", "ordered_list_open"):
            start = int(tok.attrGet("start") or 1) if kind == "ordered_list_open" else 0
            lists.append([kind == "ordered_list_open", start])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            ordinal = 0
            if lists and lists[-1][0]:
                ordinal = lists[-1][1]
                lists[-1][1] += 1
            contexts.append(["item", len(lists), ordinal, False])
        elif kind == "blockquote_open":
            contexts.append(["quote", 0, 0, False])
        elif kind in ("list_item_close", "blockquote_close"):
            contexts.pop()
        elif kind == "fence":
            out.code(tok.content, (tok.info or "").strip())
        elif kind == "code_block":
            out.code(tok.content)
        elif kind == "table_open":
            rows = []
        elif kind == "tr_open":
            rows.append([])
        elif kind in ("th_open", "td_open"):
            rows[-1].append(tokens[i + 1].content)
            i += 1
        elif kind == "table_close":
            out.table(rows)
        elif kind == "html_block":
            text = html.unescape(_TAG.sub(" ", _COMMENT.sub(" ", tok.content)))
            if text.strip():
                _prose(out, contexts, text)
        i += 1


_NOT_PROSE = frozenset({"fence", "code_block", "table_open", "bullet_list_open", "ordered_list_open",
                        "blockquote_open", "heading_open", "dl_open"})


def _prose(out: Builder, contexts: list[list[Any]], text: str) -> None:
    context = contexts[-1] if contexts else None
    if context is None:
        out.prose("paragraph", text)
    elif context[0] == "quote":
        out.prose("quote", text)
    elif context[3]:
        out.prose("paragraph", text)  # a later paragraph of the same item
    else:
        context[3] = True
        out.prose("item", text, level=context[1], ordinal=context[2])
