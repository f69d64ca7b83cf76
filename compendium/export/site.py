"""Static HTML site export: index with search, one sanitised page per wiki page, entities, topics,
the entity graph and one source page per document that citations link to."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..storage.records import Page
from .folder import ExportFolder
from .markdown_html import render_markdown
from .site_graph import CANVAS_JS, graph_data, renderer_script
from .site_sources import page_citer, source_file, source_view
from .snapshot import WikiSnapshot

ASSETS = Path(__file__).parent / "assets"
KIND_TITLES = {"entity": "Entities", "concept": "Concepts", "topic": "Topics"}
KIND_LABELS = {"entity": "Entity", "concept": "Concept", "topic": "Topic"}
_LINK = re.compile(r"\[\[([^\[\]|\n]+?)(?:\|[^\[\]\n]*)?\]\]")

_env = Environment(
    loader=FileSystemLoader(ASSETS),
    autoescape=True,  # every value from the store is escaped; only sanitised page bodies are marked safe
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def page_href(slug: str) -> str:
    """Link to a page from another page (pages live together in pages/)."""
    return quote(slug) + ".html"


def updated_date(page: Page) -> str:
    return (
        datetime.fromtimestamp(page.updated_at, tz=UTC).date().isoformat()
        if page.updated_at
        else ""
    )


def search_index(wiki: WikiSnapshot) -> str:
    """The JSON the index page filters, safe to place inside a <script> element."""
    rows = [
        {
            "t": p.title or p.slug,
            "u": "pages/" + page_href(p.slug),
            "k": p.kind,
            "a": p.aliases,
            "s": p.summary,
        }
        for p in sorted(wiki.pages, key=lambda p: (p.title.lower(), p.slug))
    ]
    text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))
    # '<' escaped so no string in the data can close the script element.
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def backlinks(wiki: WikiSnapshot) -> dict[str, list[Page]]:
    """For each slug, the pages linking to it (read from the Markdown, so hand edits count)."""
    found: dict[str, list[Page]] = defaultdict(list)
    for page in wiki.pages:
        targets = {m.group(1).strip() for m in _LINK.finditer(page.markdown)} | set(page.outlinks)
        for target in sorted(targets):
            if target != page.slug and target in wiki.page_by_slug:
                found[target].append(page)
    return found


def _without_title(markdown: str, title: str) -> str:
    """The page body without a leading `# Title` line: the site's layout shows the title."""
    first, _, rest = markdown.lstrip().partition("\n")
    return rest if first.strip() == f"# {title}".strip() else markdown


def render_page(wiki: WikiSnapshot, page: Page, linked_from: list[Page], title: str) -> str:
    def resolve(slug: str) -> tuple[str, str] | None:
        target = wiki.page_by_slug.get(slug)
        return (page_href(slug), target.title or slug) if target else None

    return _env.get_template("page.html.j2").render(
        site_title=title,
        root="../",
        page=page,
        kind_title=KIND_LABELS.get(page.kind, page.kind.title()),
        body=render_markdown(
            _without_title(page.markdown, page.title), resolve, page_citer(wiki, page)
        ),
        topics=wiki.topics_of(page),
        linked_from=[(page_href(p.slug), p.title or p.slug) for p in linked_from],
        updated=updated_date(page),
    )


def render_index(wiki: WikiSnapshot, title: str) -> str:
    by_kind: dict[str, list[Page]] = defaultdict(list)
    for page in sorted(wiki.pages, key=lambda p: (p.title.lower(), p.slug)):
        by_kind[page.kind].append(page)
    kinds = [
        (KIND_TITLES.get(k, k.title()), by_kind[k])
        for k in [*KIND_TITLES, *sorted(set(by_kind) - set(KIND_TITLES))]
        if by_kind.get(k)
    ]
    by_topic = []
    for topic in sorted(wiki.topics, key=lambda t: (t.title.lower(), t.slug)):
        pages = [p for p in (wiki.page_of(m) for m in topic.members) if p is not None]
        if pages:
            by_topic.append((topic, sorted(pages, key=lambda p: (p.title.lower(), p.slug))))
    return _env.get_template("index.html.j2").render(
        site_title=title,
        root="",
        kinds=kinds,
        by_topic=by_topic,
        href=lambda p: "pages/" + page_href(p.slug),
        search_json=search_index(wiki),
        page_count=len(wiki.pages),
    )


