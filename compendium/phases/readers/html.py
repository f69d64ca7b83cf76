"""HTML reader: libxml2's parser streams events to a target, so no tree and no recursion."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...errors import InputError
from .model import NOTICE, Builder, Deadline, ParsedDocument, code_span, one_line, unquoted
from .source import title_from_name
from .toc import PageLinks, TocLinks, UpLink

# Never content: scripts, embedded media, form controls and the site's own chrome.
_SKIP = frozenset(
    "script style noscript template svg math iframe object embed canvas audio video map button "
    "select textarea input form nav aside footer menu dialog datalist".split()
)
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCKS = frozenset(
    "html body main article section div header p ul ol dir li dl dt dd blockquote figure figcaption "
    "details summary address hr center fieldset legend hgroup caption table tr td th pre".split()
) | frozenset(_HEADINGS)
_INLINE_CODE = frozenset({"code", "tt", "kbd", "samp"})
_CONTENT = frozenset({"html", "body", "main", "article"})  # never chrome, whatever their class
_CHROME_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar", "toolbar", "doc-toc"}
)
# Whole class names and ids that mark navigation, menus, breadcrumbs, sidebars, footers, TOCs.
_CHROME_NAME = re.compile(
    r"(?:nav|navbar|navigation|navheader|navfooter|breadcrumbs?|menu|menubar|sidebar|sphinxsidebar"
    r"|sphinxsidebarwrapper|footer|toc|related|skip-?link|masthead|pager|pagination|wy-nav-side"
    r"|(?:site|page|top|main|global|local)[-_](?:nav|navigation|menu|footer|sidebar|toc)"
    r"|(?:nav|navbar|menu|sidebar|toc|breadcrumbs?)[-_]\w+"
    r"|\w+[-_](?:nav|navbar|navigation|menu|sidebar|breadcrumbs?|toc))",
    re.I,
)
_CHROME_ID = re.compile(r"(?:nav|navbar|navigation|breadcrumbs?|menu|sidebar|header|footer|toc|masthead)", re.I)
# Javadoc's member summaries: a table of the members the details below define again, each row's
# sentence without its member's name ("Gets the left element from this pair.").
_MEMBER_SUMMARY = re.compile(
    r"(?:method|field|constructor|nested-class|enum-constant|property|annotation-type-(?:required|optional)-element"
    r"|member)-summary|memberSummary"
)
LOCATOR_SHARE = 0.8  # of a description's characters inside links: a locator, not a description
_INLINE_CHROME = frozenset({"headerlink", "viewcode-link"})  # Sphinx's "¶" anchors and "[source]" links
# A signature's parts: the name it defines, and the owner written before it (Sphinx "Field." of
# "Field.null"; Javadoc's member name).
_SIG_NAME = frozenset({"sig-name", "descname", "element-name", "member-name-link", "def-name"})
_SIG_PRENAME = frozenset({"sig-prename", "descclassname"})
_SIG_BOX = frozenset({"sig", "sig-object"})  # a dt that is an API signature (Sphinx)
# Javadoc's member details and type description: a signature over the text that defines it.
_MEMBER_SIGNATURE = frozenset({"member-signature", "memberSignature", "type-signature"})
# Boxes that never start with a sentence: a pending definition term is written out before them.
_NOT_PROSE = frozenset({"pre", "table", "ul", "ol", "dir", "dl", "blockquote"}) | frozenset(_HEADINGS)
# Javadoc's deprecation notice, written between a member's signature and the text defining it.
_DEPRECATION_BOX = frozenset({"deprecation-block"})
_SUPERTYPES = re.compile(r"\s+(?:extends|implements|throws|permits)\s")
_KIND_WORDS = re.compile(r"^(?:Class|Interface|Enum|Enum Class|Annotation Type|Annotation Interface|Record|"
                         r"Record Class|Exception|Error|Module|Package)\s+")
_LANGUAGE = re.compile(r"^(?:language|lang|highlight|sourceCode)-([\w+#.-]+)$")
# Field labels whose entries name members of the signature above them (Sphinx's field lists,
# Javadoc's notes): each entry is "`name`: what it is" of that signature's owner, never a subject.
_MEMBER_FIELDS = frozenset(
    {"parameters", "type parameters", "keyword arguments", "arguments", "args", "other parameters",
     "variables", "attributes"}
)
# An entry of such a field: its name, an optional type in parentheses, a dash, its description
# ("name (Optional[str]) – the optional name", "`left` - the left element").
_FIELD_ENTRY = re.compile(r"^\s*[-*•]?\s*`?([A-Za-z_$*][\w$.*]*)`?\s*(\([^\n]*?\))?\s+[–—-]\s*(.*)$", re.S)
# A Sphinx signature declaring a type: its fields are its own, not its module's.
_OWN_KIND = re.compile(r"^(?:abstract\s+|final\s+)*(?:class|exception|interface|enum)\s", re.I)
# A definition list of at least this many short codes with a few words each is a table of values.
_CODE_LIST_MIN = 8
_CODE = re.compile(r"[A-Za-z]{1,3}(?:[_@-][A-Za-z0-9]{1,8})?|[A-Z0-9]{1,4}")
# Javadoc's labels of a type's relations to other types: navigation, never prose about it.
_RELATION_FIELDS = frozenset(
    {"direct known subclasses", "all implemented interfaces", "implemented interfaces", "functional interface",
     "all superinterfaces", "all known implementing classes", "all known subinterfaces", "enclosing class",
     "enclosing interface", "direct known subinterfaces"}
)


def _classes(attrib: Any) -> list[str]:
    return (attrib.get("class") or "").split()


def _is_chrome(tag: str, attrib: Any) -> bool:
    if not attrib or tag in _CONTENT:
        return False
    if attrib.get("hidden") is not None or attrib.get("aria-hidden") == "true":
        return True
    if re.search(r"display\s*:\s*none", attrib.get("style") or ""):
        return True
    classes = _classes(attrib)
    if tag not in _BLOCKS:  # inline chrome: only the heading anchors
        return any(c in _INLINE_CHROME for c in classes)
    if (attrib.get("role") or "").lower() in _CHROME_ROLES:
        return True
    if any(_CHROME_NAME.fullmatch(c) or _MEMBER_SUMMARY.fullmatch(c) for c in classes):
        return True
    # Ids name sections too ("#menu" of a page about menus): only non-section boxes count.
    ident = attrib.get("id") or ""
    if ident == "header" and tag == "div":
        return False  # a page header: read like <header> (its headings, then what they head)
    sectioning = tag in ("section", "article") or any(c.startswith(("section", "sect")) for c in classes)
    return bool(ident) and not sectioning and _CHROME_ID.fullmatch(ident) is not None


class _Events:
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
        if tag in _SKIP or tag == "head" or _is_chrome(tag, attrib):
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
        if self.table_depth:
            return self._open_in_table(tag, attrib)
        if self.pre is not None:
            if tag in ("code", "span") and not self.pre_language:
                self.pre_language = _language(attrib)
            elif tag == "br":
                self.pre.append("\n")
            return "inline"
        if self.heading is not None:
            if tag in _INLINE_CODE:
                self.heading_code += 1
                return "heading-code"
            return "inline"
        if tag in _NOT_PROSE:
            self._terms_out()
        if tag in _HEADINGS:
            self.flush()
            if self.contexts and self.contexts[-1][0] == "item":
                self.contexts[-1][3] = True  # a list item opening with a heading boxes a section: paragraphs
            self.heading, self.heading_level = [], _HEADINGS[tag]
            if _classes(attrib)[:1] in (["heading"], ["subheading"], ["subsubheading"]):
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
        if (self.dls or self.signature is not None) and attrib and attrib.get("class"):
            classes = _classes(attrib)
            if self.dls and self.contexts and self.contexts[-1][0] == "term":
                self._capture(classes)
            elif self.signature is not None and _SIG_NAME.intersection(classes):
                self.captures.append((len(self.stack), "name", len(self.inline)))
        if tag == "pre":
            self.flush()
            self.pre = []
            self.pre_language = _language(attrib) or self._ancestor_language()
            return "pre"
        if tag == "table":
            self.flush()
            self.table_depth, self.rows, self.cell, self.caption = 1, [], None, None
            return "table"
        if tag in _INLINE_CODE:
            self.code_marks.append(len(self.inline))
            if len(self.code_marks) == 1:
                self.inline.append("`")
            return "code"
        if tag == "br":  # inside a term, a line break parts two names of one thing ("-a" over "--all")
            in_term = bool(self.dls) and bool(self.contexts) and self.contexts[-1][0] == "term"
            self.inline.append(", " if in_term else " ")
            return "inline"
        if tag not in _BLOCKS:
            return "inline"
        if self.deprecation:
            self.inline.append(" ")  # the label and its comment read as one notice
            return "inline"
        self.flush()
        if tag == "div" and _DEPRECATION_BOX.intersection(_classes(attrib)):
            self.deprecation = len(self.stack) + 1
            return "deprecation"
        language = _language(attrib)
        if language:  # Sphinx: <div class="highlight-python"><div class="highlight"><pre>
            self.languages.append((len(self.stack), language))
        if tag in ("article", "section", "main"):
            self.sections += 1
        if self.signature is None and "ignature" in (attrib.get("class") or "") and \
                _MEMBER_SIGNATURE.intersection(_classes(attrib)):
            self.signature = {"depth": len(self.stack), "names": []}
        if tag == "dl":
            self.dls.append({"terms": [], "names": [], "prenames": [], "sig": False, "id": "", "described": False,
                             "mark": (len(self.out.blocks), len(self.out.parts), self.out.length),
                             # Sphinx's field list ("Parameters", its colon drawn by a style sheet)
                             "fields": "field-list" in _classes(attrib)})
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
                if dl["described"]:  # a new item: the last one's terms were described
                    dl.update(terms=[], names=[], prenames=[], sig=False, id="", described=False)
                dl["sig"] = dl["sig"] or bool(_SIG_BOX.intersection(_classes(attrib)))
                dl["id"] = dl["id"] or (attrib.get("id") or "")
        elif tag == "dd":
            self.contexts.append(["definition", 0, 0, False])
            if self.dls:
                dl = self.dls[-1]
                label = dl["terms"][0] if len(dl["terms"]) == 1 else ""
                labelled = label.strip().endswith(":") or (dl["fields"] and len(label.split()) <= 3)
                dl["field"] = one_line(label).rstrip(":").strip().lower() if labelled else ""
        elif tag == "blockquote":
            self.contexts.append(["quote", 0, 0, False])
        return tag

    def _open_in_table(self, tag: str, attrib: Any) -> str:
        if tag in _HEADINGS or (tag == "table" and self.table_depth == 1 and self.cell is not None):
            # A table holding headings or tables is the page's layout, not data: what it has read
            # is written out, and the rest is read as the page's own flow.
            self._unwrap_layout()
            return self._open(tag, attrib)
        if tag == "table":
            self.table_depth += 1
        elif self.table_depth == 1 and tag == "tr":
            self.rows.append([])
        elif self.table_depth == 1 and tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            self.cell = []
            self.spans = (_span(attrib.get("rowspan"), 1000), _span(attrib.get("colspan"), 50))
        elif self.table_depth == 1 and tag == "caption":
            self.caption = []
        elif tag in _BLOCKS or tag == "br":
            target = self.cell if self.cell is not None else self.caption
            if target is not None:
                target.append(" ")  # blocks inside a cell: words must not run together
        return "cell-part"

    def _unwrap_layout(self) -> None:
        for row in self.rows:
            for text, _rowspan, _colspan in row:
                self.out.prose("paragraph", text)
        if self.caption:
            self.out.prose("paragraph", "".join(self.caption))
        cell = self.cell or []
        self.rows, self.cell, self.caption, self.table_depth = [], None, None, 0
        self.inline.extend(cell)  # the open cell's words so far: the flow goes on from them

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
            if self.soft and self.heading_level >= 2:
                self.soft_open = True
            self.heading = None
        elif role == "soft":
            self.flush()
            self.soft -= 1
            self.soft_open = False
        elif role == "pre" and self.pre is not None:
            self.out.code("".join(self.pre), self.pre_language)
            self.pre = None
        elif role == "code":
            self._close_code()
        elif role == "deprecation":
            self.deprecation = 0
            text, self.inline = one_line("".join(self.inline)), []
            self.code_marks.clear()
            self.out.aside(text)
        elif role in _BLOCKS:
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
                self.contexts.pop()

    def _close_in_table(self, tag: str) -> None:
        if tag == "table":
            self.table_depth -= 1
            if self.table_depth == 0:
                if self.caption is not None and self.caption:
                    self.out.prose("paragraph", "".join(self.caption))
                self.out.table(_grid(self.rows))
                self.rows, self.cell, self.caption = [], None, None
        elif self.table_depth == 1 and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(("".join(self.cell), *self.spans))
            self.cell = None
        elif self.table_depth == 1 and tag == "caption" and self.caption is not None:
            self.out.prose("paragraph", "".join(self.caption))
            self.caption = None

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

    # -- definitions ---------------------------------------------------------------------------

    def _capture(self, classes: list[str]) -> None:
        if _SIG_NAME.intersection(classes):
            self.captures.append((len(self.stack), "name", len(self.inline)))
        elif _SIG_PRENAME.intersection(classes):
            self.captures.append((len(self.stack), "prename", len(self.inline)))

    def _captured(self) -> None:
        _, part, start = self.captures.pop()
        text = one_line("".join(self.inline[start:]).replace("`", ""))
        if not text:
            return
        if self.signature is not None:
            self.signature["names"].append(text)
        elif self.dls:
            dl = self.dls[-1]
            if part == "prename" and dl["names"]:
                return  # after the name: an option's argument ("--null NULL"), not its owner
            dl["names" if part == "name" else "prenames"].append(text)

    def _term(self, dl: dict[str, Any]) -> tuple[str, str, str, bool]:
        """(term as written, the name it defines, its owner, written as code) of a dl item."""
        terms = [" ".join(t.replace("`", "").split()) if dl["sig"] else t for t in dl["terms"]]  # one signature
        term = ", ".join(unquoted(t.strip(" ,")) for t in terms)
        name = dl["names"][0] if dl["names"] else ""
        scope = next((p.strip(" .,") for p in dl["prenames"] if p.strip(" .,")), "")
        ident = dl["id"]
        if dl["sig"] and not scope and name and ident.endswith("." + name):
            scope = ident[: -len(name) - 1]  # Sphinx's id of a member: its qualified name
        option = name.lstrip("-")
        if not scope and name.startswith("-") and ident.startswith("cmdoption-") and ident.endswith("-" + option):
            scope = ident[len("cmdoption-"): -len(option) - 1]  # Sphinx's id of a program's option
        return term, name, scope, dl["sig"] or None  # type: ignore[return-value]

    def _define(self, description: str, *, notice: bool = False) -> None:
        """The dl item's terms defined by `description`; a `notice` ("New in version 3.1.") is
        no description: the item's next paragraph is, and the notice follows it."""
        dl = self.dls[-1]
        term, name, scope, code = self._term(dl)
        dl["described"] = True
        if len(dl["terms"]) == 1 and term.endswith(":"):  # a field label ("Returns:"), not a name
            self.out.prose("paragraph", f"{term} {description}")
            return
        if not scope and not dl["sig"] and any(outer["sig"] for outer in self.dls[:-1]):
            scope = self._field_owner()  # a list inside an API entry's text: values of that entry
        if notice:
            self.out.pending_term(term, name=name, scope=scope, code=code)
            self.out.aside(description)
            return
        self.out.definition(term, description, name=name, scope=scope, code=code)

    def _terms_out(self, *, after: bool = False) -> None:
        """The open dl item's terms, when no sentence of its own describes them: written as a
        term block, or (`after` its list, with an empty description, as Sphinx writes an API
        entry whose text follows the list) left to the next paragraph to define."""
        if not self.dls or not self.dls[-1]["terms"] or self.dls[-1]["described"]:
            return
        self.flush()
        dl = self.dls[-1]
        term, name, scope, code = self._term(dl)
        dl["described"] = True
        if after:
            self.out.pending_term(term, name=name, scope=scope, code=code)
        else:
            self.out.prose("term", term)

    def _code_list(self, mark: tuple[int, int, int]) -> None:
        """A definition list of short codes, each with a few words ("TT" / "Trinidad and
        Tobago."), is a table of values of its section, not terms defined one by one: its
        entries are written as one table."""
        blocks, parts, length = mark
        entries = self.out.blocks[blocks:]
        if len(entries) < _CODE_LIST_MIN or any(b.kind != "definition" for b in entries):
            return
        texts = [self.out.parts[i] for i in range(parts, len(self.out.parts)) if self.out.parts[i] != "\n\n"]
        if len(texts) != len(entries):
            return
        rows = []
        for block, text in zip(entries, texts, strict=True):
            description = text.split(": ", 1)[1] if ": " in text else ""
            rows.append([block.term, description])
        codes = sum(bool(_CODE.fullmatch(term)) and 0 < len(d.split()) <= 6 for term, d in rows)
        if codes < 0.9 * len(rows):
            return
        del self.out.blocks[blocks:], self.out.parts[parts:]
        self.out.length = length
        self.out.table(rows)

    def _field_entry(self, text: str) -> bool:
        """An entry of a signature's field list ("Parameters:", "Type Parameters:", "Raises:"),
        written as a member of the signature's owner ("`url_prefix`: A path to prepend…"), or a
        type's relations ("Direct Known Subclasses:"), left out. False for any other text."""
        dl = self.dls[-1]
        field = dl.get("field", "")
        if field in _RELATION_FIELDS:
            dl["described"] = True
            return True
        if field not in _MEMBER_FIELDS:
            return False
        match = _FIELD_ENTRY.match(one_line(text))
        owner = self._field_owner()
        if match and not owner and _KIND_WORDS.match(self.h1):
            # a Javadoc type's own type parameters, written above its description: its
            # signature names them, and the description must open its passage
            dl["described"] = True
            return True
        if not match or not owner:
            return False
        dl["described"] = True
        name, description = match.group(1), match.group(3).strip()
        if description:  # an entry with no description says nothing of its name
            self.out.definition(name, description, name=name, scope=owner, code=True)
        return True

    def _field_owner(self) -> str:
        """Whose fields these are: the Sphinx signature around the field list (a class or a
        function of its own, a method its class), or the last Javadoc signature's owner."""
        for dl in reversed(self.dls[:-1]):
            if dl["sig"]:
                term, name, scope, _ = self._term(dl)
                if _OWN_KIND.match(term) or not scope[scope.rfind(".") + 1 :][:1].isupper():
                    # a type's fields are its own; a module's function or signal owns its own
                    return name.split(".")[-1] if name else ""
                return scope  # a method's or attribute's: its class's
        return self.member

    def _signature_done(self) -> None:
        sig, self.signature = self.signature, None
        text = one_line((sig or {}).get("text", "").replace("`", ""))
        if not text:
            return
        owner = _KIND_WORDS.sub("", self.h1).split("<", 1)[0].strip()
        name = sig["names"][0].split("<", 1)[0].strip() if sig and sig["names"] else ""  # "DiffResult<T>"
        at = _word_at(text, name) if name else -1
        if at >= 0:  # from the name on, without modifiers, annotations, supertypes or throws
            text = _without_supertypes(text[at:])
        scope = owner if " " not in owner and owner != name else ""  # a type is no member of itself
        self.member = scope or name
        self.out.pending_term(text, name=name, scope=scope, code=True)

    def _meta(self, attrib: Any) -> None:
        name, content = (attrib.get("name") or "").lower(), attrib.get("content")
        if name in ("author", "description", "keywords") and content:
            self.meta[name] = one_line(content)


