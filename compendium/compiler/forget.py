"""What a deleted document leaves in kept text, forgotten: the versions of pages that cited its
passages, the text of pages deleted with it and the cached replies drawn from its passages. Descriptions, summaries, claims and live pages
are rebuilt from the surviving evidence by the phases; this is the rest."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..engines.cache import SOURCES
from ..phases.citations import cited_chunks
from ..storage.base import Store
from ..storage.records import CacheEntry, Page, PageVersion


async def forget_removed_passages(store: Store, removed: Iterable[str]) -> dict[str, int]:
    """Delete every kept page version that cites a removed chunk (a page's current version
    stays: the page itself was rewritten from what is left), empty the text of deleted pages
    (one a person edited keeps theirs) and delete every cached reply or summary drawn from a
    removed chunk (engines/cache.py: a request that carried its text). Returns how many of
    each were forgotten."""
    gone = set(removed)
    if not gone:
        return {"page_versions": 0, "deleted_pages": 0, "cached_replies": 0}
    current: dict[str, int] = {}
    emptied: list[Page] = []
    async for page in store.scan(Page):
        if page.status == "deleted" and not page.edited and (page.markdown or page.summary):
            page.markdown, page.summary, page.cited_chunks, page.outlinks = "", "", [], []
            emptied.append(page)
        elif page.status != "deleted":
            current[page.slug or page.id] = page.version
    stale = [v.id async for v in store.scan(PageVersion)
             if current.get(v.slug) != v.version and gone & cited_chunks(v.markdown)]
    replies = [e.id async for e in store.scan(CacheEntry) if _drawn_from(e.value) & gone]  # type: ignore[attr-defined]
    async with store.transaction():
        if stale:
            await store.delete(PageVersion, {"id": stale})
        if emptied:
            await store.upsert(emptied)
        if replies:
            await store.delete(CacheEntry, {"id": replies})
    return {"page_versions": len(stale), "deleted_pages": len(emptied), "cached_replies": len(replies)}


def _drawn_from(value: object) -> set[str]:
    """The passages a cached value was drawn from (engines/cache.py), when it says."""
    sources = value.get(SOURCES) if isinstance(value, dict) else None
    return set(sources) if isinstance(sources, list) else set()


_DEFINITION = re.compile(r"^\[\^([^\]\s]+)\]:.*$", re.MULTILINE)
_MARKER = re.compile(r"\[\^([^\]\s]+)\]")
# Where a sentence ends: its stop and the citation markers after it, or a run of markers.
_END = re.compile(r"(?:[.!?](?:\[\^[^\]\s]+\])*|(?:\[\^[^\]\s]+\])+)(?=\s|$)")
_STRUCTURE = ("#", "|", "```", "~~~", "    ")


def answered_for(sentences: list[str]) -> list[set[str]]:
    """The citation labels each sentence of a paragraph stands on: its own markers, or, for a
    sentence with none, those of the next sentence that has some (a marker closing a run of
    sentences answers for them all, as the support check reads it); none after it: none."""
    out: list[set[str]] = []
    after: set[str] = set()
    for sentence in reversed(sentences):
        after = set(_MARKER.findall(sentence)) or after
        out.append(after)
    return out[::-1]


def without_removed(markdown: str, gone: set[str]) -> str:
    """The page's Markdown without the sentences whose every citation is of a removed chunk,
    the markers of removed chunks elsewhere, and their footnote definitions."""
    dead = {m.group(1) for m in _DEFINITION.finditer(markdown) if gone & cited_chunks(m.group(0))}
    if not dead:
        return markdown
    out: list[str] = []
    fenced = False
    for line in markdown.split("\n"):
        definition = _DEFINITION.match(line)
        if definition is not None:
            if definition.group(1) not in dead:
                out.append(line)
            continue
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or line.lstrip().startswith(_STRUCTURE) or not _MARKER.search(line):
            out.append(_MARKER.sub(lambda m: "" if m.group(1) in dead else m.group(0), line))
            continue
        kept, start, sentences = [], 0, []
        for end in [m.end() for m in _END.finditer(line)] + [len(line)]:
            sentences.append(line[start:end])
            start = end
        for sentence, labels in zip(sentences, answered_for(sentences), strict=True):
            if labels and labels <= dead:
                continue  # every passage it stood on is gone
            kept.append(_MARKER.sub(lambda m: "" if m.group(1) in dead else m.group(0), sentence))
        text = "".join(kept).strip()
        prefix = line[: len(line) - len(line.lstrip())]
        if text:
            out.append(prefix + text)
        elif out and out[-1] == "":
            continue  # the paragraph is gone: no second blank line
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


async def strip_removed_sentences(store: Store, removed: Iterable[str]) -> int:
    """Before pages are written again: take out of every live page the sentences that stood
    only on removed chunks, so that an update merging new evidence into the page starts from
    what is left, not from the deleted document's words (which it keeps, uncited, once their
    citations are dropped). A page a person edited is theirs and is left alone. The page keeps
    its version number; that version's kept text is the page's new text. Returns the pages
    changed."""
    gone = set(removed)
    if not gone:
        return 0
    changed: list[Page | PageVersion] = []
    async for page in store.scan(Page, {"status": "active"}):
        if page.edited or not (gone & set(page.cited_chunks) or gone & cited_chunks(page.markdown)):
            continue
        text = without_removed(page.markdown, gone)
        if text == page.markdown:
            continue
        page.markdown = text
        page.cited_chunks = [c for c in page.cited_chunks if c not in gone]
        changed += [page, PageVersion.of(page)]
    if changed:
        await store.upsert(changed)
    return len(changed) // 2
