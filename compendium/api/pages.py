"""Pages of a knowledge base: list, read as Markdown or sanitised HTML, edit by a person,
compare any two kept versions and revert to one; and the source passages (chunks) their
citations point at."""

from __future__ import annotations

import difflib
import re
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse

from ..errors import NotFound
from ..export.markdown_html import render_markdown
from ..storage.records import Chunk, Document, Page, PageVersion
from ..tenancy import kb_records
from .auth import KB, store_of
from .errors import COMMON, errors
from .pagination import Paged, PageParams, page_of_scan
from .schemas import ChunkOut, PageEdit, PageOut, PageRevert, PageSummary

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["pages"], responses={**COMMON, **errors(404)})

_WIKILINK = re.compile(r"\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|[^\]\n]*)?\]\]")


def page_out(page: Page) -> dict[str, Any]:
    data = page.to_dict()
    data.pop("embedding", None)
    return data


async def _page(request: Request, kb: Any, slug: str) -> Page:
    found = await kb_records(store_of(request), kb).get(Page, [slug])
    if not found:
        raise NotFound(f"no page {slug!r}", field="slug")
    return found[0]  # type: ignore[return-value]


@router.get("/pages", response_model=Paged[PageSummary])
async def list_pages(
    kb: KB, request: Request, page: Annotated[PageParams, Depends()],
    kind: Annotated[str | None, Query(description="entity | concept | topic")] = None,
    status: Annotated[str, Query(description="active | deleted")] = "active",
    edited: bool | None = None,
) -> dict:
    where: dict[str, Any] = {"status": status}
    if kind:
        where["kind"] = kind
    scan = kb_records(store_of(request), kb).scan(Page, where)
    keep = None if edited is None else (lambda p: p.edited == edited)
    return await page_of_scan(scan, page, keep=keep, render=page_out)


@router.get("/pages/{slug}", response_model=PageOut)
async def read_page(kb: KB, slug: str, request: Request) -> dict:
    return page_out(await _page(request, kb, slug))


class MarkdownResponse(PlainTextResponse):
    media_type = "text/markdown"


@router.get("/pages/{slug}/markdown", response_class=MarkdownResponse)
async def read_markdown(kb: KB, slug: str, request: Request) -> MarkdownResponse:
    page = await _page(request, kb, slug)
    return MarkdownResponse(page.markdown)


@router.get("/pages/{slug}/html", response_class=HTMLResponse)
async def read_html(kb: KB, slug: str, request: Request) -> HTMLResponse:
    """The page body as sanitised HTML; [[links]] to live pages point at their HTML."""
    page = await _page(request, kb, slug)
    wanted = {m.group(1).strip() for m in _WIKILINK.finditer(page.markdown)} | set(page.outlinks)
    scoped = kb_records(store_of(request), kb)
    live = {p.id: p for p in await scoped.get(Page, sorted(wanted)) if p.status == "active"}  # type: ignore[attr-defined]

    def resolve(target: str) -> tuple[str, str] | None:
        found = live.get(target)
        return (f"../{found.id}/html", found.title) if found else None  # type: ignore[attr-defined]

    return HTMLResponse(render_markdown(page.markdown, resolve))


@router.put("/pages/{slug}", response_model=PageOut)
async def edit_page(kb: KB, slug: str, body: PageEdit, request: Request) -> dict:
    """A person's edit: kept as written and marked edited, so compiles never overwrite it
    (they flag it pending_update instead when its evidence changes)."""
    scoped = kb_records(store_of(request), kb)
    async with scoped.transaction():
        page = await _page(request, kb, slug)
        if body.markdown == page.markdown and (not body.title or body.title == page.title):
            return page_out(page)  # nothing changed: no new version, no empty diff
        await _save_edit(scoped, page, body.markdown, body.title or page.title)
    return page_out(page)


