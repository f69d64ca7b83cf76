"""Compiles template patterns with RE2, whose matching time is linear in the text whatever the pattern."""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol

import re2


class Pattern(Protocol):
    """What the offline engine needs of a compiled pattern (re2's and re's both fit)."""

    def search(self, text: str) -> object | None: ...


class PatternError(ValueError):
    """A template pattern that RE2 cannot compile; the message says why in the user's words."""


# A pattern is a few dozen characters; its compiled program stays small, so that a template's
# patterns cannot take much memory in every process that compiles them.
MAX_PATTERN_CHARS = 1000
MAX_PATTERN_MEMORY = 2 << 20  # bytes (RE2's max_mem; Unicode classes such as \w count)
MAX_PATTERNS = 100  # in one template

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern on stderr
_OPTIONS.max_mem = MAX_PATTERN_MEMORY

# Python's \w, \d and \s are Unicode-aware and RE2's are ASCII: spell them out so that
# patterns written for `re` keep matching names such as "Größe" (RE2's \b stays ASCII).
_WORD = r"\p{L}\p{N}_"
_SPACE = r"\t-\r\x1c-\x20\x85\p{Z}"
_OUTSIDE = {"w": f"[{_WORD}]", "W": f"[^{_WORD}]", "d": r"\p{Nd}", "D": r"\P{Nd}",
            "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]", "Z": r"\z"}  # fmt: skip
_INSIDE = {"w": _WORD, "d": r"\p{Nd}", "D": r"\P{Nd}", "s": _SPACE}


def unicode_classes(pattern: str) -> str:
    """`pattern` with Python's Unicode meaning of \\w \\W \\d \\D \\s \\S (and \\Z) in RE2 syntax.
    Inside [...] RE2 cannot negate a class, so \\W and \\S there stay ASCII."""
    out: list[str] = []
    i, in_class, class_start = 0, False, 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            table = _INSIDE if in_class else _OUTSIDE
            out.append(table.get(escaped, "\\" + escaped))
            i += 2
            continue
        if not in_class and char == "[":
            in_class, class_start = True, i
        elif in_class and char == "]":
            # "[]" and "[^]" open a class whose first member is a literal "]"
            opening = pattern[class_start : i]
            if opening not in ("[", "[^"):
                in_class = False
        out.append(char)
        i += 1
    return "".join(out)


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Pattern:
    """Compile a template pattern with RE2; PatternError names what RE2 cannot take."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"the pattern is {len(pattern)} characters; the limit is {MAX_PATTERN_CHARS}")
    try:
        return re2.compile(unicode_classes(pattern), _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        if "too large" in reason:
            raise PatternError(
                f"the pattern is too large for RE2 (its program would need more than "
                f"{MAX_PATTERN_MEMORY >> 20} MiB); use fewer or smaller repetitions such as {{1,40}}"
            ) from exc
        raise PatternError(
            f"not a valid regular expression for RE2, the linear-time engine patterns run on: "
            f"{reason} (RE2 has no backreferences such as \\1, no lookarounds such as (?=...) "
            "or (?<!...), no atomic groups and no possessive repeats: rewrite the pattern "
            "without them)"
        ) from exc
