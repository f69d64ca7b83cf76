"""The static site's graph view: the entity graph laid out as on the canvas and drawn by the
web UI's own canvas renderer, shipped as one classic script so the page works from a plain
folder (file://) with no third-party code and no server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..outline.tree import outline_groups, root_topics
from .layout import communities, entity_positions
from .snapshot import WikiSnapshot

CANVAS_JS = Path(__file__).resolve().parents[1] / "api" / "static" / "js" / "canvas"
_IMPORT = re.compile(r"^import [^;]+;\n", re.M)
_EXPORT = re.compile(r"^export (?=(?:class|function|const|let|async function) )", re.M)


def renderer_script() -> str:
    """grid.js and renderer.js as one script defining window.CompendiumGraph (module syntax
    removed: browsers refuse ES modules from file:// pages)."""
    parts = []
    for name in ("grid.js", "renderer.js"):
        text = (CANVAS_JS / name).read_text(encoding="utf-8")
        parts.append(_EXPORT.sub("", _IMPORT.sub("", text)))
    body = "\n".join(parts)
    return (
        "// Compendium's canvas renderer (the web UI's own grid.js and renderer.js), as one script.\n"
        '(function () {\n"use strict";\n' + body
        + "\nwindow.CompendiumGraph = { GraphCanvas: GraphCanvas, typeColour: typeColour };\n})();\n"
    )


def graph_data(wiki: WikiSnapshot, page_href: str = "pages/", tree: dict[str, Any] | None = None) -> str:
    """Nodes (with layout positions in [-1, 1]) and edges as JSON, safe inside <script>. With the
    published outline `tree`, nodes are laid out in its subtopics and carry their page's root
    topic as `group`, as on the UI's canvas."""
    relations = [(r.source, r.target, r.strength) for r in wiki.relations]
    subject_of = {p.slug: p.subject_id for p in wiki.pages if p.subject_id}
    groups = outline_groups(tree, subject_of) if tree else []
    root_of = root_topics(tree) if tree else {}
    xy = entity_positions([e.id for e in wiki.entities], relations, groups or communities(wiki.topics))
    top = max((e.importance for e in wiki.entities), default=0.0) or 1.0
    nodes = []
    for e in wiki.entities:
        page = wiki.page_of(e.id)
        topic = wiki.topic_of(e.id)
        nodes.append({
            "id": e.id, "label": e.name, "type": e.type, "x": xy[e.id][0], "y": xy[e.id][1],
            "size": round(e.importance / top, 4), "degree": e.degree,
            "topic": (topic.title or topic.slug) if topic else "",
            "href": f"{page_href}{page.slug}.html" if page else "",
            "group": root_of.get(page.slug, "") if page else "",
        })
    known = wiki.entity_by_id
    edges = [
        {"id": r.id, "source": r.source, "target": r.target, "type": r.type, "strength": r.strength}
        for r in wiki.relations if r.source in known and r.target in known
    ]
    text = json.dumps({"nodes": nodes, "edges": edges}, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
