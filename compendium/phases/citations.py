"""Post-processing of written pages: check wikilinks and citations, renumber refs, add footnotes."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import NamedTuple

from ..engines.tasks import EvidenceItem
from ..storage.slugs import slugify
from ..words import not_after_abbreviation

_LINK = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|([^\[\]\n]+?))?\]\]")
_CITE = re.compile(r"[ \t]*\[\^([^\]\s]+)\](?!:)")
_MARKER = re.compile(r"\[\^([^\]\s]+)\](?!:)")  # _CITE without the spaces before it
# Code, where "[^...]" is a regex's character class, never a citation: fenced blocks and inline spans.
_CODE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$|(?<!`)(`+)(?!`)[^\n]*?(?<!`)\2(?!`)", re.M | re.S)
_FOOTNOTE_DEF = re.compile(r"^[ \t]*\[\^[^\]\n]+\]:.*(?:\n(?:[ \t]{2,}|\t).*)*\n?", re.M)
_REPEAT = re.compile(r"(\[\^\d+\])(?:\1)+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
# Emphasis and code markers, but not the underscores inside identifiers (max_wal_size).
_MARKUP = re.compile(r"`+|(?<![\w*_])[*_]{1,3}(?=[^\s*_])|(?<=[^\s*_])[*_]{1,3}(?![\w*_])")


class CleanPage(NamedTuple):
    markdown: str
    outlinks: list[str]
    cited_chunk_ids: list[str]
    counters: dict[str, int]  # unlinked_links, removed_citations


def footnote_text(item: EvidenceItem) -> str:
    """'Document title › Heading › Path — chunk <id>'."""
    where = " › ".join(p for p in [item.document, *item.heading_path] if p)
    return f"{where} — chunk {item.chunk_id}" if where else f"chunk {item.chunk_id}"


def clean_page(markdown: str, allowed: Iterable[str], evidence: Sequence[EvidenceItem]) -> CleanPage:
    """Keep links to `allowed` slugs and citations of refs in `evidence`; drop the rest.

    A link written with a title instead of a slug ('[[Ada Lovelace]]') is repaired when the
    title slugifies to an allowed slug. Refs are renumbered 1..k by first use (refs citing the
    same chunk share a number) and footnote definitions are appended; any footnote definitions
    the model wrote itself are removed first.
    """
    allowed_set = allowed if isinstance(allowed, AbstractSet) else set(allowed)  # a set: no copy per page
    counters = {"unlinked_links": 0, "removed_citations": 0}
    outlinks: list[str] = []
    text = _FOOTNOTE_DEF.sub("", markdown) if "]:" in markdown else markdown  # a definition holds "]:"

    def link(match: re.Match[str]) -> str:
        target, label = match.group(1).strip(), (match.group(2) or "").strip()
        slug = target if target in allowed_set else slugify(target)
        if slug not in allowed_set:
            counters["unlinked_links"] += 1
            return label or target
        if slug not in outlinks:
            outlinks.append(slug)
        if slug != target and not label:
            label = target
        return f"[[{slug}|{label}]]" if label and label != slug else f"[[{slug}]]"

    def dead_item(match: re.Match[str]) -> str:
        target = match.group(1).strip()
        if (target if target in allowed_set else slugify(target)) in allowed_set:
            return match.group(0)
        counters["unlinked_links"] += 1
        return ""  # a list of links keeps no name that leads nowhere

    if "[[" in text:
        text = _without_empty_sections(_LINK_ITEM.sub(dead_item, text))
    text = _LINK.sub(link, text)

    by_ref = {str(item.ref): item for item in evidence}
    by_chunk = {item.chunk_id: item for item in evidence}
    number_of: dict[str, int] = {}  # chunk id -> footnote number
    cited: list[EvidenceItem] = []

    def cite(match: re.Match[str]) -> str:
        key = match.group(1)
        item = by_ref.get(key) or by_chunk.get(key)
        if item is None:
            counters["removed_citations"] += 1
            return ""
        if item.chunk_id not in number_of:
            number_of[item.chunk_id] = len(number_of) + 1
            cited.append(item)
        return f"[^{number_of[item.chunk_id]}]"

    text = _REPEAT.sub(r"\1", _sub_citations(text, cite)).rstrip()
    if cited:
        notes = "\n".join(f"[^{number_of[i.chunk_id]}]: {footnote_text(i)}" for i in cited)
        text = f"{text}\n\n{notes}"
    return CleanPage(text + "\n", outlinks, [i.chunk_id for i in cited], counters)


def _sub_citations(text: str, replace: Callable[[re.Match[str]], str]) -> str:
    """`_CITE.sub(replace, text)`, five times faster on a page: a pattern that opens with
    optional spaces is tried at every character, so the markers are found by their bracket and
    the spaces and tabs just before each (never part of a marker) are taken with it. A marker
    inside code (a regex's `[^[:space:]]`) is left as it is."""
    parts: list[str] = []
    last = 0
    code = [m.span() for m in _CODE.finditer(text)] if "`" in text or "~~~" in text else []
    for match in _MARKER.finditer(text):
        start = match.start()
        while code and code[0][1] <= start:
            code.pop(0)
        if code and code[0][0] <= start:
            continue  # inside code: text, not a citation
        while start > last and text[start - 1] in " \t":
            start -= 1
        parts.append(text[last:start])
        parts.append(replace(match))
        last = match.end()
    parts.append(text[last:])
    return "".join(parts)


def unlink(markdown: str, slugs: Iterable[str]) -> tuple[str, int]:
    """Turn links to `slugs` (pages that were deleted) into plain text; returns the count."""
    gone = set(slugs)
    count = 0

    def plain(match: re.Match[str]) -> str:
        nonlocal count
        target, label = match.group(1).strip(), (match.group(2) or "").strip()
        if target not in gone:
            return match.group(0)
        count += 1
        return label or target

    def dead_item(match: re.Match[str]) -> str:
        nonlocal count
        if match.group(1).strip() not in gone:
            return match.group(0)
        count += 1
        return ""

    markdown = _without_empty_sections(_LINK_ITEM.sub(dead_item, markdown))
    return _LINK.sub(plain, markdown), count


# A list item that is a link and nothing else (a page's Related list): dropped, not left as
# plain text, when its page does not exist.
_LINK_ITEM = re.compile(r"^[-*] \[\[([^\]|\n]+)(?:\|([^\]\n]*))?\]\][ \t]*(?:\n|\Z)", re.M)
_EMPTY_SECTION = re.compile(r"^## [^\n]+\n(?:[ \t]*\n)*(?=## |\[\^|\Z)", re.M)


def _without_empty_sections(text: str) -> str:
    """Without headings left with nothing under them (a Related list whose links all went)."""
    return _EMPTY_SECTION.sub("", text) if "## " in text else text


def body_of(markdown: str) -> str:
    """The page without footnote definitions: what its writer wrote."""
    return _FOOTNOTE_DEF.sub("", markdown).strip()


def summary_of(markdown: str, max_chars: int = 300) -> str:
    """First sentence of the lead paragraph, without markup, links or citation markers."""
    for block in re.split(r"\n\s*\n", body_of(markdown)):
        block = block.strip()
        if not block or block.startswith(("#", "|", "```", ">", "- ", "* ", "<")):
            continue
        plain = _LINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), block)
        plain = _CITE.sub("", plain)
        plain = _MARKUP.sub("", " ".join(plain.split()))
        sentence = _SENTENCE_END.split(plain, maxsplit=1)[0].strip()
        if len(sentence) > max_chars:
            sentence = sentence[: max_chars - 1].rsplit(" ", 1)[0] + "…"
        return sentence
    return ""


