"""Which documents a retrieval is limited to: those under a path prefix, or those an outline
node's subjects come from."""

from __future__ import annotations

from ..errors import NotFound
from ..storage.base import Store
from ..storage.records import Document, Entity


async def documents_under(store: Store, prefix: str) -> list[str]:
    """Ids of the documents whose path starts with `prefix` ('/'-separated, no leading '/')."""
    want = prefix.strip().lstrip("/")
    return [d.id async for d in store.scan(Document) if d.path.startswith(want)]  # type: ignore[attr-defined]


async def documents_in_node(store: Store, name: str) -> list[str]:
    """Ids of the documents the subjects of an outline node (and of its subtopics) come from;
    the node is named by its id, its overview page's slug or its title."""
    from ..storage.records import CacheEntry

    found = await store.get(CacheEntry, ["outline"])
    outline = (found[0].value or {}) if found else {}  # type: ignore[attr-defined]
    wanted = name.strip().casefold()
    stack = list(outline.get("roots", []))
    node = None
    while stack and node is None:
        item = stack.pop()
        if wanted in (str(item.get("id", "")).casefold(), str(item.get("slug") or "").casefold(),
                      str(item.get("title", "")).casefold()):
            node = item
        stack.extend(item.get("children", []))
    if node is None:
        raise NotFound(f"no outline node {name!r} (name one by its title, id or overview slug)",
                       field="outline_node")
    subjects, stack = [], [node]
    while stack:
        item = stack.pop()
        subjects += item.get("subjects", [])
        stack.extend(item.get("children", []))
    documents: set[str] = set()
    for entity in await store.get(Entity, sorted(set(subjects))):
        documents.update(entity.document_ids)  # type: ignore[attr-defined]
    return sorted(documents)
