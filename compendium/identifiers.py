"""Underscores at an identifier's ends make another name: `__abs__()` is not `abs()`, `_exit()`
is not `exit()`, `class_` is not `class`; so do the dashes opening a command-line option
(`--version` is not `version()`). Name matching that treats underscores and hyphens as spaces
keeps these apart by the ends (inside a name, `max_wal_size`, they only separate words)."""

from __future__ import annotations

import re

_EDGES = re.compile(r"^(--?(?=\w)|_*).*?(_*)(?:\(\))?$", re.DOTALL)


def identifier_edges(name: str) -> tuple[str, str]:
    """The underscores (or an option's dashes) opening the name, and the underscores closing it
    (a trailing `()` aside)."""
    if "_" not in name and not name.lstrip().startswith("-"):
        return "", ""
    found = _EDGES.match(name.strip())
    return (found.group(1), found.group(2)) if found else ("", "")


_WORDS = re.compile(r"[a-z0-9]+")


def is_identifier(name: str) -> bool:
    """A code name: one token joined by underscores, dots or a call's parentheses."""
    text = name.strip()
    return " " not in text and any(mark in text for mark in ("_", ".", "()"))


def other_identifiers(a: str, b: str) -> bool:
    """Whether two names are certainly two identifiers, however alike their letters: their ends
    differ in underscores or dashes, or one is an identifier and they hold the same words in
    another order (`update_wrapper()` / `WRAPPER_UPDATES`), or both are one token and, one being
    an identifier, they name different last parts (a plural or a prefix makes another name), or
    both are qualified by different owners."""
    if identifier_edges(a) != identifier_edges(b):
        return True
    if not (is_identifier(a) or is_identifier(b)):
        return False
    if _last_part(a) != _last_part(b) and " " not in a.strip() and " " not in b.strip():
        return True  # `mkdocs.structure.files.File` / `...Files`, `c_max_line_length` / `max_line_length`
    if _member_and_type(a, b):
        return True  # `Connection.request` / `Connection.Request`: a method and a nested type
    if _other_owners(a, b):
        return True  # `forms.CharField` / `models.CharField`: one name in two scopes
    wa, wb = _words(a), _words(b)
    return wa != wb and sorted(wa) == sorted(wb)


def _member_and_type(a: str, b: str) -> bool:
    """Both names qualified, one's last part opening in lowercase (a member), the other's in
    capitals (a type)."""
    ends = [n.strip().removesuffix("()").rpartition(".")[2][:1] for n in (a, b) if _qualifier(n)]
    return len(ends) == 2 and ends[0].isalpha() and ends[1].isalpha() and ends[0].islower() != ends[1].islower()


def _other_owners(a: str, b: str) -> bool:
    """Both names qualified, by owners neither of which ends the other's path."""
    qa, qb = (_qualifier(n) for n in (a, b))
    if not qa or not qb or qa == qb:
        return False
    return not (qa.endswith("." + qb) or qb.endswith("." + qa))


def _qualifier(name: str) -> str:
    text = name.strip().removesuffix("()").lower()
    return text.rsplit(".", 1)[0] if "." in text.strip(".") and " " not in text else ""


def _last_part(name: str) -> str:
    """What a code name names, without its qualification or call marks, in one spelling:
    `files.File()` -> "file", `max-wal-size` -> "max_wal_size"."""
    text = name.strip().removesuffix("()").lower().replace("-", "_")
    return text.rsplit(".", 1)[-1] if not text.endswith(".") else text


def _words(name: str) -> list[str]:
    """The name's words, lowercase, a plural's s dropped (`WRAPPER_UPDATES`: wrapper, update)."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in _WORDS.findall(name.lower())]