_SENTENCE_STOP = re.compile(not_after_abbreviation() + r"[.!?](?:[ \t]*\[\^[^\]\s]+\])*(?=\s|$)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s*$")


def _sentences(line: str) -> list[str]:
    out, at = [], 0
    for match in _SENTENCE_STOP.finditer(line):
        out.append(line[at : match.end()])
        at = match.end()
    if line[at:].strip():
        out.append(line[at:])
    return out


def recite(markdown: str, ref_of: dict[str, int | None]) -> tuple[str, int]:
    """Move a page's citations to new evidence numbers, and drop what lost its evidence.

    `ref_of` maps each citation key in the page (footnote numbers as written) to the ref of
    the evidence item that now carries it, or None when that evidence is gone. A sentence all
    of whose citations are gone is removed (every sentence states only what it cites), other
    citations of gone evidence are dropped, and a section left empty loses its heading.
    Footnote definitions are removed (clean_page writes them again). Returns (body, sentences
    removed). No model call: this is how a page loses a deleted document's facts cheaply.
    """
    removed = 0

    def marker(match: re.Match[str]) -> str:
        ref = ref_of.get(match.group(1))
        spacing = match.group(0)[: match.group(0).index("[")]  # as the writer spaced it
        return "" if ref is None else f"{spacing}[^{ref}]"

    lines: list[str] = []
    for line in body_of(markdown).split("\n"):
        if line.lstrip().startswith(("#", "|", "```")) or not _CITE.search(line):
            lines.append(line)
            continue
        kept = []
        sentences = _sentences(line)
        # A sentence with no marker is answered for by the next marker of its paragraph: it
        # goes with that sentence when all of its evidence is gone.
        following: list[list[str]] = []
        after: list[str] = []
        for sentence in reversed(sentences):
            after = [m.group(1) for m in _CITE.finditer(sentence)] or after
            following.append(after)
        for sentence, keys in zip(sentences, reversed(following), strict=True):
            if keys and all(ref_of.get(k) is None for k in keys):
                removed += 1
                continue
            kept.append(_CITE.sub(marker, sentence))
        text = "".join(kept).rstrip()
        if text.strip() and not _LIST_MARK.match(text):
            lines.append(text)
    return _drop_empty_sections("\n".join(lines)), removed


