"""Read routes the web UI needs beside the core API: a page's related pages, history and last diff."""

from __future__ import annotations

import difflib
from typing import Any

from fastapi import APIRouter, Request

from ..compiler.jobs import FINISHED as JOB_FINISHED
from ..errors import NotFound
from ..storage.base import Store
from ..storage.records import Job, Page, PageVersion, Relation
from ..tenancy import kb_records, system_store
from .auth import KB, store_of
from .entities import page_slugs
from .errors import COMMON, errors
from .schemas import DiffOut, HistoryOut, RelatedOut

router = APIRouter(prefix="/knowledge-bases/{kb}/pages/{slug}", tags=["pages"],
                   responses={**COMMON, **errors(404)})

RELATED_LIMIT = 25
FINISHED = list(JOB_FINISHED)


async def _page(store: Store, slug: str) -> Page:
    found = await store.get(Page, [slug])
    if not found:
        raise NotFound(f"no page {slug!r}", field="slug")
    return found[0]  # type: ignore[return-value]


@router.get("/related", response_model=RelatedOut)
async def related(kb: KB, slug: str, request: Request) -> dict[str, Any]:
    """Pages this one links to, pages linking here, and pages of entities related to its subject
    (strongest relations first)."""
    store = kb_records(store_of(request), kb)
    page = await _page(store, slug)
    found: dict[str, str] = {}  # slug -> why it is related, first reason wins

    for target in page.outlinks:
        found.setdefault(target, "linked from this page")
    async for other in store.scan(Page, {"status": "active"}):
        if slug in other.outlinks:  # type: ignore[attr-defined]
            found.setdefault(other.id, "links here")
    if page.subject_id:
        relations = [r async for r in store.scan(Relation, {"source": page.subject_id})]
        relations += [r async for r in store.scan(Relation, {"target": page.subject_id})]
        relations.sort(key=lambda r: -r.strength)  # type: ignore[attr-defined]
        ends = {(r.target if r.source == page.subject_id else r.source): r.type for r in relations}  # type: ignore[attr-defined]
        slugs = await page_slugs(store, list(ends))
        for entity_id, relation_type in ends.items():
            if entity_id in slugs:
                found.setdefault(slugs[entity_id], f"related ({relation_type})" if relation_type else "related")
    found.pop(slug, None)
    chosen = list(found)[: RELATED_LIMIT * 2]
    pages = {p.id: p for p in await store.get(Page, chosen) if p.status == "active"}  # type: ignore[attr-defined]
    items = [
        {"slug": s, "title": pages[s].title, "kind": pages[s].kind, "via": found[s]}  # type: ignore[attr-defined]
        for s in chosen if s in pages
    ]
    return {"items": items[:RELATED_LIMIT]}


async def _versions(store: Store, page: Page) -> list[dict[str, Any]]:
    """The page's kept versions, oldest first (written by every compile and edit that changed it)."""
    versions = sorted(
        [v async for v in store.scan(PageVersion, {"slug": page.slug})],
        key=lambda v: v.version,  # type: ignore[attr-defined]
    )
    return [
        {"version": v.version, "title": v.title, "markdown": v.markdown, "edited": v.edited, "at": v.at}  # type: ignore[attr-defined]
        for v in versions
    ]


@router.get("/history", response_model=HistoryOut)
async def history(kb: KB, slug: str, request: Request) -> dict[str, Any]:
    """The compiles that created or changed the page, and the versions kept for diffs."""
    store = kb_records(store_of(request), kb)
    page = await _page(store, slug)
    versions = await _versions(store, page)
    items: list[dict[str, Any]] = []
    jobs = system_store(store_of(request)).scan(
        Job, {"tenant": kb.tenant, "knowledge_base": kb.name, "status": FINISHED}
    )
    async for job in jobs:
        for change in (job.report or {}).get("changes", []):  # type: ignore[attr-defined]
            if change.get("slug") == slug:
                items.append({"action": f"compile: {change.get('action', 'changed')}",
                              "reason": change.get("reason", ""), "at": job.finished_at,  # type: ignore[attr-defined]
                              "job_id": job.id, "template": job.template})  # type: ignore[attr-defined]
    for v in versions:
        if v["edited"]:
            items.append({"action": "edited by a person", "reason": "", "at": v["at"],
                          "version": v["version"]})
    items.sort(key=lambda i: i["at"], reverse=True)
    return {"items": items, "version": page.version, "diff_available": len(versions) > 1}


@router.get("/diff", response_model=DiffOut)
async def diff(kb: KB, slug: str, request: Request) -> dict[str, Any]:
    """The last change of the page as a unified diff of its Markdown (previous kept version to now)."""
    store = kb_records(store_of(request), kb)
    page = await _page(store, slug)
    versions = await _versions(store, page)
    if len(versions) < 2:
        raise NotFound(f"no earlier version of {slug!r} is kept", field="slug")
    before, after = versions[-2], versions[-1]
    lines = difflib.unified_diff(
        before["markdown"].splitlines(), after["markdown"].splitlines(),
        fromfile=f"v{before['version']}", tofile=f"v{after['version']}", lineterm="", n=2,
    )
    by = "a person's edit" if after["edited"] else "a compile"
    return {"from_version": before["version"], "to_version": after["version"], "by": by,
            "lines": list(lines)}
