"""Static HTML site export: index with search, one sanitised page per wiki page, entities, topics,
the entity graph and one source page per document that citations link to."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..storage.records import Page
from .folder import ExportFolder
from .markdown_html import render_markdown
from .outline_view import (
    Placement,
    described_in,
    node_members,
    numbered,
    placement,
    site_outline,
    without_listed_related,
)
from .site_graph import CANVAS_JS, graph_data, renderer_script
from .site_sources import page_citer, source_file, source_view
from .snapshot import WikiSnapshot, wiki_counts

ASSETS = Path(__file__).parent / "assets"
ENTITIES_PER_FILE = 500  # entities.html is split into files of this many rows, never one huge page
RELATIONS_SHOWN = 12  # per entity on those pages: the strongest; the page and graph show the rest
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


def render_page(wiki: WikiSnapshot, page: Page, linked_from: list[Page], title: str,
                places: Placement | None = None) -> str:
    places = places or placement(site_outline(wiki))

    def href_of(slug: str | None) -> str | None:
        return page_href(slug) if slug and slug in wiki.page_by_slug else None

    # A node without an overview page links to its place in the index's tree.
    placed = places.trail.get(page.slug)
    trail = None if placed is None else [
        (n["title"], href_of(n["slug"]) or f"../index.html#{places.anchor.get(id(n), '')}") for n in placed]
    here = places.node_of.get(page.slug)
    node = None
    body = page.markdown
    if here is not None:
        # (its Related links the node lists below are not shown twice)
        body = without_listed_related(body, {*here["pages"], *(c["slug"] for c in here["children"] if c["slug"])})
        # Its members, each with a line saying what it is (unless the page's own list says it).
        members = node_members(here, wiki, described_in(page.markdown), shown=page.markdown)
        node = {
            "title": here["title"],
            "children": [(title, href_of(slug), _total(c, wiki.page_by_slug), said)
                         for title, slug, c, said in members["children"]],
            "pages": [(page_href(s), title, said) for s, title, said in members["pages"]],
            # (a subtopic with no overview page links to its place in the index's tree)
            "also": [(href_of(s) or (f"../index.html#{places.anchor.get(id(c), '')}" if c is not None else None), title)
                     for s, title, c in members["also"]],
        }

    def resolve(slug: str) -> tuple[str, str] | None:
        target = wiki.page_by_slug.get(slug)
        return (page_href(slug), target.title or slug) if target else None

    return _env.get_template("page.html.j2").render(
        site_title=title,
        root="../",
        page=page,
        kind_title=KIND_LABELS.get(page.kind, page.kind.title()),
        body=render_markdown(
            _without_title(body, page.title), resolve, page_citer(wiki, page)
        ),
        topics=wiki.topics_of(page),
        linked_from=[(page_href(p.slug), p.title or p.slug) for p in linked_from],
        updated=updated_date(page),
        trail=trail,
        node=node,
    )


def _total(node: dict, published: Collection[str] = ()) -> int:
    """Pages under a node, its own and its subtopics', its overview page among them when
    published: a chapter that is one page counts 1, not 0."""
    own = 1 if node.get("slug") in published and node.get("slug") not in node["pages"] else 0
    return own + len(node["pages"]) + sum(_total(c, published) for c in node["children"])


def outline_view(wiki: WikiSnapshot, tree: dict) -> list[dict]:
    """The published tree as the index template draws it: hrefs, titles, anchors, counts."""
    anchors = {id(n): a for n, a in numbered(tree)}

    def view(node: dict) -> dict:
        pages = sorted(((("pages/" + page_href(s)), wiki.page_by_slug[s].title or s, wiki.page_by_slug[s].kind)
                        for s in node["pages"] if s in wiki.page_by_slug), key=lambda p: (p[1].lower(), p[0]))
        href = "pages/" + page_href(node["slug"]) if node["slug"] in wiki.page_by_slug else None
        return {"title": node["title"], "href": href, "anchor": anchors[id(node)], "pages": pages,
                "children": [view(c) for c in node["children"]], "total": _total(node, wiki.page_by_slug),
                "open": False}

    return [view(c) for c in tree["children"]]


def render_index(wiki: WikiSnapshot, title: str, tree: dict | None = None) -> str:
    """The index: search, then the outline as a collapsible tree that lists every page."""
    outline = outline_view(wiki, tree if tree is not None else site_outline(wiki))
    return _env.get_template("index.html.j2").render(
        site_title=title,
        root="",
        outline=outline,
        search_json=search_index(wiki),
        page_count=len(wiki.pages), counts=wiki_counts(wiki),
    )


def entity_file(n: int) -> str:
    return "entities.html" if n == 1 else f"entities-{n}.html"


def render_entities(wiki: WikiSnapshot, title: str) -> dict[str, str]:
    """entities.html and its next files: the entities by importance, ENTITIES_PER_FILE a file,
    each with its strongest relations, so no file grows with the whole graph."""
    ordered = sorted(wiki.entities, key=lambda e: (-e.importance, e.name.lower(), e.id))
    size = ENTITIES_PER_FILE
    file_of = {e.id: entity_file(i // size + 1) for i, e in enumerate(ordered)}
    count = max(1, -(-len(ordered) // size))
    files = {}
    for n in range(1, count + 1):
        rows = []
        for entity in ordered[(n - 1) * size:n * size]:
            page = wiki.page_of(entity.id)
            relations = []
            every = wiki.relations_of(entity.id)
            for rel in every[:RELATIONS_SHOWN]:
                other_id = rel.target if rel.source == entity.id else rel.source
                other = wiki.entity_by_id.get(other_id)
                direction = "→" if rel.source == entity.id else "←"
                here = file_of.get(other_id, "")
                link = ("" if here == entity_file(n) else here) + "#" + other_id
                relations.append((direction, rel, link, other.name if other else other_id))
            rows.append((entity, "pages/" + page_href(page.slug) if page else None, relations,
                         len(every) - len(relations)))
        pager = [(entity_file(i), i) for i in range(1, count + 1)] if count > 1 else []
        files[entity_file(n)] = _env.get_template("entities.html.j2").render(
            site_title=title, root="", rows=rows, total=len(ordered), counts=wiki_counts(wiki), pager=pager, current=n,
            first=(n - 1) * size + 1,
        )
    return files


def render_topics(wiki: WikiSnapshot, title: str) -> str:
    rows = []
    for topic in sorted(wiki.topics, key=lambda t: (t.title.lower(), t.slug)):
        page = wiki.page_of(topic.subject_of_page())
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
    tree = site_outline(wiki)
    places = placement(tree)
    folder.write("index.html", render_index(wiki, title, tree))
    for name, text in render_entities(wiki, title).items():
        folder.write(name, text)
    folder.write("topics.html", render_topics(wiki, title))
    for name in ("style.css", "search.js", "outline.js", "graph.js"):
        folder.write(f"assets/{name}", (ASSETS / name).read_bytes())
    folder.write("assets/theme.js", (CANVAS_JS.parent / "theme.js").read_bytes())  # the UI's own
    folder.write("assets/graph-renderer.js", renderer_script())
    folder.write("graph.html", _env.get_template("graph.html.j2").render(
        site_title=title, root="", graph_json=graph_data(wiki, tree=tree),
        node_count=len(wiki.entities), edge_count=len(wiki.relations),
    ))
    for name, text in render_sources(wiki, title).items():
        folder.write(name, text)
    linked = backlinks(wiki)
    for page in wiki.pages:
        folder.write(
            f"pages/{page.slug}.html", render_page(wiki, page, linked.get(page.slug, []), title, places)
        )
    return folder.finish()
