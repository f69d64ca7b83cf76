"""Checks an end-to-end test makes on a compiled wiki and on the scripted server's request log."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from compendium.fingerprint import canonical_json, fingerprint
from compendium.storage.records import Chunk, Page
from tests.support.llm_responder import CHUNK_HEADER, FENCE_LINE
from tests.support.llm_server import ChatRequest

LINK = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|[^\[\]\n]+?)?\]\]")
FOOTNOTE = re.compile(r"^\[\^(\d+)\]: .*? — chunk (\S+)$", re.MULTILINE)
MARKER = re.compile(r"\[\^(\d+)\](?!:)")
PAGE_TITLE = re.compile(r'^Write the wiki page "(?P<title>.+?)" \(kind: ', re.MULTILINE)
ELLIPSIS = " …"


def flat(text: str) -> str:
    return " ".join(text.split())


@dataclass
class CitationProblem:
    slug: str
    ref: str
    text: str
    chunk_id: str
    why: str

    def __str__(self) -> str:
        return f"{self.slug} [^{self.ref}] -> {self.chunk_id}: {self.why}: {self.text[:120]!r}"


def cited_passages(markdown: str) -> list[tuple[str, str]]:
    """(ref, text) for every citation marker: the text written since the previous marker
    or the start of its paragraph."""
    body = FOOTNOTE.sub("", markdown)
    out = []
    for paragraph in re.split(r"\n\s*\n", body):
        start = 0
        for m in MARKER.finditer(paragraph):
            text = flat(paragraph[start : m.start()])
            out.append((m.group(1), text))
            start = m.end()
    return out


def supported_by(text: str, chunk_text: str) -> bool:
    """Is `text` in the chunk, as the scripted writer quotes evidence?

    Claims and excerpts are quoted verbatim (an excerpt cut short ends in " …"); a relation
    is written "Source relation Target: <the sentence stating it>", and that sentence is quoted.
    """
    source = flat(chunk_text)
    text = text[: -len(ELLIPSIS)] if text.endswith(ELLIPSIS) else text
    if text and text in source:
        return True
    head, sep, quoted = text.partition(": ")
    return bool(sep and head and quoted and quoted in source)


def check_citations(pages: Iterable[Page], chunks: dict[str, Chunk]) -> tuple[int, list[CitationProblem]]:
    """Count checked citations and list every one that does not resolve or is not supported."""
    problems: list[CitationProblem] = []
    checked = 0
    for page in pages:
        notes = dict(FOOTNOTE.findall(page.markdown))
        for ref, text in cited_passages(page.markdown):
            checked += 1
            chunk_id = notes.get(ref, "")
            if not chunk_id:
                problems.append(CitationProblem(page.slug, ref, text, "", "no footnote definition"))
            elif chunk_id not in chunks:
                problems.append(CitationProblem(page.slug, ref, text, chunk_id, "no such chunk"))
            elif not supported_by(text, chunks[chunk_id].text):
                problems.append(CitationProblem(page.slug, ref, text, chunk_id, "not in the chunk's text"))
    return checked, problems


def broken_links(pages: Iterable[Page]) -> list[tuple[str, str]]:
    """(page slug, link target) of every wikilink in an active page naming no active page."""
    pages = list(pages)
    active = {p.slug for p in pages if p.status == "active"}
    return [
        (p.slug, target.strip())
        for p in pages
        if p.status == "active"
        for target in LINK.findall(p.markdown)
        if target.strip() not in active
    ]


# ---- the server's request log --------------------------------------------------------------


def request_key(request: ChatRequest) -> str:
    """Fingerprint of what was asked (the body), to compare requests across runs."""
    return fingerprint(canonical_json(request.body))


def client_cache_key(request: ChatRequest) -> str:
    """The key under which Compendium's OpenAI client stores this request's reply."""
    body: dict[str, Any] = request.body
    if body.get("response_format"):
        return fingerprint(body["model"], body["messages"], body["response_format"], body.get("temperature"))
    return fingerprint(body["model"], body["messages"], None, body.get("temperature"), body.get("max_tokens"))


def extraction_chunk_texts(request: ChatRequest) -> list[str]:
    """The whitespace-normalised text of every chunk an extraction request asks about. Every
    chunk of the sample corpus opens with the heading its header ends with, which the prompt
    gives once, in the header: it is put back."""
    prompt = request.prompt
    found = list(CHUNK_HEADER.finditer(prompt))
    texts = []
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(prompt)
        heading = m["title"].split(" › ")[-1]
        texts.append(flat(f"{heading}\n{FENCE_LINE.sub('', prompt[m.end() : end])}"))
    return texts


def page_title(request: ChatRequest) -> str | None:
    m = PAGE_TITLE.search(request.prompt)
    return m["title"] if m else None
