"""reStructuredText reader: docutils parses, an iterative walk turns the doctree into blocks."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from .builder import Builder
from .model import Deadline, ParsedDocument, clean, code_span
from .source import decode, title_from_name

# What makes a .txt file reST rather than plain text: a section title underline, a directive,
# a role, or a field list at the top.
_TITLE = re.compile(r"^(?:([=\-~^\"'`#*+.:_])\1{2,})?\n?[^\s].{0,200}\n([=\-~^\"'`#*+])\2{2,}[ \t]*$", re.M)
_DIRECTIVE = re.compile(r"^\.\. [A-Za-z][\w:.+-]*::", re.M)
_ROLE = re.compile(r"(?<![\w`]):[A-Za-z][\w:+.-]*:`[^`]+`")

_LITERAL = ("literal",)  # inline nodes rendered in backticks
_DROP_INLINE = frozenset(
    {"footnote_reference", "citation_reference", "problematic", "image", "raw", "substitution_definition",
     "system_message", "comment", "target_placeholder"}
)
_DROP_BLOCK = frozenset(
    {"comment", "substitution_definition", "target", "pending", "system_message", "raw", "image",
     "transition", "decoration", "meta", "label", "substitution_reference"}
)
_ADMONITIONS = frozenset(
    {"note", "warning", "tip", "important", "caution", "danger", "error", "hint", "attention", "admonition"}
)


def looks_like_rest(text: str) -> bool:
    return bool(_TITLE.search(text) or _DIRECTIVE.search(text) or _ROLE.search(text))


_SETTINGS: list[Any] = []  # built once: docutils builds a whole option parser for them


def _settings() -> Any:
    import copy

    if not _SETTINGS:
        _SETTINGS.append(_new_settings())
    return copy.copy(_SETTINGS[0])


def _new_settings() -> Any:
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser

    settings = get_default_settings(Parser)
    # Quiet and sealed: no messages on stderr, no include files, no raw HTML, no config files.
    settings.report_level = 5
    settings.halt_level = 5
    settings.warning_stream = io.StringIO()
    settings.file_insertion_enabled = False
    settings.raw_enabled = False
    settings.syntax_highlight = "none"
    settings.pep_references = False
    settings.rfc_references = False
    settings.smart_quotes = False
    settings.character_level_inline_markup = False
    return settings


def read_rest(data: bytes, path: Path, deadline: Deadline) -> ParsedDocument:
    warnings: list[str] = []
    doc = read_rest_text(clean(decode(data, path, warnings)), path, deadline, strict=False)
    assert doc is not None  # only strict reads give up
    doc.warnings[:0] = warnings
    return doc


def read_rest_text(text: str, path: Path, deadline: Deadline, *, strict: bool) -> ParsedDocument | None:
    """The document, or None when `strict` and docutils reports too many errors (plain text
    after all)."""
    from docutils import utils
    from docutils.languages import get_language
    from docutils.parsers.rst import Parser
    from docutils.transforms.references import Substitutions

    from .sphinx import register_unknown

    settings = _settings()
    document = utils.new_document(str(path), settings)
    errors: list[Any] = []
    document.reporter.attach_observer(lambda message: errors.append(message) if message["level"] >= 3 else None)
    register_unknown(text, get_language(settings.language_code, document.reporter), document)
    Parser().parse(text, document)
    # A .txt file is reST if docutils reads it with few errors (Sphinx sources have a handful
    # of directives used where plain docutils forbids them) and nothing severe.
    if strict and (any(m["level"] >= 4 for m in errors) or len(errors) > max(3, text.count("\n") // 100)):
        return None
    _keep_undefined_substitutions(document)
    document.transformer.add_transform(Substitutions)
    document.transformer.apply_transforms()
    deadline.check()
    out = Builder(deadline)
    _Walk(out).run(document)
    title = out.first_heading() or title_from_name(path)
    return out.finish("rest", title, {}, [])


def _keep_undefined_substitutions(document: Any) -> None:
    """`|version|` with no definition (Sphinx defines it in conf.py) reads as its name."""
    from docutils import nodes

    defined = set(document.substitution_names)
    for ref in list(document.findall(nodes.substitution_reference)):
        if nodes.fully_normalize_name(ref["refname"]) not in defined:
            ref.replace_self(nodes.Text(ref.astext()))


class _Walk:
    """Depth-first over the doctree with an explicit stack: deep trees never recurse."""

    def __init__(self, out: Builder):
        self.out = out
        self.contexts: list[list[Any]] = []  # [kind, level, ordinal, emitted]

    def run(self, document: Any) -> None:
        from docutils import nodes

        # Work items: (node, section depth, list depth) to open, or a callable to run on leaving.
        stack: list[Any] = [(document, 0, 0, 0)]
        while stack:
            item = stack.pop()
            if callable(item):
                item()
                continue
            node, depth, lists, ordinal = item
            name = node.tagname
            if isinstance(node, nodes.Text) or name in _DROP_BLOCK:
                continue
            children = list(node.children)
            if name == "section":
                stack.extend((c, depth + 1, lists, 0) for c in reversed(children))
            elif name == "title" and isinstance(node.parent, nodes.section):
                code = bool(node.children) and all(
                    c.tagname == "literal" or (isinstance(c, nodes.Text) and not c.strip()) for c in node.children)
                self.out.heading(depth, inline_text(node, plain=True), code=code)
            elif name in ("title", "subtitle", "caption", "rubric", "attribution", "line"):
                if not (name == "title" and node.parent.tagname in _ADMONITIONS | {"topic", "sidebar"}):
                    self._prose(inline_text(node))
            elif name == "paragraph":
                self._prose(inline_text(node))
            elif name in ("definition_list_item", "field", "option_list_item"):
                self._item(stack, node, children, depth, lists)
            elif name in ("literal_block", "doctest_block", "math_block"):
                self._term_first()
                self.out.code(plain_text(node), _code_language(node))
            elif name in ("term", "field_name", "option_group", "classifier"):
                continue  # read with their item
            elif name in ("bullet_list", "enumerated_list"):
                self._term_first()
                start = int(node.get("start", 1)) if name == "enumerated_list" else 0
                for n, child in reversed(list(enumerate(children))):
                    stack.append((child, depth, lists + 1, start + n if start else 0))
            elif name == "table":
                self._term_first()
                self.out.table(_table_rows(node))
            elif name == "topic" and "contents" in node.get("classes", []):
                continue  # a table of contents
            elif name == "list_item":
                self._open(stack, ["item", lists, ordinal, False], children, depth, lists)
            elif name in ("definition", "field_body", "description"):
                stack.extend((c, depth, lists, 0) for c in reversed(children))
            elif name == "block_quote":
                self._open(stack, ["quote", 0, 0, False], children, depth, lists)
            else:  # containers: admonitions, definition list items, figures, footnotes...
                stack.extend((c, depth, lists, 0) for c in reversed(children))

    def _open(self, stack: list[Any], context: list[Any], children: list[Any], depth: int, lists: int) -> None:
        self.contexts.append(context)
        stack.append(self.contexts.pop)
        stack.extend((c, depth, lists, 0) for c in reversed(children))

    def _item(self, stack: list[Any], node: Any, children: list[Any], depth: int, lists: int) -> None:
        """A definition list, field list or option list item: its term, then its description,
        whose first paragraph is the definition of the term (a term block when none comes)."""
        terms = [c for c in children if c.tagname in ("term", "field_name", "option_group")]
        term = ", ".join(_options(t) if t.tagname == "option_group" else inline_text(t) for t in terms)
        kinds = node.get("classes", [])
        code: bool | None = True if node.tagname == "option_list_item" or "object" in kinds else None
        name, scope = _signature_name(term) if "object" in kinds else ("", "")
        if ("object" in kinds or node.tagname in ("field", "definition_list_item")) and not scope:
            # a member inside its owner's description: a method, a field, a tuple's item, a value
            scope = next((c[5] for c in reversed(self.contexts) if len(c) > 5 and c[5]), "")
        if "program" in kinds and term:
            self.out.owner = term.strip("`")  # `.. program:: sphinx-build`: the owner of the options after it
        context = ["definition", 0, 0, False, (term, name, scope, code) if term else None,
                   name if "object" in kinds else ""]

        def close() -> None:
            self._term_first()
            self.contexts.pop()

        self.contexts.append(context)
        stack.append(close)
        stack.extend((c, depth, lists, 0) for c in reversed(children) if c.tagname not in ("term", "field_name",
                                                                                            "option_group"))

    def _term_first(self) -> None:
        """The open item's term, written as a term block: what follows it is no sentence."""
        context = self.contexts[-1] if self.contexts else None
        if context is not None and len(context) > 4 and context[4] is not None:
            self.out.prose("term", context[4][0])
            context[4] = None

    def _prose(self, text: str) -> None:
        context = self.contexts[-1] if self.contexts else None
        if context is not None and len(context) > 4 and context[4] is not None:
            term, name, scope, code = context[4]
            context[4] = None
            context[3] = True
            self.out.definition(term, text, name=name, scope=scope, code=code)
            return
        if context is None:
            self.out.prose("paragraph", text)
        elif context[0] == "quote":
            self.out.prose("quote", text)
        elif context[3]:
            self.out.prose("paragraph", text)  # a later paragraph of the same item
        else:
            context[3] = True
            self.out.prose(context[0], text, level=context[1], ordinal=context[2])


