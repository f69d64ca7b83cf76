"""A definition's term as sources write it: its parts, whether it is code, the bare name it
defines, and whether a heading is a name rather than a title."""

from __future__ import annotations

import re

_PLAIN_WORD = re.compile(r"[A-Za-z]+(?:[-'’][A-Za-z]+)*")  # "Python", "DEBUG", "built-in": words
_ARGUMENT = re.compile(r"[\s=\[(<{]")  # where an option's argument or a signature begins
_VERSION = re.compile(r"[vV]?\d")  # "v1.2", "3.11": a release, not a name
# what a word never holds; or lower camelCase ("newArgumentParser", "setDefault"; not "macOS")
_IDENTIFIER_MARK = re.compile(r"[_.(/]|::|\w-\w.*\(|^--?\w|^[a-z]{2,}[A-Z]\w*[a-z]\w*$")


def unmarked(text: str) -> str:
    """A term without its inline code marks (single backtick runs around plain code)."""
    return re.sub(r"(`+)\s?(.*?)\s?\1", r"\2", text)


def unquoted(text: str) -> str:
    """A term without the quotes around it ("‘--all’" -> "--all"); quotes inside it stay
    ("content=b''", "path='/'")."""
    text = text.strip()
    if len(text) >= 2 and text[0] in "‘“'\"" and text[-1] in "’”'\"" and text[1:-1].strip():
        return text[1:-1].strip()
    return text


def term_parts(term: str) -> list[str]:
    """The names a term lists, split at commas and bars ("-a, --all" -> "-a", "--all")."""
    return [p.strip() for p in re.split(r",\s+|\s+\|\s+", term) if p.strip()]


def code_like(term: str) -> bool:
    """Is every part of a term a name written as code: an option ("-a, --all",
    "--date=<format>"), an identifier ("ALLOWED_HOSTS", "os.path", "git-add(1)") or a signature
    ("escape(String str)")? Words ("Write-Ahead Log", "Python", "always") are not."""
    parts = term_parts(term)
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
    (an underscore, a dot, parentheses, "::", a leading dash, a capital inside a lower-case
    start): `max_wal_size`, `os.path`, `git-add(1)`, `--verbose`, `setDefault`."""
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


def names_first(description: str, name: str) -> bool:
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
    parts = [(_ARGUMENT.split(p, maxsplit=1)[0] or p) if code_like(p) else p for p in term_parts(unmarked(term))]
    if not parts:
        return ""
    return next((p for p in parts if p.startswith("--")), parts[0])
