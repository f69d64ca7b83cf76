"""HTML reader: libxml2's parser streams events to a target, so no tree and no recursion.

Past ~450 lines because the target is one state machine: its start, end and data handlers
share the open blocks, the code and the page's title; definition lists (html_definitions),
tables (html_tables) and the tag tables (html_tags) are its own modules.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...errors import InputError
from .builder import Builder
from .html_definitions import MEMBER_SIGNATURE, SIG_BOX, SIG_NAME, DefinitionLists, declared_type
from .html_tables import TableLayout
from .html_tags import (
    BLOCKS,
    HEADINGS,
    INLINE_CODE,
    LAYOUT_LISTS,
    PAGE_TITLE_BOX,
    SKIP,
    class_names,
    is_chrome,
    language_of,
)
from .line_shapes import NOTICE
from .model import Deadline, ParsedDocument, code_span, one_line
from .source import title_from_name
from .toc import PageLinks, TocLinks, UpLink

LOCATOR_SHARE = 0.8  # of a description's characters inside links: a locator, not a description
# Boxes that never start with a sentence: a pending definition term is written out before them.
_NOT_PROSE = frozenset({"pre", "table", "ul", "ol", "dir", "dl", "blockquote"}) | frozenset(HEADINGS)
# Javadoc's summary of a package's classes or related packages, as a grid of boxes.
_SUMMARY_GRID = frozenset({"summary-table", "two-column-summary"})
# Javadoc's deprecation notice, written between a member's signature and the text defining it.
_DEPRECATION_BOX = frozenset({"deprecation-block"})


class _Events(DefinitionLists, TableLayout):
    """Parser target: turns start/end/data events into blocks of the Builder."""

    def __init__(self, out: Builder, deadline: Deadline):
        self.out = out
        self.deadline = deadline
        self.events = 0
        self.stack: list[tuple[str, str]] = []  # (tag, role) of every open element
        self.open: dict[str, int] = {}  # how many of each tag are open
        self.skip = 0  # > 0 inside skipped chrome
        self.soft = 0  # > 0 inside a page-level <header>: its headings count, its text does not
        self.soft_open = False  # a section heading (h2-h6) inside the header: what follows it is text
        self.sections = 0  # open article/section/main elements
        self.inline: list[str] = []
        self.code_marks: list[int] = []  # where each open inline code began in `inline`
        self.contexts: list[list[Any]] = []  # [kind, level, ordinal, emitted] of li/dt/dd/quote
        self.lists: list[list[int]] = []  # [ordered, counter] of each open list
        self.heading: list[str] | None = None
        self.heading_level = 0
        self.sectioning_level = 0  # of the last heading that opens a section (not a texinfo @heading)
        self.heading_plain = False  # text outside code inside the heading: not a name heading
        self.heading_code = 0  # open code elements inside the heading
        self.h1 = ""  # the first h1: the owner of a Javadoc page's members ("Class StringUtils")
        # Definition lists: per open dl, the terms (dt) waiting for their description.
        self.dls: list[dict[str, Any]] = []
        self.captures: list[tuple[int, str, int]] = []  # (depth, part, start in `inline`) in a signature
        self.signature: dict[str, Any] | None = None  # an open Javadoc member signature
        self.member = ""  # the owner of the last Javadoc signature's parameters: its type, or itself
        self.pre: list[str] | None = None
        self.deprecation = 0  # > 0 inside a Javadoc deprecation notice: its boxes read as one line
        self.pre_language = ""
        self.languages: list[tuple[int, str]] = []  # (stack depth, language) of boxes naming one
        self.table_depth = 0
        self.rows: list[list[tuple[str, int, int]]] = []  # (text, rowspan, colspan) per cell
        self.cell: list[str] | None = None
        self.spans = (1, 1)
        self.caption: list[str] | None = None
        self.title: list[str] | None = None
        self.title_text = ""
        self.page_title: str | None = None  # the title a page's own title box gives, once one opens
        self.in_title_box = False
        self.meta: dict[str, Any] = {}
        self.toc = TocLinks()
        self.up = UpLink()
        self.links = PageLinks()  # the page's own listed links, outside chrome and TOC boxes
        self.inline_linked = 0  # characters of the inline text inside links, since the last flush

    # -- parser target protocol ------------------------------------------------------------

    def start(self, tag: str, attrib: Any) -> None:
        self.events += 1
        if self.events % 4096 == 0:
            self.deadline.check()
        tag = tag.lower() if isinstance(tag, str) else ""
        in_head = bool(self.stack) and self.stack[-1][0] == "head"  # not an <svg><title>
        if tag == "title" and in_head and not self.title_text and self.title is None:
            self.title = []
        elif tag == "meta":
            self._meta(attrib)
        self.open[tag] = self.open.get(tag, 0) + 1
        self.toc.start(tag, attrib)
        self.up.start(tag, attrib)
        if self.skip:
            self.skip += 1
            self.stack.append((tag, "skip"))
            return
        if tag in SKIP or tag == "head" or is_chrome(tag, attrib) or self._grid_header(tag, attrib):
            self.skip = 1
            self.stack.append((tag, "skip"))
            return
        if not self.toc.stack:
            self.links.start(tag, attrib)
        role = self._open(tag, attrib)
        self.stack.append((tag, role))

    def end(self, tag: str) -> None:
        tag = tag.lower() if isinstance(tag, str) else ""
        if tag == "title" and self.title is not None:
            self.title_text = one_line("".join(self.title))
            self.title = None
        # libxml2 balances events, but a stray end tag must not unwind the wrong element.
        if not self.open.get(tag):
            return
        while self.stack:
            open_tag, role = self.stack.pop()
            self.open[open_tag] -= 1
            self.toc.end(open_tag)
            self.up.end(open_tag)
            if role != "skip":
                self.links.end(open_tag)
            self._close(open_tag, role)
            if open_tag == tag:
                break

    def data(self, text: str) -> None:
        if self.title is not None:
            self.title.append(text)
        self.toc.data(text)
        self.up.data(text)
        if self.skip:
            return
        self.links.data(text)
        if self.table_depth:
            target = self.cell if self.cell is not None else self.caption
            if target is not None:
                target.append(text)
        elif self.pre is not None:
            self.pre.append(text)
        elif self.heading is not None:
            self.heading.append(text)
            if not self.heading_code and text.strip():
                self.heading_plain = True
        elif not self.soft or self.soft_open:
            self.inline.append(text)
            if self.open.get("a"):
                self.inline_linked += len("".join(text.split()))

    def close(self) -> _Events:
        while self.stack:
            self._close(*self.stack.pop())
        self.flush()
        return self

    # -- elements ----------------------------------------------------------------------------

    def _open(self, tag: str, attrib: Any) -> str:
        if self.contexts and self.contexts[-1][0] == "definition":
            self.contexts[-1][4] = True  # the description holds an element (texinfo's @itemx anchor)
        if self.table_depth:
            return self._open_in_table(tag, attrib)
        if self.pre is not None:
            if tag in ("code", "span") and not self.pre_language:
                self.pre_language = language_of(attrib)
            elif tag == "br":
                self.pre.append("\n")
            return "inline"
        if self.heading is not None:
            if tag in INLINE_CODE:
                self.heading_code += 1
                return "heading-code"
            return "inline"
        if tag in _NOT_PROSE:
            self._terms_out()
        if tag in ("ul", "li") and LAYOUT_LISTS.intersection(class_names(attrib)):
            tag = "div"
        grid = tag == "div" and self._grid_role(class_names(attrib))
        if grid:
            tag = grid  # a summary grid of names and what each is: read as a definition list
        if tag == "div" and self.page_title is None and PAGE_TITLE_BOX.intersection(class_names(attrib)):
            tag = "h1"  # Doxygen's title box: the page's own title, read as its heading
            self.page_title, self.in_title_box = "", True
        if tag in HEADINGS:
            self.flush()
            if self.contexts and self.contexts[-1][0] == "item":
                self.contexts[-1][3] = True  # a list item opening with a heading boxes a section: paragraphs
            self.heading, self.heading_level = [], HEADINGS[tag]
            if class_names(attrib)[:1] in (["heading"], ["subheading"], ["subsubheading"]):
                # texinfo's unnumbered @heading: a heading inside the section before it, not one
                # that closes it ("Preamble" under "C.1 GNU GENERAL PUBLIC LICENSE", both <h2>)
                if self.sectioning_level:
                    self.heading_level = min(max(self.heading_level, self.sectioning_level + 1), 6)
            else:
                self.sectioning_level = self.heading_level
            self.heading_plain, self.heading_code = False, 0
            return "heading"
        if (tag == "header" or (tag == "div" and attrib.get("id") == "header")) and not self.sections:
            self.flush()
            self.soft += 1
            return "soft"
        if self.soft and not self.soft_open:
            return "inline"
        if self.dls and tag in ("b", "strong") and self.contexts and self.contexts[-1][0] == "term":
            self.captures.append((len(self.stack), "bold", len(self.inline)))  # texinfo's defined name
        elif (self.dls or self.signature is not None) and attrib and attrib.get("class"):
            classes = class_names(attrib)
            if self.dls and self.contexts and self.contexts[-1][0] == "term":
                self._capture(classes)
            elif self.signature is not None and SIG_NAME.intersection(classes):
                if tag in BLOCKS:
                    self.flush()  # a name in a cell of its own (Doxygen's): its text starts here
                self.captures.append((len(self.stack), "name", len(self.inline)))
        if tag == "pre":
            self.flush()
            self.pre = []
            self.pre_language = language_of(attrib) or self._ancestor_language()
            return "pre"
        if tag == "table" and self.signature is None:  # a signature laid out as a table is one line
            self.flush()
            self.table_depth, self.rows, self.cell, self.caption = 1, [], None, None
            return "table"
        if tag in INLINE_CODE:
            self.code_marks.append(len(self.inline))
            if len(self.code_marks) == 1:
                self.inline.append("`")
            return "code"
        if tag == "br":  # inside a term, a line break parts two names of one thing ("-a" over "--all")
            in_term = bool(self.dls) and bool(self.contexts) and self.contexts[-1][0] == "term"
            self.inline.append(", " if in_term else " ")
            return "inline"
        if tag not in BLOCKS:
            return "inline"
        if self.deprecation:
            self.inline.append(" ")  # the label and its comment read as one notice
            return "inline"
        self.flush()
        if tag == "div" and _DEPRECATION_BOX.intersection(class_names(attrib)):
            self.deprecation = len(self.stack) + 1
            return "deprecation"
        language = language_of(attrib)
        if language:  # Sphinx: <div class="highlight-python"><div class="highlight"><pre>
            self.languages.append((len(self.stack), language))
        if tag in ("article", "section", "main"):
            self.sections += 1
        if self.signature is None and MEMBER_SIGNATURE.intersection(class_names(attrib)):
            self.signature = {"depth": len(self.stack), "names": []}
        if tag == "dl":
            self.dls.append({"terms": [], "names": [], "prenames": [], "bold": [], "sig": False, "id": "", "described": False,
                             "values_of": self.values_of(),
                             "mark": (len(self.out.blocks), len(self.out.parts), self.out.length),
                             # Sphinx's field list ("Parameters", its colon drawn by a style sheet)
                             "fields": "field-list" in class_names(attrib), "grid": grid == "dl",
                             "ended": False})  # its last item's description was a blank
        if tag in ("ul", "ol", "dir"):
            self.lists.append([tag == "ol", 0])
        elif tag == "li":
            ordinal = 0
            if self.lists:
                self.lists[-1][1] += 1
                ordinal = self.lists[-1][1] if self.lists[-1][0] else 0
            self.contexts.append(["item", max(len(self.lists), 1), ordinal, False])
        elif tag == "dt":
            self.contexts.append(["term", 0, 0, False])
            if self.dls:
                dl = self.dls[-1]
                if dl["ended"] and not dl["described"]:
                    self._terms_out()  # no description: its terms stand alone, never joined to the next item's
                dl["ended"] = False
                if dl["described"]:  # a new item: the last one's terms were described
                    dl.update(terms=[], names=[], prenames=[], bold=[], sig=False, id="", described=False)
                dl["sig"] = dl["sig"] or bool(SIG_BOX.intersection(class_names(attrib)))
                dl["id"] = dl["id"] or (attrib.get("id") or "")
        elif tag == "dd":
            self.contexts.append(["definition", 0, 0, False, False])  # ..., its first paragraph seen, an element in it
            self.out.entry_open()
            if self.dls:
                dl = self.dls[-1]
                label = dl["terms"][0] if len(dl["terms"]) == 1 else ""
                labelled = label.strip().endswith(":") or (dl["fields"] and len(label.split()) <= 3)
                dl["field"] = one_line(label).rstrip(":").strip().lower() if labelled else ""
        elif tag == "blockquote":
            self.contexts.append(["quote", 0, 0, False])
        return tag

    def _close(self, tag: str, role: str) -> None:
        if role == "skip":
            self.skip -= 1
            return
        if self.table_depth:
            self._close_in_table(tag)
            return
        if role == "cell-part":  # a layout table's row or cell ends: so does its paragraph
            self.flush()
            return
        if self.captures and self.captures[-1][0] == len(self.stack):
            self._captured()
        if role == "heading-code":
            self.heading_code -= 1
        elif role == "heading" and self.heading is not None:
            text = "".join(self.heading)
            code = not self.heading_plain and bool(text.strip())
            self.out.heading(self.heading_level, text, code=code)
            if self.heading_level == 1 and not self.h1:
                self.h1 = one_line(text)
            if self.in_title_box:
                self.page_title, self.in_title_box = one_line(text), False
            if self.soft and self.heading_level >= 2:
                self.soft_open = True
            self.heading = None
        elif role == "soft":
            self.flush()
            self.soft -= 1
            self.soft_open = False
        elif role == "pre" and self.pre is not None:
            text = "".join(self.pre)
            self.out.code(text, self.pre_language)
            self.pre = None
            declared = declared_type(text, self.out.headings[-1][1] if self.out.headings else "")
            if declared:
                self.out.pending_term(declared, name=declared, code=True)  # its description defines it
                self.out.declared = self.out.declared or declared
        elif role == "code":
            self._close_code()
        elif role == "deprecation":
            self.deprecation = 0
            text, self.inline = one_line("".join(self.inline)), []
            self.code_marks.clear()
            self.out.aside(text)
        elif role in BLOCKS:
            # a description written as a no-break space only (Javadoc's index: "<dd>&nbsp;</dd>") or
            # as nothing at all (RDoc's constants: "<dd></dd>") says there is none; one holding only
            # an anchor (texinfo's @itemx: "<dd><a name=..."></dd>") joins its term to the next
            written = "".join(self.inline) if role == "dd" else ""
            empty = (role == "dd" and not written.strip() and bool(self.contexts)
                     and self.contexts[-1][0] == "definition" and not self.contexts[-1][4])
            blank = ("\xa0" in written and not written.strip()) or empty
            self.flush()
            if self.signature is not None and self.signature["depth"] == len(self.stack):
                self._signature_done()
            if role == "dl" and self.dls:
                self._terms_out(after=True)
                self._code_list(self.dls.pop()["mark"])
            if self.languages and self.languages[-1][0] == len(self.stack):
                self.languages.pop()
            if role in ("article", "section", "main"):
                self.sections -= 1
            elif role in ("ul", "ol", "dir") and self.lists:
                self.lists.pop()
            elif role in ("li", "dt", "dd", "blockquote") and self.contexts:
                if self.contexts.pop()[0] == "definition":
                    self.out.entry_close()
                    if self.dls and blank:
                        self.dls[-1]["ended"] = True  # the next term is a new item

    def _grid_role(self, classes: list[str]) -> str:
        """A Javadoc summary of two columns (each class or package of a package, with its first
        sentence) is a definition list: "dl" for the grid, "dt" and "dd" for its cells."""
        if _SUMMARY_GRID.issubset(classes):
            return "dl"
        if self.dls and self.dls[-1]["grid"]:
            return "dt" if "col-first" in classes else "dd" if "col-last" in classes else ""
        return ""

    def _grid_header(self, tag: str, attrib: Any) -> bool:
        """A summary grid's column header ("Class", "Description"): no term of it."""
        return (tag == "div" and bool(self.dls) and self.dls[-1]["grid"]
                and "table-header" in class_names(attrib))

    def _close_code(self) -> None:
        if not self.code_marks:
            return
        mark = self.code_marks.pop()
        if self.code_marks:
            return
        code = "".join(self.inline[mark + 1 :])
        if not code.strip():
            del self.inline[mark:]  # an empty <code/> leaves no stray backticks
        elif "`" in code:  # fenced with a longer run of backticks than it holds
            fence = code_span(code)
            opening = fence[: len(fence) - len(fence.lstrip("`"))]
            pad = " " if code.startswith("`") or code.endswith("`") else ""
            self.inline[mark] = opening + pad
            self.inline.append(pad + opening)
        else:
            self.inline.append("`")

    def _ancestor_language(self) -> str:
        return self.languages[-1][1] if self.languages else ""

    def flush(self) -> None:
        if not self.inline:
            return
        text = "".join(self.inline)
        self.inline.clear()
        linked, self.inline_linked = self.inline_linked, 0
        self.code_marks.clear()
        if not text.strip():
            return
        context = self.contexts[-1] if self.contexts else None
        if self.signature is not None:
            self.signature["text"] = self.signature.get("text", "") + " " + text
            return
        if context is not None and context[0] in ("item", "definition") and self.dls and self._field_entry(text):
            context[3] = True
            return
        if context is not None and context[0] == "term" and self.dls:
            self.dls[-1]["terms"].append(text)
            return
        if context is not None and context[0] == "definition" and self.dls and self.dls[-1]["terms"]:
            if not context[3]:
                context[3] = True
                if linked >= LOCATOR_SHARE * len("".join(text.split()).strip(",;.")):
                    # Links and nothing else ("command_group" / "The queryprogram router"): a
                    # generated index's row says where the term is, not what it is.
                    self.dls[-1]["described"] = True
                    return
                self._define(text, notice=NOTICE.match(one_line(text)) is not None)
                return
        if context is None:
            self.out.prose("paragraph", text)
        elif context[0] == "quote":
            self.out.prose("quote", text)
        elif context[3] and context[0] != "term":
            self.out.prose("paragraph", text)  # a later paragraph of the same item
        else:
            context[3] = True
            self.out.prose(context[0], text, level=context[1], ordinal=context[2])

    def _meta(self, attrib: Any) -> None:
        name, content = (attrib.get("name") or "").lower(), attrib.get("content")
        if name in ("author", "description", "keywords") and content:
            self.meta[name] = one_line(content)
        refresh = _REFRESH.match(content or "") if (attrib.get("http-equiv") or "").lower() == "refresh" else None
        if refresh:
            self.meta["redirect"] = refresh["url"]


