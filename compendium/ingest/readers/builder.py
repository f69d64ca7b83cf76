"""The Builder every reader writes through: blocks appended to the normalised text, with their
heading path, and a definition made of each term the source describes."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from .definition_terms import (
    bare_term,
    code_like,
    heading_name,
    identifier_like,
    names_first,
    term_parts,
    unmarked,
    unquoted,
)
from .line_shapes import (
    ARGUMENT_SENTENCE,
    HAS_LOWER,
    LONE_LABEL,
    NAME_LINE,
    NOTICE,
    OPTION_ENTRY,
    OPTION_PARAGRAPH,
    PLACEHOLDERS,
    SENTENCE_BREAK,
    field_line,
    label_like,
    label_words,
)
from .model import Block, Deadline, ParsedDocument, clean, code_span, one_line, table_text

# Sibling sections defining the same term make it a field of a record each section describes.
_RECORD_SECTIONS = 3
# A heading naming a kind of code and its name: "Class ArgumentParsers", "Interface Argument".
# A name declared by code: called or defined with its arguments ("text\u200b(String text)"), or a
# field's declaration ("public static final String NAME").
_WORD_NAME = re.compile(r"[A-Za-z_$][\w$]*")


def declares(code: str, heading: str) -> bool:
    """Whether the code's first line declares the one word a heading is."""
    name = heading.strip()
    if not _WORD_NAME.fullmatch(name):
        return False
    first = code.strip().split("\n", 1)[0]
    return re.search(rf"(?<![\w$.]){re.escape(name)}[\u200b\s]*(?:\(|=|;|$)", first) is not None


_CODE_KIND = re.compile(r"(?:Class|Interface|Enum|Annotation Type|Record|Module|Package|Struct)\s+(?P<name>[\w.$]+)")


