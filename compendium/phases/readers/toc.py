"""The links of an HTML table of contents, and the page's link up to the page it is part of, kept
as document metadata so the outline can follow the manual's own parts and chapters (the reader
drops both from the text as navigation)."""

from __future__ import annotations

from typing import Any

TOC_CLASSES = frozenset({"toc", "toctree-wrapper"})  # DocBook's and Sphinx's
LISTS = frozenset({"ul", "ol", "dl"})
MAX_LINKS = 5000  # bounded: a stranger's page of a million links costs nothing more
MAX_TEXT = 200


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
