"""The stored listing of a knowledge base's documents, as the last finished ingest left it.

Each document's content hash, template, title and table of contents, under that run's folder
fingerprint: the next ingest compares the folder with it instead of reading every Document,
and the outline reads the documents' structure from it.
"""

from __future__ import annotations

from typing import Any

from .base import Store
from .records import CacheEntry

LISTING_KEY = "ingest:stored-documents"  # path -> [hash, template, title, toc, document id, up, links]
LISTING_VERSION = 3  # bump when a listed document's fields change (2: its link up; 3: the links it lists)


def listing_of(value: Any, folder: str | None) -> bool:
    """Whether a stored listing is of this version and describes the folder `folder`."""
    return isinstance(value, dict) and value.get("version") == LISTING_VERSION and value.get("folder") == folder


def listed_document(content_hash: str, template: str, title: str, metadata: dict[str, Any], doc_id: str) -> list[Any]:
    return [content_hash, template, title, metadata.get("toc") or [], doc_id, metadata.get("up"),
            metadata.get("links") or []]


async def stored_documents(store: Store, folder: str | None) -> list[tuple[str, str, str, dict[str, Any]]] | None:
    """(id, path, title, {"toc": ..., "up": ..., "links": ...}) of every stored document, by id, as the ingest that ended
    with folder fingerprint `folder` listed them; None when the listing is not that one."""
    found = await store.get(CacheEntry, [LISTING_KEY]) if folder is not None else []
    if not found or not listing_of(found[0].value, folder):  # type: ignore[attr-defined]
        return None
    rows = [(v[4], path, v[2], {"toc": v[3], "up": v[5], "links": v[6]}) for path, v in found[0].value["documents"].items()]  # type: ignore[attr-defined]
    return sorted(rows)
