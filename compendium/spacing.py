"""Text on one line: every run of whitespace one space, none at the ends."""

from __future__ import annotations


def single_spaced(text: str) -> str:
    """`text` with its whitespace runs made single spaces, stripped (str.split's whitespace is
    what regex \\s matches). Most texts are so already and come back as they are: a printable
    string holds no whitespace but the space, so one without doubled, leading or trailing
    spaces needs no splitting and joining (replies and evidence are cleaned per field)."""
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text
    return " ".join(text.split())