def _without_supertypes(signature: str) -> str:
    """A Javadoc signature cut before its first extends/implements/throws clause outside type
    parameters ("Pair<L,R> extends Object" -> "Pair<L,R>"; "Fn<T,E extends Throwable>" stays)."""
    for match in _SUPERTYPES.finditer(signature):
        head = signature[: match.start()]
        if head.count("<") == head.count(">"):
            return head
    return signature


def _word_at(text: str, word: str) -> int:
    """Where `word` first stands in `text` as a word of its own, -1 when nowhere."""
    at = text.find(word)
    while at >= 0:
        before = text[at - 1] if at else " "
        after = text[at + len(word)] if at + len(word) < len(text) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            return at
        at = text.find(word, at + 1)
    return -1


def _span(value: Any, limit: int) -> int:
    try:
        return min(max(int(value), 1), limit)  # bounded: a stranger's rowspan=65534 costs nothing
    except (TypeError, ValueError):
        return 1


def _grid(rows: list[list[tuple[str, int, int]]]) -> list[list[str]]:
    """Rows of cells with spans laid out: a cell spanning rows repeats in each of them, one
    spanning columns leaves the columns after it empty, so every column keeps its meaning."""
    carry: dict[int, list[Any]] = {}  # column -> [text, rows still to fill]
    out = []
    for row in rows:
        cells: list[str] = []
        pending = list(row)
        col = 0
        while pending or any(c >= col for c in carry):
            if col in carry:
                cells.append(carry[col][0])
                carry[col][1] -= 1
                if carry[col][1] <= 0:
                    del carry[col]
                col += 1
                continue
            if not pending:
                cells.append("")
                col += 1
                continue
            text, rowspan, colspan = pending.pop(0)
            for k in range(colspan):
                cells.append(text if k == 0 else "")
                if rowspan > 1:
                    carry[col] = [text if k == 0 else "", rowspan - 1]
                col += 1
        out.append(cells)
    return out


def _language(attrib: Any) -> str:
    for name in _classes(attrib):
        match = _LANGUAGE.match(name)
        if match:
            return "" if match.group(1) in ("default", "none", "text") else match.group(1)
    return ""


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
    title = events.title_text or out.first_heading() or title_from_name(path)
    if events.toc.links:
        events.meta["toc"] = events.toc.links
    if any(entry[0] == "a" for entry in events.links.entries):
        events.meta["links"] = events.links.entries
    if events.up.found and events.up.found[1]:
        events.meta["up"] = events.up.found
    return out.finish("html", title, events.meta, [])