def read_html(data: bytes, path: Path, deadline: Deadline) -> ParsedDocument:
    from lxml import etree

    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{path}: looks like a binary file (NUL bytes)", hint="only HTML belongs in this file")
    out = Builder(deadline)
    events = _Events(out, deadline)
    try:
        data.decode("utf-8")
        encoding: str | None = "utf-8"
    except UnicodeDecodeError:
        encoding = None  # let the page's own charset declaration decide
    parser = etree.HTMLParser(target=events, encoding=encoding, remove_comments=True, remove_pis=True, no_network=True)
    parser.feed(data)
    parser.close()
    title = events.page_title or events.title_text or out.first_heading() or title_from_name(path)
    if events.toc.links:
        events.meta["toc"] = events.toc.links
    if any(entry[0] == "a" for entry in events.links.entries):
        events.meta["links"] = events.links.entries
    if events.up.found and events.up.found[1]:
        events.meta["up"] = events.up.found
    doc = out.finish("html", title, events.meta, [])
    if "redirect" in events.meta and len(doc.text) <= REDIRECT_TEXT:
        doc.blocks = []  # a page that sends the reader elsewhere ("The node you are looking for is at ..."): no passage
    return doc


REDIRECT_TEXT = 400  # characters a redirecting page may hold and still be only a pointer
_REFRESH = re.compile(r"\s*\d+\s*;\s*url\s*=\s*['\"]?(?P<url>[^'\"\s]+)", re.I)