def _options(group: Any) -> str:
    """An option list's options as written: "-a, --all", "-o FILE"."""
    out = []
    for option in group.children:
        text = ""
        for part in option.children:
            if part.tagname == "option_argument":
                text += part.get("delimiter", " ") + part.astext()
            else:
                text += part.astext()
        out.append(text)
    return ", ".join(out)


_DIRECTIVE_SIGNATURE = re.compile(r"^\.\.\s+([\w:.+-]+)::")


def _signature_name(signature: str) -> tuple[str, str]:
    """(name, owner) of an API signature: "Sphinx.add_builder(builder)" -> ("add_builder", "Sphinx");
    a directive's (".. c:alias:: name" -> "c:alias") and an option's with its type ("maxdepth: int")."""
    text = signature.strip("`").strip()
    directive = _DIRECTIVE_SIGNATURE.match(text)
    if directive:
        return directive[1], ""
    head = re.split(r"[\s(\[=<]|:\s", text, maxsplit=1)[0].rstrip(":")
    owner, _, name = head.rpartition(".")
    return name, owner if re.search(r"\w", owner) else ""


def _code_language(node: Any) -> str:
    if node.get("language"):
        return str(node["language"])
    classes = [c for c in node.get("classes", []) if c != "code"]
    return classes[0] if classes else ""


