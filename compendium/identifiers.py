"""Underscores at an identifier's ends make another name: `__abs__()` is not `abs()`, `_exit()`
is not `exit()`, `class_` is not `class`. Name matching that treats underscores as spaces keeps
these apart by the ends (inside a name, `max_wal_size`, they only separate words)."""

from __future__ import annotations

import re

_EDGES = re.compile(r"^(_*)[^_]?.*?(_*)(?:\(\))?$", re.DOTALL)


def identifier_edges(name: str) -> tuple[str, str]:
    """The underscores opening and closing the name (a trailing `()` aside)."""
    if "_" not in name:
        return "", ""
    found = _EDGES.match(name.strip())
    return (found.group(1), found.group(2)) if found else ("", "")