def render_entities(wiki: WikiSnapshot, title: str) -> str:
    rows = []
    for entity in sorted(wiki.entities, key=lambda e: (-e.importance, e.name.lower(), e.id)):
        page = wiki.page_of(entity.id)
        relations = []
        for rel in wiki.relations_of(entity.id):
            other_id = rel.target if rel.source == entity.id else rel.source
            other = wiki.entity_by_id.get(other_id)
            direction = "→" if rel.source == entity.id else "←"
            relations.append((direction, rel, other_id, other.name if other else other_id))
        rows.append((entity, "pages/" + page_href(page.slug) if page else None, relations))
    return _env.get_template("entities.html.j2").render(site_title=title, root="", rows=rows)


def render_topics(wiki: WikiSnapshot, title: str) -> str:
    rows = []
    for topic in sorted(wiki.topics, key=lambda t: (t.title.lower(), t.slug)):
        page = wiki.page_of(topic.id)
        members = []
        for member in topic.members:
            entity = wiki.entity_by_id.get(member)
            member_page = wiki.page_of(member)
            members.append(
                (
                    entity.name if entity else member,
                    "pages/" + page_href(member_page.slug) if member_page else None,
                )
            )
        members.sort(key=lambda m: m[0].lower())
        rows.append((topic, "pages/" + page_href(page.slug) if page else None, members))
    return _env.get_template("topics.html.j2").render(site_title=title, root="", rows=rows)


def render_sources(wiki: WikiSnapshot, title: str) -> dict[str, str]:
    """Source pages by file name: sources/index.html and one per document with passages."""
    cited_by: dict[str, list[Page]] = defaultdict(list)
    for page in wiki.pages:
        for chunk_id in dict.fromkeys(page.cited_chunks):
            cited_by[chunk_id].append(page)
    files, rows = {}, []
    for document in wiki.documents:
        passages = source_view(wiki, document)
        if not passages:
            continue
        for p in passages:
            p["cited_by"] = [
                ("../pages/" + page_href(c.slug), c.title or c.slug) for c in cited_by[p["chunk"].id]
            ]
        name = source_file(wiki, document.id)
        files[name] = _env.get_template("source.html.j2").render(
            site_title=title, root="../", document=document, passages=passages
        )
        rows.append((document, quote(name.removeprefix("sources/")), len(passages)))
    rows.sort(key=lambda r: ((r[0].title or r[0].path).lower(), r[0].path))
    files["sources/index.html"] = _env.get_template("sources.html.j2").render(
        site_title=title, root="../", rows=rows
    )
    return files


def write_site(wiki: WikiSnapshot, out: Path, title: str) -> int:
    """Write the site into `out`; returns the number of files written."""
    folder = ExportFolder(out)
    folder.write("index.html", render_index(wiki, title))
    folder.write("entities.html", render_entities(wiki, title))
    folder.write("topics.html", render_topics(wiki, title))
    for name in ("style.css", "search.js", "graph.js"):
        folder.write(f"assets/{name}", (ASSETS / name).read_bytes())
    folder.write("assets/theme.js", (CANVAS_JS.parent / "theme.js").read_bytes())  # the UI's own
    folder.write("assets/graph-renderer.js", renderer_script())
    folder.write("graph.html", _env.get_template("graph.html.j2").render(
        site_title=title, root="", graph_json=graph_data(wiki),
        node_count=len(wiki.entities), edge_count=len(wiki.relations),
    ))
    for name, text in render_sources(wiki, title).items():
        folder.write(name, text)
    linked = backlinks(wiki)
    for page in wiki.pages:
        folder.write(
            f"pages/{page.slug}.html", render_page(wiki, page, linked.get(page.slug, []), title)
        )
    return folder.finish()