def _drop_empty_sections(text: str) -> str:
    blocks = [b for b in re.split(r"\n\s*\n", text) if b.strip()]
    out: list[str] = []
    for i, block in enumerate(blocks):
        heading = block.lstrip().startswith("#") and "\n" not in block.strip()
        level = len(block.lstrip()) - len(block.lstrip().lstrip("#"))
        nxt = blocks[i + 1].lstrip() if i + 1 < len(blocks) else ""
        next_level = len(nxt) - len(nxt.lstrip("#")) if nxt.startswith("#") else 0
        if heading and (not nxt or 0 < next_level <= level):
            continue  # a heading whose section lost everything
        out.append(block.strip("\n"))
    return "\n\n".join(out)


def insert_additions(body: str, additions: str) -> str:
    """Merge an UPDATE's reply (only what is new) into the page body.

    Paragraphs under a `## Heading` the page already has go at the end of that section;
    under a new heading, a new section at the end; before any heading, at the end of the page.
    """
    sections: list[list[str]] = [[]]  # blocks; a section starts with its heading block
    for block in (b.strip("\n") for b in re.split(r"\n\s*\n", body.strip()) if b.strip()):
        if block.lstrip().startswith("#"):
            sections.append([block])
        else:
            sections[-1].append(block)
    index = {s[0].lstrip("# ").strip().casefold(): s for s in sections[1:]}
    target = sections[-1]
    for block in (b.strip("\n") for b in re.split(r"\n\s*\n", additions.strip()) if b.strip()):
        if block.lstrip().startswith("#"):
            key = block.lstrip("# ").split("\n", 1)[0].strip().casefold()
            head, _, rest = block.partition("\n")
            if key not in index:
                index[key] = [head.strip()]
                sections.append(index[key])
            target = index[key]
            if rest.strip():
                target.append(rest.strip())
        else:
            target.append(block)
    return "\n\n".join(b for s in sections for b in s)


# A footnote names its passage by chunk id: '[^2]: Doc › Heading — chunk 39e81e0c1db0f767' (footnote_text).
_CITED_CHUNK = re.compile(r"\bchunk ([0-9a-f]{8,64})\b")


def cited_chunks(markdown: str) -> set[str]:
    """The chunk ids a page's footnotes name."""
    return set(_CITED_CHUNK.findall(markdown))


def cited_refs(markdown: str) -> set[str]:
    """The citation keys a text uses ([^3] -> "3")."""
    return {m.group(1) for m in _CITE.finditer(markdown)}


def _plain(text: str) -> str:
    """Text as a reader sees it, for comparing sentences: no citations, links as their words,
    no emphasis, one space, case folded, no final stop."""
    text = _CITE.sub("", text)
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = _MARKUP.sub("", text)
    return " ".join(text.split()).casefold().rstrip(".!?")


def stated_in(markdown: str, items: Iterable[EvidenceItem]) -> list[EvidenceItem]:
    """The items (claims, relations, excerpts) whose whole text the page already says word for
    word: asking a writer to add them would add nothing."""
    page = _plain(body_of(markdown))
    return [i for i in items if len(said := _plain(i.text)) > 12 and said in page]
