"""JSON export: pages, entities, relations, topics and the outline tree in one file, vectors left
out, ordering fixed."""

from __future__ import annotations

import json
from typing import Any

from ..storage.records import Record
from .outline_view import site_outline
from .snapshot import WikiSnapshot, wiki_counts

FORMAT_VERSION = 1


def _plain(record: Record) -> dict[str, Any]:
    data = record.to_dict()
    if record.VECTOR:
        data.pop(record.VECTOR, None)
    return data


def wiki_json(wiki: WikiSnapshot, title: str) -> str:
    """The whole export as text; the same store always gives the same bytes."""
    document = {
        "title": title,
        "format_version": FORMAT_VERSION,
        # As a compile report counts them: "entities" below lists concepts too.
        "counts": wiki_counts(wiki),
        "pages": [_plain(p) for p in wiki.pages],
        "entities": [_plain(e) for e in wiki.entities],
        "relations": [_plain(r) for r in wiki.relations],
        "topics": [_plain(t) for t in wiki.topics],
        # {"title", "slug" (overview page or null), "pages": [slugs], "children": [nodes]}
        "outline": site_outline(wiki),
    }
    return json.dumps(document, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
