"""Titles of groups of pages (outline nodes, topics): the authors' headings cleaned of their
numbering, or the name of a central member. Plain text rules, below the phases, the engines and
the outline that all name groups."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

# "Chapter 5. ", "Part II. ", "Appendix F. ", "5.4. ", "16. " at the start of a heading (a part
# lettered in capitals only: "Section a new approach" keeps its words).
_NUMBERING = re.compile(
    r"^\s*(?:(?:chapter|part|appendix|section|book)\s+(?:[0-9ivxlcdm]+[a-z]?|(?-i:[A-Z]))\.?\s*[:.\-–—]?\s+"
    r"|[0-9]+(?:\.[0-9]+)*\.?\s+(?=\S))",
    re.IGNORECASE,
)
_ROMAN = re.compile(r"^\s*[IVXLCDM]+\.\s+(?=\S)")  # "III. Server Administration"
# "F.2. amcheck", and a lettered appendix "A. Language Codes" (a capital follows: not "C. elegans")
_APPENDIX = re.compile(r"^\s*[A-Z]\.(?:[0-9]+(?:\.[0-9]+)*\.?\s+(?=\S)|\s+(?=[A-Z]))")
_SPACES = re.compile(r"\s+")
# A topic is a community of the graph, spread over many documents, and is named from its central
# members' first passages only: a heading over a third of those is what it is about.
TOPIC_HEADING_SHARE = 1 / 3
# Headings that name a part of any document ("Description" of a reference page, "Functions" of a
# module, an admonition's "Note" or "Tip"), not what a group of subjects is about: never a topic's
# title or an outline node's.
PART_HEADINGS = frozenset(
    """overview introduction summary description notes examples example contents details usage
    synopsis parameters arguments outputs inputs compatibility functions classes constants exceptions
    methods attributes objects fields columns commands note tip tips warning warnings caution important
    hint attention danger requirements background basics miscellaneous""".split()
) | {"see also", "table of contents", "module contents", "further reading", "what's new", "return value",
     "getting started"}


def is_part_heading(heading: str) -> bool:
    return clean_heading(heading).lower().rstrip(":") in PART_HEADINGS


@lru_cache(maxsize=8192)
def clean_heading(text: str) -> str:
    """A heading as a title: its numbering and surrounding spaces gone ("Chapter 5. Data
    Definition" -> "Data Definition"); the text itself when nothing would be left. Cached: a
    chunk's headings are cleaned for each of its evidence items."""
    text = _SPACES.sub(" ", text).strip()
    stripped = _APPENDIX.sub("", _ROMAN.sub("", _NUMBERING.sub("", text, count=1), count=1), count=1).strip()
    return stripped or text


def folder_title(segment: str) -> str:
    """A folder or file-name prefix as a title: "c-api" -> "C API", "howto" -> "Howto"."""
    words = re.split(r"[-_.\s]+", segment.strip())
    out = []
    for word in words:
        if not word:
            continue
        out.append(word.upper() if len(word) <= 3 and word.isalpha() and word.lower() not in
                   {"the", "and", "for"} else word[:1].upper() + word[1:])
    return " ".join(out) or segment


def is_keyword_pair(title: str, names: set[str]) -> bool:
    """A title made of two member names joined by "and" (the old topic stand-in), which names
    no subject."""
    left, sep, right = title.partition(" and ")
    return bool(sep) and left.strip() in names and right.strip() in names


def title_from_members(headings: Sequence[tuple[str, int]], central: Sequence[str], size: int,
                       usable: Callable[[str], bool] = lambda _h: True, share: float = 0.5) -> str:
    """The outline's rule for naming a group of subjects: the source heading most of them sit
    under, when it covers `share` of the `size` members and at least two of them (numbering
    cleaned off); else the most central member's name. A heading naming a part of any document ("Overview") is passed
    over, and so is one `usable` refuses. `headings` are (heading, members under it), most first;
    `central` the member names, most central first. Never "X and Y" of two member names."""
    names = set(central)
    for heading, covered in headings:
        if covered < max(share * size, min(2, size)):
            break
        text = clean_heading(heading)
        if text and text.lower() not in PART_HEADINGS and usable(text) and not is_keyword_pair(text, names):
            return text
    return central[0] if central else ""


# Values and placeholders, which a member may be titled by but which name no group of pages.
_LITERALS = frozenset("null none nil true false yes no on off auto always never default".split())


def names_a_subject(title: str) -> bool:
    """Whether a member's title can name a group it is central to: not a literal value ("null",
    "true"), a number or a short lowercase token ("str", "-k")."""
    text = title.strip().strip("`'\"")
    if text.lower() in _LITERALS or not any(c.isalpha() for c in text):
        return False
    return not (len(text) <= 3 and text == text.lower())