def _table_rows(table: Any) -> list[list[str]]:
    rows = []
    for row in table.findall(condition=lambda n: n.tagname == "row"):
        rows.append([inline_text(entry) for entry in row.children if entry.tagname == "entry"])
    return rows


def plain_text(node: Any) -> str:
    """All text under a node, in order, without recursion."""
    from docutils import nodes

    parts: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, nodes.Text):
            parts.append(current.astext())
        elif current.tagname not in _DROP_INLINE:
            stack.extend(reversed(current.children))
    return "".join(parts)


def inline_text(node: Any, *, plain: bool = False) -> str:
    """A text element's words: literals in backticks (unless `plain`, as headings are),
    references as their text, footnote marks dropped."""
    from docutils import nodes

    parts: list[str] = []
    stack: list[Any] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, str) and not isinstance(current, nodes.Text):
            parts.append(current)  # a closing mark pushed below
        elif isinstance(current, nodes.Text):
            parts.append(current.astext().replace("\n", " "))
        elif current.tagname in _DROP_INLINE:
            continue
        elif current.tagname in _LITERAL or (current.tagname == "math" and current is not node):
            text = plain_text(current).strip()
            if text:
                parts.append(text if plain else code_span(text))
        elif current.tagname in ("paragraph",) and current is not node:
            stack.append(" ")
            stack.extend(reversed(current.children))
        else:
            stack.extend(reversed(current.children))
    return "".join(parts)