async def _save_edit(scoped: Any, page: Page, markdown: str, title: str) -> None:
    page.markdown, page.title = markdown, title
    page.outlinks = sorted({m.group(1).strip() for m in _WIKILINK.finditer(markdown)})
    page.edited, page.pending_update = True, False
    page.version += 1
    page.updated_at = time.time()
    await scoped.upsert([page, PageVersion.of(page)])


async def _version(scoped: Any, slug: str, version: int) -> PageVersion:
    found = await scoped.get(PageVersion, [f"{slug}@{version}"])
    if not found:
        raise NotFound(f"page {slug!r} has no kept version {version}", field="version")
    return found[0]  # type: ignore[no-any-return]


@router.get("/pages/{slug}/versions")
async def list_versions(kb: KB, slug: str, request: Request) -> dict:
    """Every kept version of the page, newest first (without their text); `same_as` names the
    earlier version a later one brings back word for word (a revert)."""
    scoped = kb_records(store_of(request), kb)
    page = await _page(request, kb, slug)
    versions = sorted([v async for v in scoped.scan(PageVersion, {"slug": page.slug})],
                      key=lambda v: v.version)  # type: ignore[attr-defined]
    first_with: dict[tuple[str, str], int] = {}  # (title, text) -> the first version holding it
    items = []
    for v in versions:
        key = (v.title, v.markdown)  # type: ignore[attr-defined]
        earlier = first_with.setdefault(key, v.version)  # type: ignore[attr-defined]
        items.append({"version": v.version, "title": v.title, "edited": v.edited, "at": v.at,  # type: ignore[attr-defined]
                      "current": v.version == page.version,  # type: ignore[attr-defined]
                      "same_as": earlier if earlier != v.version else None})  # type: ignore[attr-defined]
    return {"version": page.version, "items": items[::-1]}


@router.get("/pages/{slug}/compare")
async def compare_versions(
    kb: KB, slug: str, request: Request,
    from_: Annotated[int, Query(alias="from", ge=1, description="the older version")],
    to: Annotated[int, Query(ge=1, description="the newer version")],
) -> dict:
    """A unified diff of the page's Markdown (and title) between two kept versions."""
    scoped = kb_records(store_of(request), kb)
    await _page(request, kb, slug)
    before, after = await _version(scoped, slug, from_), await _version(scoped, slug, to)
    lines = list(difflib.unified_diff(
        before.markdown.splitlines(), after.markdown.splitlines(),
        fromfile=f"v{before.version}", tofile=f"v{after.version}", lineterm="", n=2))
    return {"from_version": before.version, "to_version": after.version,
            "from_title": before.title, "to_title": after.title, "lines": lines,
            "same": not lines and before.title == after.title}


@router.post("/pages/{slug}/revert", response_model=PageOut)
async def revert_page(kb: KB, slug: str, body: PageRevert, request: Request) -> dict:
    """Bring back an earlier version's title and text as a new version, kept as a person's
    edit (history keeps every version, the reverted-from one too)."""
    scoped = kb_records(store_of(request), kb)
    async with scoped.transaction():
        page = await _page(request, kb, slug)
        old = await _version(scoped, slug, body.version)
        if old.markdown != page.markdown or old.title != page.title:
            await _save_edit(scoped, page, old.markdown, old.title)
    return page_out(page)


@router.get("/chunks/{chunk_id}", response_model=ChunkOut)
async def read_chunk(kb: KB, chunk_id: str, request: Request) -> dict:
    """A source passage: its text, heading path and the document it comes from."""
    scoped = kb_records(store_of(request), kb)
    found = await scoped.get(Chunk, [chunk_id])
    if not found:
        raise NotFound(f"no chunk {chunk_id!r}", field="chunk_id")
    chunk: Chunk = found[0]  # type: ignore[assignment]
    docs = await scoped.get(Document, [chunk.document_id])
    return {"id": chunk.id, "text": chunk.text, "heading_path": chunk.heading_path,
            "start": chunk.start, "end": chunk.end, "document_id": chunk.document_id,
            "document": docs[0].path if docs else None}  # type: ignore[attr-defined]
