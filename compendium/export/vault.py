"""Markdown vault export (Obsidian style): one SLUG.md per page with front matter, _index.md, a
map-of-content note per outline node, and one note per source document whose passages carry
block ids that the pages' footnotes link to."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import yaml

from ..storage.records import Chunk, Document, Page
from ..storage.slugs import slugify
from .folder import ExportFolder
from .markdown_html import sentence_before, split_footnotes
from .outline_view import node_members, site_outline
from .passages import best_sentence, cited_passage, paragraphs, source_label
from .site import KIND_TITLES, updated_date
from .snapshot import WikiSnapshot


def front_matter(wiki: WikiSnapshot, page: Page) -> str:
    """YAML front matter: title, kind, aliases, tags (the page's topics) and updated date."""
    meta = {
        "title": page.title or page.slug,
        "kind": page.kind,
        "aliases": list(page.aliases),
        "tags": [t.slug for t in wiki.topics_of(page)],
        "updated": updated_date(page),
    }
    text = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False)
    return f"---\n{text}---\n"


_FOOTNOTE_LINE = re.compile(r"^([ \t]{0,3}\[\^([^\]\s]+)\]:[ \t]*)(.*)$")
_NOT_BLOCK_ID = re.compile(r"[^A-Za-z0-9-]")
_MARKER = re.compile(r"\[\^([^\]\s]+)\](?!:)")
_LIST_MARK = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)")
SOURCES = "sources"


def block_id(chunk_id: str) -> str:
    """Obsidian block ids are letters, digits and dashes."""
    return _NOT_BLOCK_ID.sub("-", chunk_id)


def cited_sentences(wiki: WikiSnapshot) -> dict[str, set[int]]:
    """For each cited chunk, the sentences (indexes over `paragraphs`) that pages cite."""
    marks: dict[str, set[int]] = defaultdict(set)
    for page in wiki.pages:
        body, notes = split_footnotes(page.markdown)
        definitions = dict(notes)
        for block in body.split("\n\n"):
            for match in _MARKER.finditer(block):
                label = match.group(1)
                chunk = cited_passage(wiki, page, label, definitions[label]) if label in definitions else None
                if chunk is not None:
                    marks[chunk.id].add(best_sentence(chunk, sentence_before(block[: match.start()])))
    return marks


def _highlighted(chunk: Chunk, marked: set[int]) -> str:
    """The passage with its cited sentences in ==highlight== (Obsidian's mark)."""
    out, k = [], 0
    for para in paragraphs(chunk):
        text = []
        for sentence, spacing in para:
            if k in marked and "\n" not in sentence and not sentence.startswith(("```", "|", "#", ">")):
                prefix = _LIST_MARK.match(sentence)
                head = prefix.group(1) if prefix else ""
                sentence = f"{head}=={sentence[len(head):].strip()}=="
            text.append(sentence + spacing)
            k += 1
        out.append(literal_brackets("".join(text)))
    return "\n\n".join(out)


_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.DOTALL)


def literal_brackets(text: str) -> str:
    """`text` with each [[ and ]] outside code escaped: a source that writes double brackets
    ('[[Checkpointer]]', a wiki's own syntax) shows them, and is no link to a note that does
    not exist. In code they are literal already."""
    if "[[" not in text and "]]" not in text:
        return text
    parts = _CODE.split(text)
    for i in range(0, len(parts), 2):  # the even parts lie outside code
        parts[i] = parts[i].replace("[[", "\\[\\[").replace("]]", "\\]\\]")
    return "".join(parts)


def _source_link(wiki: WikiSnapshot, page: Page, label: str, note: str) -> str | None:
    chunk = cited_passage(wiki, page, label, note)
    if chunk is None:
        return None
    text = source_label(wiki.document_by_id.get(chunk.document_id), chunk)
    text = re.sub(r"[\[\]|#^]", " ", text)  # would end the link early
    name = wiki.source_name[chunk.document_id]
    return f"[[{SOURCES}/{name}#^{block_id(chunk.id)}|{text}]]"


def vault_page(wiki: WikiSnapshot, page: Page) -> str:
    """A page file: front matter, then the page Markdown ([[links]] kept), with each footnote
    turned into a link to its passage in the source note, which Obsidian opens at the block."""
    _, notes = split_footnotes(page.markdown)
    definitions = dict(notes)
    lines = []
    for line in page.markdown.splitlines():
        match = _FOOTNOTE_LINE.match(line)
        if match and match.group(2) in definitions:
            link = _source_link(wiki, page, match.group(2), match.group(3))
            if link:
                line = match.group(1) + link
        lines.append(line)
    return front_matter(wiki, page) + "\n" + "\n".join(lines).rstrip("\n") + "\n"


def source_note(wiki: WikiSnapshot, document: Document, marks: dict[str, set[int]] | None = None) -> str:
    """A source document as a note: each passage under its headings, quoted, with its block id;
    the sentences pages cite are highlighted."""
    meta = {"title": document.title or document.path, "source": document.path, "kind": "source"}
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False)
    lines = [f"---\n{head}---", "", f"# {document.title or document.path}", ""]
    for chunk in wiki.chunks_of(document.id):
        label = source_label(document, chunk)
        heading = label.split(" › ", 1)[1] if " › " in label else ""
        if heading:
            lines += [f"## {heading}", ""]
        text = _highlighted(chunk, (marks or {}).get(chunk.id, set()))
        quoted = ["> " + line if line.strip() else ">" for line in text.splitlines()]
        lines += [*quoted, f"^{block_id(chunk.id)}", ""]
    return "\n".join(lines).rstrip() + "\n"