class Builder:
    """Appends blocks to the normalised text, tracking the heading path and spans."""

    def __init__(self, deadline: Deadline | None = None) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.blocks: list[Block] = []
        self.headings: list[tuple[int, str, bool]] = []  # (level, heading, a name heading) of the open sections
        self.path: tuple[str, ...] = ()
        self.deadline = deadline
        self.owner = ""  # the command a man page's NAME line names: the scope of its options
        self.group: tuple[int, str] | None = None  # the heading of a man page's group of options
        self.synopsis: set[str] = set()  # the words of a man page's SYNOPSIS
        # What the next paragraph defines: a name heading's text, or a term whose description
        # follows its list. (term, name, scope, code, written: False until the text holds the term)
        self.named: tuple[str, str, str, bool | None, bool] | None = None
        self.held: list[str] = []  # notices met while a term waited for its description
        # Where each open entry (a definition list item's description) started in `blocks`:
        # its later paragraphs and items carry its term and scope.
        self.entries: list[int] = []
        # The entry a name heading opened ((term, scope, path) of its definition): the later
        # paragraphs of its section are more of it.
        self.heading_entry: tuple[str, str, tuple[str, ...]] | None = None
        self.declared = ""  # the type a Javadoc page declares ("public class Selector"): its members' owner

    def heading(self, level: int, text: str, *, code: bool = False, group: bool = False) -> None:
        """A heading; `code` when the source writes all of it as code (a setting, an API name):
        its first paragraph is then the definition of that name, as it is for a heading that
        is `identifier_like`."""
        text = one_line(text)
        if not text:
            return
        self._term_out()
        if not group:
            self._close_group()
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.heading_entry = None
        self.headings.append((level, text, (code and len(text) <= 120) or identifier_like(text)))
        self.path = tuple(h for _, h, _ in self.headings)
        self._add(Block("heading", 0, 0, self.path, level=level), text)
        named = (code and len(text) <= 120) or identifier_like(text)
        self.named = (text, heading_name(text), self._heading_scope(), True, True) if named else None

    def _heading_scope(self) -> str:
        """The owner of a name heading's name: the nearest name heading above it, else a heading
        above naming a kind of code ("Class ArgumentParsers" over "Method Detail" over
        "newArgumentParser"), else the heading right above it (a settings group)."""
        above = self.headings[:-1]
        if not above:
            return ""
        owner = next((heading_name(h) for _, h, is_name in reversed(above) if is_name), "")
        if not owner:
            owner = next((kind["name"] for _, h, _ in reversed(above) if (kind := _CODE_KIND.fullmatch(h.split("<")[0].strip()))), "")
        # the type the page declares, though a heading of its description ("Selector syntax")
        # took the place of the one naming it
        return owner or self.declared or above[-1][1]

    def pending_term(self, term: str, *, name: str = "", scope: str = "", code: bool | None = None) -> None:
        """A term whose description is the next paragraph (an API entry's signature written
        before its text); a term block of its own if anything else comes first."""
        term = one_line(term)
        if term:
            self._term_out()
            self.named = (term, name or bare_term(term), scope, code, False)

    def definition(self, term: str, description: str, *, name: str = "", scope: str = "",
                   code: bool | None = None) -> None:
        """A definition: `term` as the source writes it (inline code marked; a signature for an
        API entry), its `description`, the bare `name` it defines (from the term when not
        given) and its `scope`. An option or placeholder of a man page belongs to the page's
        command when the source names no other owner. Written "term: description", the term as
        code when `code` (or, when None, when it is `code_like`)."""
        term, description = one_line(term), one_line(description)
        if not term or not description:
            self.prose("definition" if description else "term", description or term)
            return
        plain = ", ".join(unquoted(p) for p in term_parts(unmarked(term)))
        if code is None:
            code = code_like(plain)
        shown = code_span(plain) if code else term
        name = name or bare_term(term)
        if name and names_first(description, name) and "(" not in plain:
            shown = ""  # the description names it already: "The component_0 carries ..." (a signature stays)
        if not scope and name.startswith(("-", "<")):
            scope = self.owner or next((h for _, h, is_name in reversed(self.headings) if is_name), "")
        text = f"{shown}: {description}" if shown else description
        self._add(Block("definition", 0, 0, self.path, term=name, scope=scope), text)
        self._held_out()

    def aside(self, text: str) -> None:
        """A notice about what comes next ("Deprecated. Use ... instead"): written after the
        description of a pending term, which it would otherwise take the place of."""
        text = one_line(text)
        if not text:
            return
        if self.named is not None and not self.named[4]:
            self.held.append(text)
        else:
            self._add(Block("paragraph", 0, 0, self.path), text)

    def prose(self, kind: str, text: str, *, level: int = 0, ordinal: int = 0) -> None:
        """A paragraph, item, term, definition or quote; whitespace runs become one space. The
        first paragraph under a NAME heading shaped "name - purpose" is a definition of that
        name, as is the first paragraph under a name heading (field lines such as "Default:
        `False`" aside)."""
        text = one_line(text)
        if not text:
            return
        if kind == "paragraph" and self.blocks and self.blocks[-1].kind == "heading" and self._name_line(text):
            return
        if kind == "paragraph" and self._continued_by(text):
            return
        if kind == "paragraph" and (options := OPTION_PARAGRAPH.fullmatch(text)) is not None:
            # a man page's option on a line of its own over its indented description (groff's
            # HTML), after a group label at times ("Output details: --color"): the label heads
            # the options after it, so msgfmt's four "-d DIRECTORY" each stand under their mode
            if options["group"] or options["label"]:
                self._group_heading(options["group"] or options["label"])
            if options["sentence"]:  # the group's note ("... in update mode: The result is written back")
                self._add(Block("paragraph", 0, 0, self.path), options["sentence"])
            # an argument placeholder ("INPUTFILE ...") is its command's, as an option is
            arguments = options["arguments"]
            self.pending_term(options["options"] or arguments, code=True, name=arguments.split()[0] if arguments else "",
                              scope=self.owner if arguments else "")
            return
        if (kind == "paragraph" and self.owner and self.synopsis and (lone := LONE_LABEL.fullmatch(text))
                and label_like(text)):
            self._group_heading(lone["label"])  # a man page's group label over its entries
            return
        if kind == "paragraph" and self._placeholders(text):
            self.pending_term(text, code=True, name=text.split()[0].strip("[]"), scope=self.owner)
            return
        if kind == "paragraph" and self.headings and self.headings[-1][1].lower() == "synopsis":
            self.synopsis.update(w.strip("[]") for w in text.split())
        if kind == "paragraph" and self.named is None and self._arguments_described(text):
            return
        if kind == "paragraph" and self.named is not None:
            if NOTICE.match(text) and not self.named[4]:
                self.held.append(text)
                return
            if field_line(text) or not HAS_LOWER.search(text):
                # a field line ("Default: `False`"), or capitals only: a man page's list of its
                # sections ("NAME SYNOPSIS DESCRIPTION"), never what the name is
                self._add(Block(kind, 0, 0, self.path), text, keep_named=True)
                return
            term, name, scope, code, heading = self.named
            self.named = None
            self.definition(term, text, name=name, scope=scope, code=code)
            last = self.blocks[-1] if self.blocks else None
            if heading and last is not None and last.kind == "definition" and last.term:
                self.heading_entry = (last.term, last.scope, self.path)
            return
        if kind == "item":
            marker = f"{ordinal}. " if ordinal else "- "
            text = "  " * max(level - 1, 0) + marker + text
        elif kind == "quote":
            text = "> " + text
        term, scope = self._open_entry() if kind in ("paragraph", "item") else ("", "")
        self._add(Block(kind, 0, 0, self.path, level=level, term=term, scope=scope), text)

    def entry_open(self) -> None:
        """A definition list item's description starts: its first paragraph defines its term,
        and what follows until `entry_close` is more of that entry."""
        self.entries.append(len(self.blocks))

    def entry_close(self) -> None:
        if self.entries:
            self.entries.pop()

    def _open_entry(self) -> tuple[str, str]:
        """(term, scope) of the innermost open entry whose definition is written (a definition
        list item's, else a name heading's), else ("", "")."""
        if not self.entries:
            if self.heading_entry is not None and self.heading_entry[2] == self.path:
                return self.heading_entry[:2]
            return "", ""
        first = next((b for b in self.blocks[self.entries[-1]:] if b.kind == "definition"), None)
        return (first.term, first.scope) if first is not None and first.term else ("", "")

    def _group_heading(self, label: str) -> None:
        """A heading for a group label of options, one level under the section it is in; the
        next label replaces it."""
        level = 2
        if self.headings:
            last_level, last, _ = self.headings[-1]
            level = last_level if (last_level, last) == self.group else last_level + 1
        self.heading(min(level, 6), label, group=True)
        self.group = (min(level, 6), one_line(label))

    def _placeholders(self, text: str) -> bool:
        """A man page's line of argument placeholders named in its SYNOPSIS ("MSGID MSGID-PLURAL")."""
        return bool(self.owner and self.synopsis and PLACEHOLDERS.fullmatch(text) and text != self.owner
                    and all(w.strip("[]") in self.synopsis and w.strip("[]") != self.owner for w in text.split()))

    def _arguments_described(self, text: str) -> bool:
        """A man page's paragraph that says what its SYNOPSIS arguments are ("The def.po file is
        an existing PO file ..."): each such sentence an entry of the command, the rest prose.
        False (nothing written) when no sentence describes one."""
        if not (self.owner and self.synopsis):
            return False
        sentences = SENTENCE_BREAK.split(text)
        described = [ARGUMENT_SENTENCE.match(s) for s in sentences]
        if not any(m and m["name"] in self.synopsis for m in described):
            return False
        prose: list[str] = []
        for sentence, match in zip(sentences, described, strict=True):
            if match and match["name"] in self.synopsis:
                if prose:
                    self._add(Block("paragraph", 0, 0, self.path), " ".join(prose))
                    prose = []
                self.definition(match["name"], sentence, name=match["name"], scope=self.owner, code=True)
            else:
                prose.append(sentence)
        if prose:
            self._add(Block("paragraph", 0, 0, self.path), " ".join(prose))
        return True

    def _close_group(self) -> None:
        """The section's last group of options ends where the section does: the paragraphs
        after its options that share no word with its label close the section, not the
        group ("If the TEXTDOMAIN parameter is not given, ..." after "Informative output"'s
        options); a note that does ("If output file is -, ..." under "Output file location")
        stays under it."""
        group, self.group = self.group, None
        if group is None or not self.headings or self.headings[-1][1] != group[1]:
            return
        label = label_words(group[1])
        trailing = len(self.blocks)
        while trailing > 0 and self.blocks[trailing - 1].kind == "paragraph" \
                and self.blocks[trailing - 1].heading_path == self.path:
            trailing -= 1
        if trailing == len(self.blocks) or self.blocks[trailing - 1].kind != "definition":
            return  # no options, or nothing after them
        closing = range(trailing, len(self.blocks))
        if any(label & label_words(self.parts[2 * i]) for i in closing):  # a block, then its separator
            return
        for i in closing:
            self.blocks[i] = replace(self.blocks[i], heading_path=self.path[:-1])

    def _continued_by(self, text: str) -> bool:
        """Whether `text` finishes the sentence the last paragraph or definition broke off (a
        renderer's paragraph break inside one: "(single-space, which is the default," / "or
        double-space)"): then it is appended to that block, and True."""
        last = self.blocks[-1] if self.blocks and self.named is None else None
        if last is None or last.kind not in ("paragraph", "definition") or not text[:1].islower():
            return False
        before = self.parts[-1]
        if not (before.endswith(",") or before.count("(") > before.count(")")):
            return False
        self.parts[-1] = f"{before} {text}"
        self.length += len(text) + 1
        self.blocks[-1] = Block(last.kind, last.start, self.length, last.heading_path, last.level, last.language,
                                last.rows, last.term, last.scope)
        return True

    def paragraph_lines(self, text: str) -> None:
        """A paragraph of plain text or PDF, its line breaks kept as the source has them."""
        text = re.sub(r"[ \t]+\n", "\n", clean(text)).strip()
        if text:
            self._add(Block("paragraph", 0, 0, self.path), re.sub(r"\n{2,}", "\n", text))

    def code(self, text: str, language: str = "") -> None:
        text = clean(text).strip("\n")
        if not text.strip():
            return
        language = one_line(language).split(" ")[0]
        fence = "````" if "```" in text else "```"
        if self.named is None and self.blocks and self.blocks[-1].kind == "heading" and declares(text, self.path[-1]):
            # a heading of one plain word over the code declaring it (an older Javadoc's
            # "<h4>text</h4><pre>public String text()</pre>"): a name heading, as `setText` is
            level, heading, _ = self.headings[-1]
            scope = self._heading_scope()
            if scope.rpartition(".")[2] != heading:  # not a constructor, which its class's entry defines
                self.headings[-1] = (level, heading, True)
                self.named = (heading, heading_name(heading), scope, True, True)
        # under a name heading, code before any text is the name's signature or synopsis (an
        # older Javadoc's "<h4>name</h4><pre>signature</pre>"): the text after it still defines it
        signature = self.named is not None and self.named[4]
        self._add(Block("code", 0, 0, self.path, language=language), f"{fence}{language}\n{text}\n{fence}",
                  keep_named=signature)

    def table(self, rows: list[list[str]]) -> None:
        rows = [[one_line(c) for c in row] for row in rows]
        rows = [row for row in rows if any(row)]
        if not rows:
            return
        entries = [[c for c in row if c] for row in rows]
        if all(len(e) == 2 for e in entries) and all(
                OPTION_ENTRY.fullmatch(e[0]) or self._placeholders(e[0]) for e in entries):
            # groff's layout table of short options and their descriptions ("-e" | "enable ..."):
            # entries, not data
            for term, description in entries:
                placeholder = not OPTION_ENTRY.fullmatch(term)
                self.definition(term, description, code=True, scope=self.owner if placeholder else "",
                                name=term.split()[0].strip("[]") if placeholder else "")
            return
        width = max(len(r) for r in rows)
        rows = [row + [""] * (width - len(row)) for row in rows]
        block = Block("table", 0, 0, self.path, rows=tuple(tuple(r) for r in rows))
        self._add(block, table_text(rows))

    def _name_line(self, text: str) -> bool:
        """A man page's NAME line read as the definition of its command; False when it is not one."""
        heading = self.headings[-1][1].strip() if self.headings else ""
        match = NAME_LINE.fullmatch(text)
        if match is None or (heading.lower() != "name" and heading != match["names"]):
            return False  # a NAME section's line, or one under a heading that is the name itself
        names = term_parts(match["names"])
        if heading.lower() == "name" and any(" " in n for n in names):
            return False  # names are single tokens: "git-add", "gitk, git-gui"
        self.definition(match["names"], match["purpose"], name=names[0], code=True)
        self.owner = self.owner or names[0]
        return True

    def _term_out(self) -> None:
        """A pending term no paragraph described, written as a term block."""
        named, self.named = self.named, None
        if named is not None and not named[4]:
            self._add(Block("term", 0, 0, self.path), named[0])
        self._held_out()

    def _held_out(self) -> None:
        held, self.held = self.held, []
        for text in held:
            self._add(Block("paragraph", 0, 0, self.path), text)

    def _add(self, block: Block, text: str, *, keep_named: bool = False) -> None:
        if not keep_named and self.named is not None:
            self._term_out()
        if self.parts:
            self.parts.append("\n\n")
            self.length += 2
        start = self.length
        self.parts.append(text)
        self.length += len(text)
        self.blocks.append(
            Block(block.kind, start, self.length, block.heading_path, block.level, block.language, block.rows,
                  block.term, block.scope)
        )
        if self.deadline is not None and len(self.blocks) % 256 == 0:
            self.deadline.check()

    def first_heading(self) -> str:
        """The top-level heading that comes first (an h1 when there is one)."""
        headings = [b for b in self.blocks if b.kind == "heading"]
        if not headings:
            return ""
        best = min(headings, key=lambda b: (b.level, b.start))
        return best.heading_path[-1]

    def finish(self, fmt: str, title: str, metadata: dict[str, Any], warnings: list[str]) -> ParsedDocument:
        self._term_out()
        self._record_fields()
        return ParsedDocument("".join(self.parts), title, fmt, self.blocks, metadata, warnings)

    def _record_fields(self) -> None:
        """A term defined again under each of several sibling sections ("setlocale: ..." under
        every language of a list of language profiles) is a field of each section's subject,
        not a subject of its own: its definitions take their section as scope."""
        sections: dict[tuple[str, tuple[str, ...]], set[str]] = {}
        for block in self.blocks:
            if block.kind == "definition" and not block.scope and block.term and len(block.heading_path) >= 2:
                sections.setdefault((block.term, block.heading_path[:-1]), set()).add(block.heading_path[-1])
        fields = {key for key, where in sections.items() if len(where) >= _RECORD_SECTIONS}
        if not fields:
            return
        for i, block in enumerate(self.blocks):
            if block.kind == "definition" and not block.scope and (block.term, block.heading_path[:-1]) in fields:
                self.blocks[i] = replace(block, scope=block.heading_path[-1])
