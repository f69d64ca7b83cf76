"""Definition lists and API signatures of an HTML page read as definition blocks: a term, the
name it defines, its owner, and the text that defines it (Sphinx, Javadoc, texinfo, man pages)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .builder import Builder
from .definition_terms import bare_term, heading_name, unquoted
from .model import one_line

# A signature's parts: the name it defines, and the owner written before it (Sphinx "Field." of
# "Field.null"; Javadoc's member name).
SIG_NAME = frozenset({"sig-name", "descname", "element-name", "member-name-link", "def-name", "memname"})
_SIG_PRENAME = frozenset({"sig-prename", "descclassname"})
SIG_BOX = frozenset({"sig", "sig-object"})  # a dt that is an API signature (Sphinx)
# Javadoc's member details and type description, Doxygen's member prototype: a signature over
# the text that defines it.
MEMBER_SIGNATURE = frozenset({"member-signature", "memberSignature", "type-signature", "memproto"})
_SUPERTYPES = re.compile(r"\s+(?:extends|implements|throws|permits)\s")
_KIND_WORDS = re.compile(r"^(?:Class|Interface|Enum|Enum Class|Annotation Type|Annotation Interface|Record|"
                         r"Record Class|Exception|Error|Module|Package)\s+")
# Field labels whose entries name members of the signature above them (Sphinx's field lists,
# Javadoc's notes): each entry is "`name`: what it is" of that signature's owner, never a subject.
_MEMBER_FIELDS = frozenset(
    {"parameters", "type parameters", "keyword arguments", "arguments", "args", "other parameters",
     "variables", "attributes"}
)
# An entry of such a field: its name, an optional type in parentheses, a dash, its description
# ("name (Optional[str]) – the optional name", "`left` - the left element").
_FIELD_ENTRY = re.compile(r"^\s*[-*•]?\s*`?([A-Za-z_$*][\w$.*]*)`?\s*(\([^\n]*?\))?\s+[–—-]\s*(.*)$", re.S)
# texinfo's category of a definition ("Function:", "Macro:", "Data type:", "Variable:", "User Option:")
_DEF_CATEGORY = re.compile(r"^(?:[A-Z][a-z]+(?:\s[A-Za-z]+){0,2}):\s+")
# A paragraph announcing the values listed after it ("Here are the values:", "... one of:").
_VALUES_INTRO = re.compile(r"\b(?:values?|one\s+of)\b[^.:!?]*:\s*$", re.IGNORECASE)
_OPTION_TOKEN = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*")
_CODE_TOKEN = re.compile(r"`([A-Za-z_][\w.]*)`")  # a variable or setting named as code
_LAST_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
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


class DefinitionLists:
    """The part of the HTML parser target that turns dl items and signatures into definitions."""

    out: Builder
    dls: list[dict[str, Any]]  # per open dl, the terms (dt) waiting for their description
    captures: list[tuple[int, str, int]]
    signature: dict[str, Any] | None
    member: str
    h1: str
    inline: list[str]
    stack: list[tuple[str, str]]
    flush: Callable[[], None]

    def _capture(self, classes: list[str]) -> None:
        if SIG_NAME.intersection(classes):
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
            dl["names" if part == "name" else "prenames" if part == "prename" else "bold"].append(text)

    def _term(self, dl: dict[str, Any]) -> tuple[str, str, str, bool]:
        """(term as written, the name it defines, its owner, written as code) of a dl item."""
        terms = [" ".join(t.replace("`", "").split()) if dl["sig"] else t for t in dl["terms"]]  # one signature
        name = dl["names"][0] if dl["names"] else ""
        if not name and dl.get("bold") and _DEF_CATEGORY.match(terms[0].strip(" ,")):
            # texinfo's @deffn: "Function: char * ngettext (...)", the name in bold; each of an
            # @deffnx's further signatures opens with the category too
            terms = [_DEF_CATEGORY.sub("", t.strip(" ,"), count=1) for t in terms]
            name = dl["bold"][0]
            dl["sig"] = dl["sig"] or True
        term = ", ".join(unquoted(t.strip(" ,")) for t in terms)
        scope = next((p.strip(" .,") for p in dl["prenames"] if p.strip(" .,")), "")
        ident = dl["id"]
        if dl["sig"] and not scope and name and ident.endswith("." + name):
            scope = ident[: -len(name) - 1]  # Sphinx's id of a member: its qualified name
        option = name.lstrip("-")
        if not scope and name.startswith("-") and ident.startswith("cmdoption-") and ident.endswith("-" + option):
            scope = ident[len("cmdoption-"): -len(option) - 1]  # Sphinx's id of a program's option
        return term, name, scope, dl["sig"] or dl["grid"] or None  # type: ignore[return-value]

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
        elif not scope and not dl["sig"] and len(self.dls) > 1 and self.dls[-2]["terms"]:
            scope = self._entry_name(self.dls[-2])  # a list inside an option's text: its values
        elif not scope and not dl["sig"]:
            scope = dl.get("values_of", "")  # "... the `--backup` option ... Here are the values:"
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
        if self.member:
            return self.member
        # an older Javadoc's member: its name as the heading over its signature and text
        return next((heading_name(text) for _, text, is_name in reversed(self.out.headings) if is_name), "")

    def values_of(self) -> str:
        """The option (or variable) whose values a list opening now gives, by the paragraph just
        before it ("... selected via the `--backup` option ... Here are the values:"): the one
        option it names, else the one code name of its announcing sentence. Else "" (asked once
        the paragraph before is flushed, as any block's opening flushes it)."""
        if self.dls or not self.out.blocks or self.out.blocks[-1].kind != "paragraph":
            return ""
        text = self.out.parts[-1]
        if not _VALUES_INTRO.search(text):
            return ""
        options = set(_OPTION_TOKEN.findall(text))
        if not options:  # "... setting the `TERM` variable to a different value in these cases:"
            options = set(_CODE_TOKEN.findall(_LAST_SENTENCE.split(text)[-1]))
        return options.pop() if len(options) == 1 else ""

    def _entry_name(self, dl: dict[str, Any]) -> str:
        """The name an open dl item defines ("--sentence-end" of "--sentence-end[=TYPE]")."""
        term, name, _, _ = self._term(dl)
        return name or bare_term(term)

    def _signature_done(self) -> None:
        sig, self.signature = self.signature, None
        text = one_line((sig or {}).get("text", "").replace("`", ""))
        if not text:
            return
        owner = _KIND_WORDS.sub("", self.h1).split("<", 1)[0].strip()
        name = sig["names"][0].split("<", 1)[0].strip() if sig and sig["names"] else ""  # "DiffResult<T>"
        name = name.split()[-1].lstrip("*&") if " " in name else name  # C's "const char * ssh_copyright"
        at = _word_at(text, name) if name else -1
        if at >= 0:  # from the name on, without modifiers, annotations, supertypes or throws
            text = _without_supertypes(text[at:])
        scope = owner if " " not in owner and owner != name else ""  # a type is no member of itself
        self.member = scope or name
        self.out.pending_term(text, name=name, scope=scope, code=True)


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


# A Java type's declaration ("public class TextNode extends Node") and the heading over it
# ("Class TextNode", "Interface Connection.Request"): older Javadoc's only mark of a class's entry.
_TYPE_DECLARATION = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|protected|private|abstract|final|static|sealed|non-sealed|strictfp)\s+)*"
    r"(?:class|interface|enum|@interface|record)\s+(?P<name>[\w$.]+)")
_TYPE_HEADING = re.compile(r"^(?:Class|Interface|Enum|Annotation Type|Annotation Interface|Record)\s+(?P<name>[\w$.]+)")


def declared_type(code: str, heading: str) -> str:
    """The type a signature declares under a heading naming that type ("Class TextNode" over
    "public class TextNode extends Node"): older Javadoc's class description follows it. "" else."""
    declared = _TYPE_DECLARATION.match(" ".join(code.split()))
    named = _TYPE_HEADING.match(heading.strip())
    if not declared or not named:
        return ""
    name = declared["name"].rpartition(".")[2]
    return name if name == named["name"].rpartition(".")[2] else ""
