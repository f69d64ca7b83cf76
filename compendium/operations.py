"""The library functions behind each CLI command and API call: one function per user action."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from .compiler.exclusive import compile_exclusively, running_compiles
from .compiler.orchestrator import last_compile
from .compiler.report import CompileReport
from .engines.usage import UsageMeter
from .pipeline.context import CompileContext, group_templates
from .pipeline.events import EventSink, Message, NullSink
from .settings import Settings
from .storage.base import Store
from .storage.records import Chunk, Claim, Document, Entity, Page, Relation, Topic
from .tempfiles import DOCUMENTS, sweep
from .templates.schema import Template
from .workspace import DOCUMENTS_DIR
from .workspace_store import opened_store, store_url  # noqa: F401 (callers import them from here too)


def resolve_template(settings: Settings, name: str | None) -> Template:
    from .templates.registry import load_template

    return load_template(name or settings.default_template, workspace=settings.workspace)


async def compile_workspace(
    settings: Settings,
    *,
    template_name: str | None = None,
    events: EventSink | None = None,
    store: Store | None = None,
    wait: bool = False,
    retry_failed: bool = False,
) -> CompileReport:
    """Compile the workspace's documents with a template; returns the report (also stored).

    One compile of a knowledge base and template runs at a time: while another holds the lease
    this raises Busy naming it, or with `wait` waits for it to end."""
    from .distributed import distribute
    from .engines.factory import build_embedder, build_engine
    from .storage.response_cache import StoreResponseCache

    template = resolve_template(settings, template_name)
    documents_dir = settings.workspace / DOCUMENTS_DIR if settings.workspace else None
    if documents_dir is not None:
        sweep(documents_dir, earlier=DOCUMENTS)  # what a killed add left half-copied
    async with contextlib.AsyncExitStack() as stack:
        if store is None:
            store = await stack.enter_async_context(opened_store(settings))
        usage = UsageMeter(settings.token_budget)
        cache = StoreResponseCache(store)
        engine = build_engine(settings, template, usage=usage, cache=cache)
        stack.push_async_callback(engine.close)
        embedder = build_embedder(settings, template, usage=usage, cache=cache)
        stack.push_async_callback(embedder.close)
        if events is not None and engine.name == "offline":
            events.emit(Message("info", "no LLM endpoint configured: using the offline engine"))
        ctx = CompileContext(
            store=store,
            engine=engine,
            embedder=embedder,
            template=template,
            events=events or NullSink(),
            documents_dir=documents_dir,
        )
        if retry_failed:
            from .phases.page_failures import RETRY_FAILED

            ctx.state[RETRY_FAILED] = True  # pages backed off after failing are asked again
        _apply_groups(ctx, settings)
        async with distribute(ctx, settings):  # with a broker configured: its calls run on workers
            return await compile_exclusively(store, ctx, knowledge_base=settings.knowledge_base, wait=wait)
    raise AssertionError("unreachable")  # pragma: no cover


def _apply_groups(ctx: CompileContext, settings: Settings) -> None:
    """Template groups of compendium.yaml: documents they match are extracted with their template."""
    from .settings import load_groups

    if settings.workspace is not None:
        ctx.groups = load_groups(settings.workspace)
        ctx.templates = {name: resolve_template(settings, name) for name in group_templates(ctx)}


async def knowledge_base_summary(store: Store) -> dict[str, Any]:
    """What a knowledge base's scope holds and how its last compile ended (CLI or server)."""
    counts = {
        "documents": await store.count(Document),
        "chunks": await store.count(Chunk),
        "entities": await store.count(Entity, {"category": "entity"}),
        "concepts": await store.count(Entity, {"category": "concept"}),
        "relations": await store.count(Relation),
        "claims": await store.count(Claim),
        "topics": await store.count(Topic),
        "pages": await store.count(Page, {"status": "active"}),
    }
    last = await last_compile(store)
    return {
        "counts": counts,
        "last_compile": None
        if last is None
        else {k: last.get(k) for k in ("template", "status", "pages", "finished_at", "error")},
        "failed": {} if last is None else failed_items(last),
    }


def failed_items(report: dict[str, Any]) -> dict[str, Any]:
    """What a compile report says failed for good, with the reason where it has one: documents
    that could not be read, chunks MAP could not extract (a count), pages REFINE could not write."""
    phases = report.get("phases") or {}
    out: dict[str, Any] = {}
    if documents := (phases.get("ingest") or {}).get("failed_documents"):
        out["documents"] = dict(documents)
    if chunks := (phases.get("map") or {}).get("failed"):
        out["chunks"] = chunks
    if pages := (phases.get("refine") or {}).get("failed_pages"):
        out["pages"] = dict(pages)
    return out


async def workspace_status(settings: Settings) -> dict[str, Any]:
    async with opened_store(settings) as store:
        summary = await knowledge_base_summary(store)
        running = await running_compiles(store, settings.knowledge_base)
        return {
            "workspace": str(settings.workspace) if settings.workspace else None,
            "knowledge_base": settings.knowledge_base,
            "engine": "offline" if settings.offline else f"llm ({settings.llm.model} at {settings.llm.base_url})",
            "store": await store.info(),
            **summary,
            "running_compiles": running,
        }


async def compile_changes(settings: Settings) -> dict[str, Any] | None:
    async with opened_store(settings) as store:
        return await last_compile(store)


async def export_workspace(settings: Settings, fmt: str, out: Path) -> Any:
    from .export import export

    async with opened_store(settings) as store:
        # A title the settings give (title:, or a knowledge base's own name); else the manual's own.
        given = settings.title or (settings.knowledge_base if settings.knowledge_base != "default" else "")
        return await export(store, fmt, out, title=given or None)


async def remove_documents(settings: Settings, paths: list[Path]) -> list[str]:
    """Delete documents from the workspace; the next compile purges what derived only from them."""
    from .workspace import remove_document_file

    assert settings.workspace is not None
    return [str(remove_document_file(settings.workspace, p)) for p in paths]


async def copy_between_stores(source_url: str, target_url: str, *, kb: str | None = None) -> dict[str, int]:
    """Copy a store's records (every knowledge base, or one) into another store, e.g. from the
    embedded SQLite file to a shared MariaDB/TiDB/Elasticsearch, without recompiling."""
    from .storage.copy import copy_store
    from .storage.factory import open_store

    source = await open_store(source_url)
    try:
        target = await open_store(target_url)
        try:
            return await copy_store(source, target, kb=kb)
        finally:
            await target.close()
    finally:
        await source.close()
