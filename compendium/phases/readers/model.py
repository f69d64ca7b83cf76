"""The document model every reader produces: normalised text cut into typed blocks."""

from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any

from ...errors import InputError

# Block kinds. Prose kinds hold sentences; the others are structure and never do.
PROSE_KINDS = frozenset({"paragraph", "item", "definition", "quote"})
KINDS = PROSE_KINDS | {"heading", "term", "code", "table"}


@dataclass(frozen=True, slots=True)
class Block:
    """One structural piece of a document: `text[start:end]` of the ParsedDocument.

    Text conventions, the same for every format: a heading is its plain text; prose is plain
    text with inline code in backticks (a longer run of them when the code holds one); an item
    starts with "- " (or "N. ") indented two spaces per level; a quote starts with "> "; code is
    fenced with its language; a table is a pipe table whose first row is the header.

    A definition is what the authors say a thing is (a definition-list item, a glossary entry,
    an API entry, a man page's NAME line, an identifier heading's first paragraph). Its text
    opens with the term as the source writes it (a signature for an API entry), code-like terms
    in backticks, then ": " and the description ("`--squash`: Produce the working tree ..."),
    so every sentence cited from it names what it is about. `term` is the bare name defined
    ("--squash", "Field"), `scope` its owner where the source gives one (the command of a man
    page, the class of a member, the group heading of a setting). A `term` block is a term
    with no description of its own.
    """

    kind: str  # heading | paragraph | item | term | definition | quote | code | table
    start: int
    end: int
    heading_path: tuple[str, ...]  # headings above it; a heading's path ends with itself
    level: int = 0  # heading level (1-6), list depth of an item (1 = top)
    language: str = ""  # of a code block, when the source says
    rows: tuple[tuple[str, ...], ...] = ()  # cells of a table, header row first
    term: str = ""  # of a definition: the name it defines
    scope: str = ""  # of a definition: the owner of that name, "" when the source names none


@dataclass(slots=True)
class ParsedDocument:
    text: str  # normalised text: blocks separated by a blank line
    title: str
    format: str  # markdown | text | rest | html | pdf | docx
    blocks: list[Block] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # problems that did not stop the read


