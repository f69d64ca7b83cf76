"""The links of an HTML table of contents, and the page's link up to the page it is part of, kept
as document metadata so the outline can follow the manual's own parts and chapters (the reader
drops both from the text as navigation)."""

from __future__ import annotations

from typing import Any

TOC_CLASSES = frozenset({"toc", "toctree-wrapper"})  # DocBook's and Sphinx's
LISTS = frozenset({"ul", "ol", "dl"})
MAX_LINKS = 5000  # bounded: a stranger's page of a million links costs nothing more
MAX_TEXT = 200
# A box whose class names one of these ("rightsidebar", "md-nav") holds the site's links on every page.
_SIDE_BOXES = ("sidebar", "nav", "menu", "breadcrumb", "footer")
_BOXES = LISTS | {"li", "div", "p", "table", "section", "article", "pre"}


class TocLinks:
    """Fed the parser's events; `links` are [depth, href, text], depth 1 for the outermost list."""

    def __init__(self) -> None:
        self.links: list[list[Any]] = []
        self.stack: list[str] = []  # open tags inside the TOC box (empty: outside any)
        self.depth = 0
        self.href: str | None = None
        self.text: list[str] = []

    def start(self, tag: str, attrib: Any) -> None:
        if not self.stack:
            classes = set((attrib.get("class") or "").split()) if attrib else set()
            if classes & TOC_CLASSES:
                self.stack.append(tag)
            return
        self.stack.append(tag)
        if tag in LISTS:
            self.depth += 1
        elif tag == "a" and self.href is None and attrib.get("href"):
            self.href, self.text = str(attrib.get("href")), []

    def end(self, tag: str) -> None:
        if not self.stack:
            return
        open_tag = self.stack.pop()
        if open_tag in LISTS:
            self.depth -= 1
        elif open_tag == "a" and self.href is not None:
            text = " ".join("".join(self.text).split())[:MAX_TEXT]
            target = self.href.split("#", 1)[0]
            # Links into the sections of the page just listed say nothing more about the order.
            repeat = "#" in self.href and self.links and self.links[-1][1].split("#", 1)[0] == target
            if text and target and not repeat and len(self.links) < MAX_LINKS:
                self.links.append([max(self.depth, 1), self.href[:1000], text])
            self.href = None

    def data(self, text: str) -> None:
        if self.href is not None:
            self.text.append(text)


class UpLink:
    """The page's link to its parent: `<link rel="up">`, or the navigation anchor with access key
    "u" (DocBook's "Up", Sphinx's last breadcrumb). `found` is [href, title] once seen: the
    link's title attribute, else its text (DocBook's says "Up"; its title names the chapter)."""

    def __init__(self) -> None:
        self.found: list[str] | None = None
        self._open: tuple[str, str] | None = None  # (href, title) of the anchor being read
        self._text: list[str] = []

    def start(self, tag: str, attrib: Any) -> None:
        if self.found is not None or not attrib:
            return
        href = attrib.get("href")
        if not href:
            return
        if tag == "link" and "up" in (attrib.get("rel") or "").lower().split():
            self.found = [str(href)[:1000], " ".join(str(attrib.get("title") or "").split())[:MAX_TEXT]]
        elif tag == "a" and (attrib.get("accesskey") or "").lower() == "u" and self._open is None:
            self._open, self._text = (str(href)[:1000], " ".join(str(attrib.get("title") or "").split())), []

    def end(self, tag: str) -> None:
        if tag == "a" and self._open is not None:
            href, title = self._open
            text = " ".join("".join(self._text).split())
            self.found = [href, (title or ("" if text.lower() == "up" else text))[:MAX_TEXT]]
            self._open = None

    def data(self, text: str) -> None:
        if self._open is not None and len(self._text) < 64:
            self._text.append(text)


class PageLinks:
    """The links of a page's own content in reading order, with what groups them, so the outline
    can read a contents page of any name (a list of sections, a man page listing its commands).
    `entries` are [kind, depth, href, text]: "h" a heading (depth: its level), "label" the text
    of a list item that heads a nested list without linking anywhere (depth: list nesting), "a"
    a link inside a list, definition list or table (depth: list nesting), "section" and
    "/section" where an HTML section begins and ends (the headings inside it end there). Links in running text
    are left out: a contents page lists, prose mentions."""

    def __init__(self) -> None:
        self.entries: list[list[Any]] = []
        self.depth = 0
        self.cells = 0  # open table cells: a table row lists like a list item
        self.heading: list[str] | None = None
        self.heading_level = 0
        self.items: list[list[Any]] = []  # per open <li>: [text before any link or list, linked]
        self.href: str | None = None
        self.text: list[str] = []
        self.boxes: list[bool] = []  # per open element: whether it is a side box (its links are furniture)

    def _add(self, entry: list[Any]) -> None:
        if len(self.entries) < MAX_LINKS:
            self.entries.append(entry)

    def _end_heading(self) -> None:
        text = " ".join("".join(self.heading or ()).split())
        if text:
            self._add(["h", self.heading_level, "", text[:MAX_TEXT]])
        self.heading = None

    def start(self, tag: str, attrib: Any) -> None:
        classes = (attrib.get("class") or "").lower() if attrib else ""
        self.boxes.append(bool(self.boxes and self.boxes[-1]) or any(w in classes for w in _SIDE_BOXES))
        if self.boxes[-1]:
            return
        if self.heading is not None and tag in _BOXES:
            self._end_heading()  # a heading left open ("<h2>...</h1>") ends where a box begins
        if tag in LISTS:
            if self.items and self.items[-1][0] is not None:
                label = " ".join("".join(self.items[-1][0]).split()).strip(" \u25ba\u25bc\u25b6\u2022:-")
                if label and not self.items[-1][1]:
                    self._add(["label", self.depth, "", label[:MAX_TEXT]])
                self.items[-1][0] = None  # the label, if any, is said
            self.depth += 1
        elif tag == "li":
            self.items.append([[], False])
        elif tag == "section":
            self._add(["section", self.depth, "", ""])  # headings inside it end with it
        elif tag in ("td", "th"):
            self.cells += 1
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self.heading is None:
            self.heading, self.heading_level = [], int(tag[1])
        elif tag == "a" and self.href is None and attrib and attrib.get("href"):
            self.href, self.text = str(attrib.get("href")), []
            if self.items:
                self.items[-1][1] = True

    def end(self, tag: str) -> None:
        if self.boxes and self.boxes.pop():
            return
        if tag in LISTS:
            self.depth = max(0, self.depth - 1)
        elif tag == "li":
            if self.items:
                self.items.pop()
        elif tag == "section":
            self._add(["/section", self.depth, "", ""])
        elif tag in ("td", "th"):
            self.cells = max(0, self.cells - 1)
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self.heading is not None:
            self._end_heading()
        elif tag == "a" and self.href is not None:
            text = " ".join("".join(self.text).split())
            if text and self.heading is None and (self.depth or self.cells):
                self._add(["a", max(self.depth, 1), self.href[:1000], text[:MAX_TEXT]])
            self.href = None

    def data(self, text: str) -> None:
        if self.boxes and self.boxes[-1]:
            return
        if self.heading is not None:
            self.heading.append(text)
        if self.href is not None:
            self.text.append(text)
        elif self.items and self.items[-1][0] is not None and len(self.items[-1][0]) < 64:
            self.items[-1][0].append(text)
