"""The knowledge base's outline: the topic tree over its pages, as exports publish it."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request

from ..compiler.orchestrator import last_compile
from ..export.outline_view import listed_slugs, site_outline
from ..export.snapshot import load_snapshot
from ..fingerprint import fingerprint
from ..outline.stored import published, stored_outline
from ..storage.base import Store
from ..storage.records import CacheEntry, Page
from ..tenancy import kb_records
from .auth import KB, store_of
from .errors import COMMON, errors
from .schemas import OutlineReply

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["outline"], responses={**COMMON, **errors(404)})

BUILT_KEY = "outline:built"  # an outline built from the pages when no compile stored one


async def outline_tree(store: Store) -> dict[str, Any]:
    """The published tree: the stored outline when it lists every page, else one built from the
    snapshot, kept until the next compile."""
    active = {p.slug async for p in store.scan(Page, {"status": "active"})}  # type: ignore[attr-defined,misc]
    stored = await stored_outline(store)
    if stored:
        tree = published(stored, active)
        listed = listed_slugs(tree)
        if listed >= active:
            return tree
    last = await last_compile(store) or {}
    key = fingerprint(last.get("started_at"), last.get("finished_at"), sorted(active))
    cached = await store.get(CacheEntry, [BUILT_KEY])
    if cached and (cached[0].value or {}).get("key") == key:  # type: ignore[attr-defined]
        return cached[0].value["tree"]  # type: ignore[attr-defined]
    tree = site_outline(await load_snapshot(store))
    await store.upsert([CacheEntry(id=BUILT_KEY, namespace="outline", created_at=time.time(),
                                   value={"key": key, "tree": tree})])
    return tree


@router.get("/outline", response_model=OutlineReply)
async def outline(kb: KB, request: Request) -> dict:
    """The topic tree (`outline`): root topics, their subtopics and pages. Each node is {title,
    slug (its overview page, or null), pages (slugs), children (nodes)}; the root is "Contents".
    `titles` names every page the tree lists."""
    store = kb_records(store_of(request), kb)
    tree = await outline_tree(store)
    titles = {p.slug: p.title or p.slug async for p in store.scan(Page, {"status": "active"})}  # type: ignore[attr-defined,misc]
    return {"outline": tree, "titles": titles}