class Deadline:
    """The time a reader may spend on one document; readers call `check` as they go."""

    def __init__(self, label: str, seconds: float):
        self.label = label
        self.seconds = seconds
        self.until = time.monotonic() + seconds

    def check(self) -> None:
        if time.monotonic() > self.until:
            raise InputError(
                f"{self.label}: reading took longer than the {self.seconds:g} s limit",
                hint="split the file into smaller ones or raise the time limit",
            )


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean(text: str) -> str:
    """NFC, Unix newlines, no control characters (they break JSON and prompts)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", unicodedata.normalize("NFC", text))


def one_line(text: str) -> str:
    # str.split and regex \s agree on what whitespace is; split is the cheaper of the two.
    return " ".join(clean(text).split())


def table_text(rows: list[list[str]]) -> str:
    """A pipe table: header row, separator, body rows; pipes inside cells escaped."""
    width = max(len(r) for r in rows)
    lines = []
    for i, row in enumerate(rows):
        cells = [c.replace("|", "\\|") for c in row] + [""] * (width - len(row))
        lines.append("| " + " | ".join(cells) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


# A man page's NAME line: "git-add - Add file contents to the index", "pg_dump — extract ...".
_NAME_LINE = re.compile(r"(?P<names>\S.{0,120}?)\s+(?:-|--|\u2013|\u2014)\s+(?P<purpose>\S.*)")
# A field line under a name heading, not its description: "Default: `False`", "Type: int".
# A notice standing between a term and its description: Javadoc's "Deprecated.", Sphinx's
# "New in version 3.1." / "Changed in Django 4.0: ..." / "Deprecated since version 2.0: ...".
NOTICE = _DEPRECATED = re.compile(r"Deprecated(?:\.(?:\s|$)|\s+since\s)|(?:New|Changed)\s+in\s+(?:version\s+)?[\w.+-]{1,30}"
                         r"(?:\s+\d[\w.+-]*)?\s*[:.]")
_HAS_LOWER = re.compile(r"[a-z]")
_OPTION = r"--?[A-Za-z0-9?<>][\w+-]*(?:\[?=[^\s,]+\]?|\[[^\s,\]]+\]|\s[A-Z][A-Z_]*)?"  # "--c++", "-m[STRING]"
_GROUP_LABEL = r"[A-Z][\w #+./'‘’-]{0,60}"
_OPTION_PARAGRAPH = re.compile(
    # after a group label ("Output details: --color"), or after the sentence before the
    # options, when the renderer broke the line there ("Display ... message. -d, --domain=X")
    rf"(?:(?P<group>{_GROUP_LABEL}):\s+)?(?:(?P<sentence>[A-Z][^:]{{0,300}}?\.)\s+)?(?P<options>{_OPTION}(?:,\s*{_OPTION})*)"
    rf"|(?P<label>{_GROUP_LABEL}):\s+(?P<arguments>[\w.-]+\s\.\.\.)"  # "Input file location: filename.po ..."
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
# "The def.po file is ...", "The FILE argument names ...": what an argument of the SYNOPSIS is
_ARGUMENT_SENTENCE = re.compile(r"The (?P<name>[\w.-]+)(?: file| files| argument| parameter| operand)? "
                                r"(?:is|are|names?|gives?|specifies|must)\b")
_OPTION_ENTRY = re.compile(rf"{_OPTION}(?:,\s*{_OPTION})*")
# A line of argument placeholders over their description ("[TEXTDOMAIN] MSGID"): each word is
# in the command's SYNOPSIS.
_PLACEHOLDERS = re.compile(r"\[?[\w.-]+\]?(?:\s+\[?[\w.-]+\]?){0,3}")
_LONE_LABEL = re.compile(rf"(?P<label>{_GROUP_LABEL}):")  # "Input file location:" over its entries
_FIELD_LINE = re.compile(r"[A-Z][\w -]{0,30}:\s+\S.{0,80}")
_PLAIN_WORD = re.compile(r"[A-Za-z]+(?:[-'’][A-Za-z]+)*")  # "Python", "DEBUG", "built-in": words
_ARGUMENT = re.compile(r"[\s=\[(<{]")  # where an option's argument or a signature begins
_VERSION = re.compile(r"[vV]?\d")  # "v1.2", "3.11": a release, not a name
_IDENTIFIER_MARK = re.compile(r"[_.(/]|::|\w-\w.*\(|^--?\w")  # what a word never holds


_LABEL_WORD = re.compile(r"[A-Za-z]{4,}")


def _label_words(text: str) -> set[str]:
    """The words of four letters or more a group label and its notes can share."""
    return {w.lower() for w in _LABEL_WORD.findall(text)}


def code_span(text: str) -> str:
    """`text` as inline code: fenced with one more backtick than its longest run inside, and
    padded with a space where it starts or ends with one (CommonMark's rule)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _unmarked(text: str) -> str:
    """A term without its inline code marks (single backtick runs around plain code)."""
    return re.sub(r"(`+)\s?(.*?)\s?\1", r"\2", text)


def _field_line(text: str) -> bool:
    """A field of an entry ("Default: `False`", "Availability: MariaDB, MySQL, Oracle"), not a
    description that opens with a label ("Java mode: generate a Java ResourceBundle class")."""
    if not _FIELD_LINE.fullmatch(text) or len(text.split()) > 8:
        return False
    label, value = text.split(":", 1)
    words = value.split()
    if len(label.split()) > 1 and len(words) >= 3 and words[0].islower() and words[1] in _ARTICLES:
        return False  # a predicate: "Desktop Entry mode: generate a .desktop file"
    return len(label.split()) == 1 or len(words) <= 4


_ARTICLES = frozenset({"a", "an", "the"})
# Words a label ("Input file location:") never opens with or holds: it names, it does not say.
_NOT_LABEL_OPENING = frozenset("a an the this these that those it its there here you we from to in on for with by at "
                               "of if when how what why where which as".split())
_NOT_LABEL_WORD = frozenset("is are was were has have had can will do does should must may".split())


def _label_like(text: str) -> bool:
    words = text.rstrip(":").lower().split()
    return 0 < len(words) <= 6 and words[0] not in _NOT_LABEL_OPENING and not _NOT_LABEL_WORD.intersection(words)


def unquoted(text: str) -> str:
    """A term without the quotes around it ("‘--all’" -> "--all"); quotes inside it stay
    ("content=b''", "path='/'")."""
    text = text.strip()
    if len(text) >= 2 and text[0] in "‘“'\"" and text[-1] in "’”'\"" and text[1:-1].strip():
        return text[1:-1].strip()
    return text


def _parts(term: str) -> list[str]:
    return [p.strip() for p in re.split(r",\s+|\s+\|\s+", term) if p.strip()]


def code_like(term: str) -> bool:
    """Is every part of a term a name written as code: an option ("-a, --all",
    "--date=<format>"), an identifier ("ALLOWED_HOSTS", "os.path", "git-add(1)") or a signature
    ("escape(String str)")? Words ("Write-Ahead Log", "Python", "always") are not."""
    parts = _parts(term)
    if not parts:
        return False
    for part in parts:
        head = _ARGUMENT.split(part, maxsplit=1)[0]
        if not head:
            if part.startswith("<") and ">" in part:
                continue  # a placeholder: "<pathspec>..."
            return False
        if head == part and _PLAIN_WORD.fullmatch(head):
            return False
        rest = part[len(head):].lstrip()
        if head != part and not (part.startswith("-") or _ARGUMENT.match(part, len(head)).group() in "=[(<{"
                                 or (rest[:2] in ("[<", "[-") or rest[:1] == "<")):
            return False  # "Log file": words, not a name and its argument ("list [<log-options>]" is one)
    return True


def identifier_like(text: str) -> bool:
    """A heading that is a name rather than a title: one token holding what words never hold
    (an underscore, a dot, parentheses, "::", a leading dash): `max_wal_size`, `os.path`,
    `git-add(1)`, `--verbose`."""
    text = text.strip()
    if not text or " " in text or len(text) > 80 or not any(c.isalpha() for c in text) or _VERSION.match(text):
        return False
    return _IDENTIFIER_MARK.search(text) is not None and not text.endswith(".")


_KEYWORD = re.compile(r"(?:(?:async|abstract|static|final|public|class|def|function|method|exception|property|"
                      r"attribute|data|module|enum|interface|struct)\s+)+")
_HEAD_NAME = re.compile(r"[^\s:(=\[<]+")


def heading_name(text: str) -> str:
    """The name a name heading gives: "src_uri: str class-attribute" -> "src_uri", "class
    Basket(items)" -> "Basket", "git-add(1)" -> "git-add"."""
    text = _KEYWORD.sub("", text.strip(), count=1) if _KEYWORD.match(text.strip()) else text.strip()
    found = _HEAD_NAME.match(text)
    return found.group().rstrip(".") if found else text


_ARTICLE = re.compile(r"(?:The|the|An?|an?)\s+")


def _names_first(description: str, name: str) -> bool:
    """Does a description of four words or more open with `name` (after an article, in code
    marks or not): "The component_0 carries ...", "`limit` caps ..."?"""
    if len(description) < len(name) + 8 or description.count(" ") < 3:
        return False
    start = _ARTICLE.match(description)
    rest = description[start.end():] if start else description
    if not rest.startswith("`") and name.isalpha() and name.islower():
        return False  # "The charset in which ...": the English word, not the name `charset`
    rest = rest.lstrip("`")
    end = len(name)
    return rest.startswith(name) and (end == len(rest) or not (rest[end].isalnum() or rest[end] == "_"))


def bare_term(term: str) -> str:
    """The name a term defines: its long option when it lists several ("-a, --all" -> "--all"),
    else its first part, without argument, signature or code marks."""
    parts = [(_ARGUMENT.split(p, maxsplit=1)[0] or p) if code_like(p) else p for p in _parts(_unmarked(term))]
    if not parts:
        return ""
    return next((p for p in parts if p.startswith("--")), parts[0])


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
        self.headings.append((level, text, (code and len(text) <= 120) or identifier_like(text)))
        self.path = tuple(h for _, h, _ in self.headings)
        self._add(Block("heading", 0, 0, self.path, level=level), text)
        named = (code and len(text) <= 120) or identifier_like(text)
        self.named = (text, heading_name(text), self.path[-2] if len(self.path) > 1 else "", True, True) if named else None

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
        plain = ", ".join(unquoted(p) for p in _parts(_unmarked(term)))
        if code is None:
            code = code_like(plain)
        shown = code_span(plain) if code else term
        name = name or bare_term(term)
        if name and _names_first(description, name) and "(" not in plain:
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
        if kind == "paragraph" and (options := _OPTION_PARAGRAPH.fullmatch(text)) is not None:
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
        if (kind == "paragraph" and self.owner and self.synopsis and (lone := _LONE_LABEL.fullmatch(text))
                and _label_like(text)):
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
            if _DEPRECATED.match(text) and not self.named[4]:
                self.held.append(text)
                return
            if _field_line(text) or not _HAS_LOWER.search(text):
                # a field line ("Default: `False`"), or capitals only: a man page's list of its
                # sections ("NAME SYNOPSIS DESCRIPTION"), never what the name is
                self._add(Block(kind, 0, 0, self.path), text, keep_named=True)
                return
            term, name, scope, code, _ = self.named
            self.named = None
            self.definition(term, text, name=name, scope=scope, code=code)
            return
        if kind == "item":
            marker = f"{ordinal}. " if ordinal else "- "
            text = "  " * max(level - 1, 0) + marker + text
        elif kind == "quote":
            text = "> " + text
        self._add(Block(kind, 0, 0, self.path, level=level), text)

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
        return bool(self.owner and self.synopsis and _PLACEHOLDERS.fullmatch(text) and text != self.owner
                    and all(w.strip("[]") in self.synopsis and w.strip("[]") != self.owner for w in text.split()))

    def _arguments_described(self, text: str) -> bool:
        """A man page's paragraph that says what its SYNOPSIS arguments are ("The def.po file is
        an existing PO file ..."): each such sentence an entry of the command, the rest prose.
        False (nothing written) when no sentence describes one."""
        if not (self.owner and self.synopsis):
            return False
        sentences = _SENTENCE_BREAK.split(text)
        described = [_ARGUMENT_SENTENCE.match(s) for s in sentences]
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
        label = _label_words(group[1])
        trailing = len(self.blocks)
        while trailing > 0 and self.blocks[trailing - 1].kind == "paragraph" \
                and self.blocks[trailing - 1].heading_path == self.path:
            trailing -= 1
        if trailing == len(self.blocks) or self.blocks[trailing - 1].kind != "definition":
            return  # no options, or nothing after them
        closing = range(trailing, len(self.blocks))
        if any(label & _label_words(self.parts[2 * i]) for i in closing):  # a block, then its separator
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
        self._add(Block("code", 0, 0, self.path, language=language), f"{fence}{language}\n{text}\n{fence}")

    def table(self, rows: list[list[str]]) -> None:
        rows = [[one_line(c) for c in row] for row in rows]
        rows = [row for row in rows if any(row)]
        if not rows:
            return
        entries = [[c for c in row if c] for row in rows]
        if all(len(e) == 2 for e in entries) and all(
                _OPTION_ENTRY.fullmatch(e[0]) or self._placeholders(e[0]) for e in entries):
            # groff's layout table of short options and their descriptions ("-e" | "enable ..."):
            # entries, not data
            for term, description in entries:
                placeholder = not _OPTION_ENTRY.fullmatch(term)
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
        match = _NAME_LINE.fullmatch(text)
        if match is None or (heading.lower() != "name" and heading != match["names"]):
            return False  # a NAME section's line, or one under a heading that is the name itself
        names = _parts(match["names"])
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
        return ParsedDocument("".join(self.parts), title, fmt, self.blocks, metadata, warnings)