def _link(page: Page) -> str:
    # Titles can hold '|' or ']' which would break the wikilink; the slug alone then reads fine.
    title = page.title
    if title and title != page.slug and not any(c in title for c in "|[]"):
        return f"[[{page.slug}|{title}]]"
    return f"[[{page.slug}]]"


def index_markdown(wiki: WikiSnapshot, title: str, maps: list[tuple[str, str]] = ()) -> str:  # type: ignore[assignment]
    """_index.md: the outline's root maps of content, then every page by kind, then by topic."""
    by_kind: dict[str, list[Page]] = defaultdict(list)
    for page in sorted(wiki.pages, key=lambda p: (p.title.lower(), p.slug)):
        by_kind[page.kind].append(page)
    lines = [f"# {title}", "", f"{len(wiki.pages)} pages.", ""]
    if maps:
        lines += ["## Contents", ""] + [f"- [[{MAPS}/{name}|{text}]]" for name, text in maps] + [""]
    for kind in [*KIND_TITLES, *sorted(set(by_kind) - set(KIND_TITLES))]:
        if by_kind.get(kind):
            lines += [f"## {KIND_TITLES.get(kind, kind.title())}", ""]
            lines += [f"- {_link(p)}" for p in by_kind[kind]] + [""]
    topics = []
    for topic in sorted(wiki.topics, key=lambda t: (t.title.lower(), t.slug)):
        pages = sorted(
            (p for p in (wiki.page_of(m) for m in topic.members) if p is not None),
            key=lambda p: (p.title.lower(), p.slug),
        )
        if pages:
            topics += (
                [f"### {topic.title or topic.slug}", ""] + [f"- {_link(p)}" for p in pages] + [""]
            )
    if topics:
        lines += ["## By topic", "", *topics]
    return "\n".join(lines).rstrip() + "\n"


MAPS = "maps"


def map_notes(wiki: WikiSnapshot, tree: dict) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """A map-of-content note per outline node (file name -> text), linking its parent, its
    overview page, its subtopics' maps and its pages; and the root topics' (name, title)."""
    names: dict[int, str] = {}
    taken: set[str] = set()

    def name_of(node: dict) -> str:
        if id(node) not in names:
            base = slugify(node["title"]) or "topic"
            name, k = base, 2
            while name in taken:
                name, k = f"{base}-{k}", k + 1
            taken.add(name)
            names[id(node)] = name
        return names[id(node)]

    def link(name: str, text: str) -> str:
        return f"[[{MAPS}/{name}|{text}]]" if not any(c in text for c in "|[]") else f"[[{MAPS}/{name}]]"

    notes: dict[str, str] = {}
    stack: list[tuple[dict, dict | None]] = [(c, None) for c in tree["children"]]
    while stack:
        node, parent = stack.pop()
        name = name_of(node)
        meta = {"title": node["title"], "kind": "map", "tags": ["map-of-content"]}
        head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=False)
        lines = [f"---\n{head}---", "", f"# {node['title']}", ""]
        up = link(name_of(parent), parent["title"]) if parent else "[[_index|Contents]]"
        lines += [f"Up: {up}", ""]
        if node["slug"] in wiki.page_by_slug:
            lines += [f"Overview: {_link(wiki.page_by_slug[node['slug']])}", ""]
        members = node_members(node, wiki)  # each with a line saying what it is
        if members["children"]:
            lines += ["## Subtopics", ""] + [f"- {link(name_of(c), title)}{literal_brackets(said)}"
                                             for title, _slug, c, said in members["children"]] + [""]
        if members["pages"]:
            lines += ["## Pages", ""] + [f"- {_link(wiki.page_by_slug[s])}{literal_brackets(said)}"
                                         for s, _title, said in members["pages"]] + [""]
        if members["also"]:  # members with no line saying what they are: links, not empty items
            also = [_link(wiki.page_by_slug[s]) if s else link(name_of(c), title) for s, title, c in members["also"]]
            lines += ["Also: " + ", ".join(also), ""]
        notes[f"{MAPS}/{name}.md"] = "\n".join(lines).rstrip() + "\n"
        stack.extend((c, node) for c in node["children"])
    roots = [(name_of(c), c["title"]) for c in tree["children"]]
    return notes, roots


def write_vault(wiki: WikiSnapshot, out: Path, title: str) -> int:
    """Write the vault into `out`; returns the number of files written."""
    folder = ExportFolder(out)
    for page in wiki.pages:
        folder.write(f"{page.slug}.md", vault_page(wiki, page))
    notes, roots = map_notes(wiki, site_outline(wiki))
    for name, text in notes.items():
        folder.write(name, text)
    folder.write("_index.md", index_markdown(wiki, title, roots))
    marks = cited_sentences(wiki)
    for document in wiki.documents:
        if wiki.chunks_of(document.id):
            note = source_note(wiki, document, marks)
            folder.write(f"{SOURCES}/{wiki.source_name[document.id]}.md", note)
    return folder.finish()
