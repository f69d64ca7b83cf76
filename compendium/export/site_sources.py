"""The static site's source pages: one per document, every passage and sentence an anchor that
citations link to, so a reader lands on the cited sentence, highlighted, inside its passage."""

from __future__ import annotations

from urllib.parse import quote

from markupsafe import Markup

from ..storage.records import Chunk, Document, Page
from .markdown_html import Cite, passage_html, plain
from .passages import best_sentence, cited_passage, paragraphs, source_label
from .snapshot import WikiSnapshot


def passage_anchor(chunk_id: str, sentence: int | None = None) -> str:
    return f"c-{chunk_id}" if sentence is None else f"c-{chunk_id}-s{sentence}"


def source_file(wiki: WikiSnapshot, document_id: str) -> str:
    """The source page's path inside the site."""
    return f"sources/{wiki.source_name[document_id]}.html"


def passage_href(wiki: WikiSnapshot, chunk: Chunk, sentence: int | None = None, root: str = "../") -> str:
    return f"{root}{quote(source_file(wiki, chunk.document_id))}#{passage_anchor(chunk.id, sentence)}"


def page_citer(wiki: WikiSnapshot, page: Page) -> Cite:
    """Citations of `page` to links: the marker to the sentence it cites, the footnote to the passage."""

    def cite(label: str, note: str, citing: str) -> tuple[str, str, str] | None:
        chunk = cited_passage(wiki, page, label, note)
        if chunk is None:
            return None
        label_text = source_label(wiki.document_by_id.get(chunk.document_id), chunk)
        sentence = best_sentence(chunk, citing) if citing else None
        href = passage_href(wiki, chunk, sentence)
        item = f'<a class="source-link" href="{plain(passage_href(wiki, chunk))}">{plain(label_text)}</a>'
        return href, label_text, item

    return cite


def source_view(wiki: WikiSnapshot, document: Document) -> list[dict]:
    """What the source template draws: each passage with its anchor, label and sentences."""
    passages = []
    for chunk in wiki.chunks_of(document.id):
        numbered, k = [], 0
        for para in paragraphs(chunk):
            block = len(para) == 1 and para[0][0].startswith(("```", "    ", "\t", "|"))
            row = []
            for sentence, spacing in para:
                html = Markup(passage_html(sentence, block=block))  # sanitised by nh3
                row.append((passage_anchor(chunk.id, k), html, spacing))
                k += 1
            numbered.append({"block": block, "sentences": row})
        headings = [h for h in chunk.heading_path if h]
        passages.append({
            "anchor": passage_anchor(chunk.id),
            "label": source_label(document, chunk),
            "heading": headings[-1] if headings else "",
            "paragraphs": numbered,
            "chunk": chunk,
        })
    return passages
