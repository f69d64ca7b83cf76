"""Splits text into prose sentences, skipping code, tables, headings and other non-prose lines."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .words import ABBREVIATIONS

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$|^\s*\|?\s*:?-{3,}:?\s*\|")
_LIST_ITEM = re.compile(r"^\s{0,6}(?:[-*+•]|\d{1,3}[.)])\s+")
_QUOTE = re.compile(r"^\s{0,3}>\s?")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_CAPTION = re.compile(
    r"^\s*(?:Table|Figure|Example|Listing|Fig\.)\s+[\dA-Z]+(?:[.-]\d+)*[.:]?(?:\s|$)"
)
_INDENTED = re.compile(r"^(\t| {4,})\S")
# Shell prompts, SQL prompts and lines ending like code statements. A line opening with a
# keyword is code only without a full stop ending a sentence ("ALTER TABLE changes ... (x).").
# (The opening forms are matched at the start only; a line ending in ; { or } is code too.)
_CODE_LINE = re.compile(
    r"\s*(\$ |# |>>> |=> |\w+=[#>] )|\s*[{}\])]|\s*(def|class|import|from|return|SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP)\b(?=[^;(=]*[;(=])(?:[^.]|\.\w)*$"
)
_SYMBOL = re.compile(r"[=<>{}\[\]();|\\/$#@^~*+]")

# A boundary candidate: terminal punctuation, optional closing quotes/brackets, whitespace.
_BOUNDARY = re.compile(r"[.!?](?:[\"'”’)\]]*)\s+")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_STARTS_SENTENCE = re.compile(r"[\"'“‘(\[]?[A-Z0-9`*_]|[a-z]+_\w|[a-z]+[A-Z]")
_LABEL = re.compile(r"(?:^|(?<=\s))(?:\*\*|__)[^*_\n]{1,60}?[.:](?:\*\*|__)\s+(?=[\"'“(`*A-Z0-9])")
# "27.2. ", "A.1 ", and an appendix's or part's letter or numeral alone ("B. ", "IV. ")
_SECTION_NUMBER = re.compile(r"^(?:(?:[A-Z]\.)?\d+(?:\.\d+)*\.?|(?:[A-Z]|[IVX]{1,4})\.)\s+")
_LABEL_PREFIX = re.compile(r"^(?:Chapter|Appendix|Part|Section)\s+[\dIVXA-Z]+(?:\.\d+)*\.?\s+")


@dataclass(slots=True)
class Sentence:
    text: str  # whitespace-normalised, otherwise verbatim
    block: int  # index of the paragraph or list item it came from
    position: int  # 0 for the first sentence of its block
    term: bool = False  # a definition list's or glossary's term: a name over its definition, no claim
    defines: str = ""  # in a definition block: the term it defines, as the authors wrote it
    heading: str = ""  # the chunk's last heading above it, "" when none is inside the chunk
    scope: str = ""  # in a definition block: the owner of the term, where the reader names one


def prose_blocks(text: str) -> list[str]:
    """Paragraphs and list items of prose, each joined into one line.

    Fenced and indented code, tables, headings, rules and code-like lines are left out, since
    they are neither claims nor definitions.
    """
    blocks: list[str] = []
    current: list[str] = []
    in_fence = ""
    in_indented = False
    previous_blank = True

    def flush() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for raw in text.splitlines():
        fence = _FENCE.match(raw)
        if in_fence:
            if fence and fence.group(1)[0] == in_fence:
                in_fence = ""
            previous_blank = False
            continue
        if fence:
            flush()
            in_fence = fence.group(1)[0]
            continue
        line = raw.rstrip()
        if not line.strip():
            flush()
            previous_blank = True
            in_indented = False
            continue
        if in_indented or (previous_blank and _INDENTED.match(line) and not _LIST_ITEM.match(line)):
            flush()  # indented code block: skip until the next blank line
            in_indented = True
            previous_blank = False
            continue
        previous_blank = False
        if _HEADING.match(line) or _TABLE.match(line) or _RULE.match(line) or _CAPTION.match(line):
            flush()
            continue
        if _SETEXT.match(line) and current:
            current.clear()  # the lines before were a heading
            continue
        if _is_code_line(line):
            flush()
            continue
        line = _QUOTE.sub("", line)
        item = _LIST_ITEM.match(line)
        if item:
            flush()
            line = line[item.end() :]
        current.append(line.strip())
    flush()
    return blocks


# Words a sentence's tail opens with, never a sentence or a list item of its own: a verb that
# needs its subject, a conjunction, a relative word ("the **init fork**, used ..." is an item).
_TAIL_OPENERS = frozenset(
    """is are was were be been being has have had does do did can cannot could will would should
    may might must shall and or but nor which whose whom than""".split()
)


def starts_mid_sentence(text: str) -> bool:
    """Whether the text is the tail of a sentence: it opens with a lowercase verb, conjunction or
    relative word ("is compared to the total ...", "and the rest ..."), the start left behind a
    formula or a line cut. A lowercase name ("wal_level controls ...") or article ("the **init
    fork**, used only by ...", a list item) opens one of its own."""
    first = text.split(None, 1)[0] if text.strip() else ""
    return first in _TAIL_OPENERS


def _is_code_line(line: str) -> bool:
    """`line` has no line break and no trailing whitespace (prose_blocks strips it)."""
    if line[-1:] in (";", "{", "}") or _CODE_LINE.match(line):
        return True
    stripped = line.strip()
    symbols = len(_SYMBOL.findall(_INLINE_CODE.sub("", stripped) if "`" in stripped else stripped))
    return len(stripped) > 0 and symbols / len(stripped) > 0.12


def split_sentences(block: str) -> list[str]:
    """Sentences of one prose block, robust to abbreviations, version numbers and inline code.

    A bold run-in label ("**WAL.** The Write-Ahead Log is ...", common in glossaries) ends the
    text before it and is left out: it is a heading, not part of the sentence.
    """
    return list(_split_block(block))


@lru_cache(maxsize=16384)
def _split_block(block: str) -> tuple[str, ...]:
    # Cached: REFINE splits again the paragraphs MAP split, in the excerpts that quote them
    # (4 in 10 blocks split on the Sphinx manual).
    text = " ".join(block.split())  # what \\s+ -> " " and strip() give, without a regex
    if not text:
        return ()
    if "**" in text or "__" in text:
        out: list[str] = []
        for part in _LABEL.split(text):
            out.extend(_split_plain(part.strip()) if part.strip() else [])
        return tuple(out)
    return tuple(_split_plain(text))


def _split_plain(text: str) -> list[str]:
    # Periods inside `code` never end a sentence: blank them out for the boundary search.
    masked = _INLINE_CODE.sub(lambda m: "x" * len(m.group(0)), text)
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(masked):
        end = match.end()
        if end >= len(text) or not _STARTS_SENTENCE.match(text, end):
            continue
        if masked[match.start()] == "." and _is_abbreviation(masked, start, match.start()):
            continue
        sentences.append(text[start:end].strip())
        start = end
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _is_abbreviation(text: str, start: int, end: int) -> bool:
    """Does the word ending text[start:end] (before a full stop) abbreviate?"""
    at = end  # the word is the run of word characters and dots before `end` (as [\w.]+$ finds)
    while at > start and (text[at - 1].isalnum() or text[at - 1] in "._"):
        at -= 1
    if at == end:
        return False
    word = text[at:end]
    lower = word.lower()
    if lower in ABBREVIATIONS:
        return True
    if len(word) == 1 and word.isalpha():
        # an initial ("J. Smith"), unless the letter ends a word like "I/O"
        return not (at > start and text[at - 1] in "/-'")
    # "e.g", "i.e", "U.S": letters with inner dots, each part one or two letters long
    parts = lower.split(".")
    return len(parts) > 1 and all(p.isalpha() and len(p) <= 2 for p in parts if p)


# Block kinds (as ingest records them on a chunk) that hold prose.
_PROSE_KINDS = frozenset({"paragraph", "item", "definition", "quote"})
# Read too, but as terms: a glossary entry ("GIN" over "Generalized Inverted Index") names its
# subject in the term and defines it in the block that follows.
_TERM_KINDS = frozenset({"term"})


def sentences_of(text: str, blocks: list[list[Any]] | None = None) -> list[Sentence]:
    """Every prose sentence of a text, with the block it belongs to. Given the chunk's blocks
    ([kind, start, end] in `text`), only prose blocks are read, each on its own: code, tables
    and headings are never sentences, a term is one sentence marked as a term, and no
    sentence runs from one block into the next. A sentence of a definition block knows the
    term it defines (the term block before it, or its own "`term`: description" opening) and
    every sentence the heading above it inside the chunk."""
    out: list[Sentence] = []
    if not blocks:
        for b, block in enumerate(prose_blocks(text)):
            out.extend(Sentence(sentence, b, p) for p, sentence in enumerate(split_sentences(block)))
        return out
    b = 0
    heading = ""
    term_text = ""
    for block_spec in blocks:
        kind, s, e = block_spec[0], block_spec[1], block_spec[2]
        if kind == "heading":
            heading = " ".join(text[s:e].split())
            term_text = ""
            continue
        term = kind in _TERM_KINDS
        if not term and kind not in _PROSE_KINDS:
            continue
        part = text[s:e]
        if term:
            term_text = " ".join(part.split())
        defines = scope = ""
        if kind == "definition":
            # A reader may give the term and its owner ([kind, start, end, term, scope]).
            given = block_spec[3] if len(block_spec) > 3 and isinstance(block_spec[3], str) else ""
            scope = block_spec[4] if len(block_spec) > 4 and isinstance(block_spec[4], str) else ""
            opening = _DEFINED_TERM.match(part.lstrip())
            # The term as the text writes it ("pretty.<name>") says more than the bare name,
            # but not by its type parameters ("ConstantInitializer<T>" defines ConstantInitializer).
            written = opening.group(1) if opening else ""
            if given[-1:].isalnum() and written.startswith(given + "<") and written.endswith(">"):
                written = given
            defines = written or given or term_text
        elif not term:
            term_text = ""
        for block in prose_blocks(part):
            for p, sentence in enumerate([" ".join(block.split())] if term else split_sentences(block)):
                out.append(Sentence(sentence, b, p, term, defines, heading, scope))
            b += 1
    return out


# A definition block's own opening: "`--squash`: Produce the working tree ..."
_DEFINED_TERM = re.compile(r"`([^`\n]{1,120})`:\s")


@lru_cache(maxsize=8192)
def clean_heading(heading: str) -> str:
    """A heading without Markdown marks or its section number ("27.2. Log Shipping")."""
    return _SECTION_NUMBER.sub("", heading.strip().strip("#").strip()).strip()


def without_label(heading: str) -> str:
    """A heading as a title: also without a chapter or appendix label ("Appendix M. Glossary")."""
    return _LABEL_PREFIX.sub("", clean_heading(heading)).strip()

