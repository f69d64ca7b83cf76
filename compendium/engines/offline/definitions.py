"""Recognises sentences that define their subject: "X is a ...", "X, short for ...", "X — does ..."."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .words import FUNCTION_WORDS

# What follows a code name in an API reference's sentence saying what it is: its kind and a verb of
# what it does ("`pam_start` function creates ...", "`json` module provides ..."); "is deprecated",
# "fails", "uses" or "works analogously" say nothing of what it is.
API_KIND_DOES = (
    r"(?:function|macro|method|routine|system\s+call|module|class|interface|structure|struct)\s+"
    r"(?:creates|provides|defines|contains|implements|represents|declares|initiates|initializes|terminates|"
    r"allocates|frees|releases|opens|closes|converts|computes|generates|encapsulates|wraps|registers|retrieves|"
    r"stores|sets|gets|reads|writes|sends|receives|describes|specifies|manages|handles|performs|builds|parses|"
    r"formats|validates|checks|compares|emits|constructs)\b"
)
# What follows the subject's name in a sentence defining it. Strong: the shapes a glossary uses.
STRONG = re.compile(
    r"^(?:\s*\([^)]*\))?(?:,[^,]{1,80},)?\s+(?:(?:is|are)\s+(?:\w+ly\s+)?(?:an?|the|one|any)\b|"
    r"refers?\s+to|means|denotes|stands\s+for|is\s+defined\s+as|is\s+short\s+for)\b"
    r"|^(?:\s*\([^)]*\))?,?\s+(?:short\s+for|also\s+(?:called|known\s+as))\b"
    r"|^\s+[—–]\s+\w"  # a reference page's "NAME — what it does"
    # an API reference's "The `pam_start` function creates ...", "The `json` module provides ..."
    r"|^\s+" + API_KIND_DOES
    + r"|^:\s+[A-Za-z]",  # a definition block's "`term`: what it is"
    re.IGNORECASE,
)
# Weak: the subject is said to be or do something ("A comment is removed ...").
WEAK = re.compile(
    r"^(?:\s*\([^)]*\))?(?:,[^,]{1,80},)?\s+(?:is|are|was|describes)\b", re.IGNORECASE
)

# A reference page's purpose line: "EXPLAIN — show the execution plan of a statement".
_PURPOSE = re.compile(r"^[^\s—–][^—–!?\n]{0,80}?\s[—–]\s+[A-Za-z][\w-]*(?:\s+[^\s—–]+){1,30}$")
_LOWER_WORD = re.compile(r"(?<![\w-])[a-z][a-z-]*\b")
_DASH = re.compile(r"\s[—–]\s")
_ARTICLE = re.compile(r"^(?:(?:the|a|an)\s+)?[`*\"']?", re.IGNORECASE)


def is_purpose_line(text: str) -> bool:
    """A name, a dash, and what the named thing does: a definition though it has no full stop.
    The name is up to four words, none of them a lowercase function word ("It was fast — ...").
    So is a definition block's opening, its term in code marks then a colon ("`git-rebase`:
    Reapply commits on top of another base tip", a man page's NAME line as the reader keeps it)."""
    if purpose_name(text) is not None:
        return True
    # (an excerpt cut short, "… raised when …", is no line of the source)
    return bool(_DEFINITION_LINE.match(text)) and not text.rstrip().endswith(("…", "..."))


_DEFINITION_LINE = re.compile(r"^`[^`\n]{1,120}`:\s+[A-Za-z][^\s]*(?:\s+\S+){2,}")


def purpose_name(text: str) -> str | None:
    """The name a purpose line is about ("EXPLAIN", "pathlib"), or None for any other line.
    What follows the dash is prose, with a lowercase word ("Object-oriented filesystem
    paths"), not a title ("What's New In Python 3.11")."""
    text = text.strip()
    if "—" not in text and "–" not in text:  # no dash, no purpose line: most lines, without the pattern
        return None
    if not _PURPOSE.match(text):
        return None
    name, purpose = _DASH.split(text, maxsplit=1)
    words = name.split()
    if len(words) > 4 or ". " in name or any(w in FUNCTION_WORDS for w in words) or not _LOWER_WORD.search(purpose):
        return None
    return name.strip()  # may keep its inline code marks: "`json`"


_TERM_OPENING = re.compile(r"^`([^`\n]{1,120})`:\s")
_NAME_END = re.compile(r"[\s(<\[=,]")
_HEADING_MARKS = re.compile(r"^[\s#`*]+|[\s`*]+$")


def defines_heading(text: str, heading: str) -> bool:
    """Whether `text` is the definition of what its section heading names ("`median(T...
    items)`: Find the middle value" under "median"; "`--squash`: Produce ..." under
    "--squash"): the line an API entry, a setting or an option of its own section opens with."""
    opening = _TERM_OPENING.match(text)
    if opening is None or not heading:
        return False
    name = _NAME_END.split(opening[1].strip(), 1)[0].lower()
    return bool(name) and name == _HEADING_MARKS.sub("", heading).lower()


class Definer:
    """Recognises the sentences defining one subject, its names prepared once for them all."""

    def __init__(self, names: Iterable[str]):
        self.names = [n for n in (name.strip().lower() for name in names) if n]
        self._any = tuple(self.names)
        # A text opening with none of these can open with no name, article or quote mark.
        self._openers = {n[0] for n in self.names} | set("ta`*\"'")

    def defines(self, text: str) -> bool:
        """Does `text` open with one of the names (after an article or a backtick) and define
        it strongly?"""
        if text[:1].lower()[:1] not in self._openers:  # what text.lower() starts with
            return False
        lower = text.lower()
        start = _ARTICLE.match(lower)
        at = start.end() if start else 0
        if not lower.startswith(self._any, at):  # most texts: opening with none of the names
            return False
        for n in self.names:
            if not lower.startswith(n, at):
                continue
            end = at + len(n)
            if lower[end : end + 1] in ("`", "*", '"', "'"):
                end += 1
            if STRONG.match(text[end:]):
                return True
        return False
