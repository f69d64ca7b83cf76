"""Pages of a knowledge base: list, read as Markdown or sanitised HTML, edit by a person;
and the source passages (chunks) their citations point at."""

from __future__ import annotations

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
from .pagination import Paged, PageParams, page_of_scan
from .schemas import PageEdit, PageOut, PageSummary

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["pages"])

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


@router.get("/pages/{slug}/markdown", response_class=PlainTextResponse)
async def read_markdown(kb: KB, slug: str, request: Request) -> PlainTextResponse:
    page = await _page(request, kb, slug)
    return PlainTextResponse(page.markdown, media_type="text/markdown; charset=utf-8")


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
        page.markdown = body.markdown
        if body.title:
            page.title = body.title
        page.outlinks = sorted({m.group(1).strip() for m in _WIKILINK.finditer(body.markdown)})
        page.edited, page.pending_update = True, False
        page.version += 1
        page.updated_at = time.time()
        await scoped.upsert([page, PageVersion.of(page)])
    return page_out(page)


@router.get("/chunks/{chunk_id}")
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
