"""The ingest phase: find documents, re-read only the changed ones, store their chunks.

The folder is read by document_files.py, documents are written by document_writes.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ..errors import InputError, NotFound
from ..fingerprint import fingerprint
from ..ingest.bounded_reading import POOL_SIZE, READERS, ReadLimits
from ..ingest.chunking import chunk_document
from ..ingest.document_files import document_id, find_documents, hash_files, plan_ingest
from ..ingest.readers import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_SECONDS,
    READER_VERSION,
    ParsedDocument,
)
from ..pipeline.context import CompileContext, PhaseResult
from ..pipeline.events import PhaseProgress
from ..pipeline.stages import clear_stage, mark_stage, set_rollup, stage_mark
from ..storage.base import Store
from ..storage.document_listing import (
    LISTING_KEY,
    LISTING_VERSION,
    listed_document,
    listing_of,
)
from ..storage.records import CacheEntry, Chunk, Document
from ..templates.schema import Template
from .document_writes import DocumentGroup, delete_document

PHASE = "ingest"
__all__ = ["run"]
READ_TOGETHER = 32  # small files read in one thread call, at most this many
READ_TOGETHER_BYTES = 256 * 1024  # and at most this many bytes together; a larger file alone
# Remembers the chunking settings the stored chunks were cut with: when they change, every
# document is chunked again (chunks whose text is unchanged keep their ids).
_CHUNKING_KEY = "ingest:chunking"
# Each file's size, modification time and content hash when last hashed: an untouched file is
# not read again to learn that it did not change.
_STAT_KEY = "ingest:files"
MAX_FAILED_LISTED = 500  # documents named in a report as unreadable; the count is always whole


def _progress(ctx: CompileContext, done: int, total: int) -> None:
    # Ingest spends no LLM tokens, so it reports without asking the engine's meter.
    ctx.events.emit(PhaseProgress(PHASE, done, total, 0))


async def run(
    template: Template,
    ctx: CompileContext,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_seconds: float = DEFAULT_MAX_SECONDS,
) -> PhaseResult:
    """Bring the store's Documents and Chunks in line with the documents folder."""
    started = time.perf_counter()
    root = ctx.documents_dir
    if root is None or not await asyncio.to_thread(root.is_dir):
        raise InputError(f"documents folder {root} does not exist", hint="create it or set the workspace")
    store = ctx.store
    outside: list[str] = []
    files = await asyncio.to_thread(find_documents, root, outside)
    for message in outside:
        ctx.warn(message)
    known = await store.get(CacheEntry, [_STAT_KEY])
    found, sizes, unreadable, seen = await asyncio.to_thread(
        hash_files, files, dict(known[0].value or {}) if known else None,  # type: ignore[attr-defined]
    )
    if not known or known[0].value != seen:  # type: ignore[attr-defined]
        await store.upsert([CacheEntry(id=_STAT_KEY, namespace=PHASE, value=seen, created_at=time.time())])
    for message in unreadable.values():
        ctx.warn(message)

    chunking = f"{template.phase_fingerprint(PHASE)}:{READER_VERSION}"
    # The folder as this phase sees it: when it matches the last finished run (and the store
    # still holds what that run left), nothing is read from the store.
    folder = fingerprint(chunking, sorted(found.items()), sorted(unreadable),
                         [ctx.document_template(rel) for rel in sorted(found)] if ctx.groups else [])
    counts = {"documents": await store.count(Document), "chunks": await store.count(Chunk)}
    mark = await stage_mark(store, PHASE)
    if mark.get("fingerprint") == folder and all(mark.get(k) == v for k, v in counts.items()):
        ctx.state[PHASE] = {"changed_documents": [], "deleted_documents": [], "removed_chunks": []}
        set_rollup(ctx.state, PHASE, folder)
        return PhaseResult(
            items=len(files) + len(outside), skipped=len(found), failed=len(unreadable) + len(outside),
            details={**counts, "new_documents": 0, "changed_documents": 0, "deleted_documents": 0,
                     "new_chunks": 0, "failed_documents": dict(sorted(unreadable.items())[:MAX_FAILED_LISTED]),
                     "removed_chunks": 0},
            seconds=time.perf_counter() - started,
        )
    # The store holds exactly what the last finished run left: the changes below are all that
    # differs from that folder, and MAP may look at them alone.
    previous = mark.get("fingerprint") if mark and all(mark.get(k) == v for k, v in counts.items()) else None
    if mark:
        await clear_stage(store, PHASE)

    # What the store holds per document: as the last finished run left it (one read), else from
    # the documents themselves.
    listed = await store.get(CacheEntry, [LISTING_KEY]) if previous is not None else []
    listing: dict[str, list[Any]]
    if listed and listing_of(listed[0].value, previous):  # type: ignore[attr-defined]
        listing = dict(listed[0].value["documents"])  # type: ignore[attr-defined]
    else:
        listing = {d.path: listed_document(d.content_hash, d.template, d.title, d.metadata, d.id)  # type: ignore[attr-defined]
                   async for d in store.scan(Document)}
    if await _stored_chunking(store) != chunking:
        stored_hashes = {p: "" for p in listing}  # re-chunk everything
    else:
        stored_hashes = {p: v[0] for p, v in listing.items()}
    # A file that exists but cannot be read is neither new nor deleted: keep what is stored.
    for rel in unreadable:
        if rel in listing:
            found[rel] = stored_hashes[rel]
    plan = plan_ingest(found, stored_hashes)
    plan.unchanged = [p for p in plan.unchanged if p not in unreadable]
    # The stored documents this run rewrites, regroups or deletes: the others are not read.
    regroup = [p for p in plan.unchanged if listing[p][1] != ctx.document_template(p)]
    touched = [p for p in [*plan.to_read, *plan.deleted, *regroup] if p in listing]
    stored_docs: dict[str, Document] = {
        d.path: d for d in await store.get(Document, [document_id(p) for p in touched])  # type: ignore[attr-defined, misc]
    }

    total = len(plan.to_read) + len(plan.deleted)
    _progress(ctx, 0, total)
    changed_ids: list[str] = []
    removed_chunks: list[str] = []
    new_chunks = 0
    failed = len(unreadable) + len(outside)
    read_failures = 0  # a document that failed to read is read again next run
    done = 0
    group = DocumentGroup(store)
    written: dict[str, list[Any]] = {}  # path -> what the listing says of it now
    reading = [(rel, files[rel], sizes[rel]) for rel in plan.to_read]
    # Closed here, not by the collector: its pending reads are cancelled when a write fails.
    async with contextlib.aclosing(_read_all(reading, root, max_bytes, max_seconds)) as outcomes:
        async for rel, parsed in outcomes:
            if isinstance(parsed, InputError):
                ctx.warn(f"skipped {rel}: {parsed}")
                unreadable[rel] = str(parsed)
                failed += 1
                read_failures += 1
            else:
                for warning in parsed.warnings:
                    ctx.warn(warning)
                doc_id = document_id(rel)
                spans = chunk_document(
                    parsed,
                    max_tokens=template.chunking.max_tokens,
                    overlap_tokens=template.chunking.overlap_tokens,
                    document_id=doc_id,
                )
                added, removed = await group.add(
                    rel, doc_id, parsed, spans, found[rel], sizes[rel], stored_docs.get(rel), ctx.document_template(rel),
                )
                written[rel] = listed_document(found[rel], ctx.document_template(rel), parsed.title, parsed.metadata, doc_id)
                changed_ids.append(doc_id)
                removed_chunks.extend(removed)
                new_chunks += added
            done += 1
            _progress(ctx, done, total)
    await group.flush()

    # Unchanged documents follow edits of the template groups without being read again.
    regrouped = []
    for rel in regroup:
        doc = stored_docs[rel]
        doc.template = ctx.document_template(rel)
        regrouped.append(doc)
    if regrouped:
        await store.upsert(regrouped)

    deleted_ids = []
    deleted_chunks: list[str] = []  # of documents that are gone: their text must go with them
    for rel in plan.deleted:
        doc = stored_docs[rel]
        deleted_chunks.extend(await delete_document(store, doc.id))
        deleted_ids.append(doc.id)
        done += 1
        _progress(ctx, done, total)
    removed_chunks.extend(deleted_chunks)
    await store.upsert(
        [CacheEntry(id=_CHUNKING_KEY, namespace=PHASE, value={"fingerprint": chunking}, created_at=time.time())]
    )

    counts = {"documents": await store.count(Document), "chunks": await store.count(Chunk)}
    if not read_failures:
        for rel in plan.deleted:
            listing.pop(rel, None)
        listing.update(written)
        for doc in regrouped:
            listing[doc.path] = [listing[doc.path][0], doc.template, *listing[doc.path][2:]]
        async with store.transaction():
            await store.upsert([CacheEntry(id=LISTING_KEY, namespace=PHASE, created_at=time.time(),
                                           value={"folder": folder, "version": LISTING_VERSION,
                                                  "documents": listing})])
            await mark_stage(store, PHASE, folder, **counts)
    set_rollup(ctx.state, PHASE, None if read_failures else folder)
    ctx.state[PHASE] = {
        "changed_documents": changed_ids,
        "deleted_documents": deleted_ids,
        "removed_chunks": removed_chunks,
        "deleted_chunks": deleted_chunks,
        "regrouped_documents": [d.id for d in regrouped],
        "previous": None if read_failures else previous,  # the folder fingerprint this run started from
    }
    return PhaseResult(
        items=len(files) + len(outside),
        done=len(changed_ids),
        skipped=len(plan.unchanged),
        failed=failed,
        details={
            **counts,
            "new_documents": sum(p in written for p in plan.new),
            "changed_documents": sum(p in written for p in plan.changed),
            "deleted_documents": len(deleted_ids),
            "new_chunks": new_chunks,
            # Which documents this compile could not read, and why (the UI lists them as failed).
            "failed_documents": dict(sorted(unreadable.items())[:MAX_FAILED_LISTED]),
            "removed_chunks": len(removed_chunks),
        },
        seconds=time.perf_counter() - started,
    )


async def _read_all(
    documents: list[tuple[str, Path, int]], root: Path, max_bytes: int, max_seconds: float
) -> AsyncIterator[tuple[str, ParsedDocument | InputError]]:
    """(relative path, document or why it cannot be read) of each (path, file, size), in order.

    Read in bounded child processes (bounded_reading.py), small files several to a request (a
    round trip cost a third of reading a short one), as many requests at once as there are
    children, so that chunking one batch overlaps reading the next."""
    batches: list[list[tuple[str, Path]]] = [[]]
    size = 0
    for rel, path, bytes_ in documents:
        if batches[-1] and (len(batches[-1]) >= READ_TOGETHER or size + bytes_ > READ_TOGETHER_BYTES):
            batches.append([])
            size = 0
        batches[-1].append((rel, path))
        size += bytes_
    batches = [b for b in batches if b]
    pending: list[asyncio.Task[list[tuple[str, ParsedDocument | InputError]]]] = []
    try:
        for batch in batches:
            pending.append(asyncio.ensure_future(_read_together(batch, root, max_bytes, max_seconds)))
            if len(pending) > POOL_SIZE:
                for outcome in await pending.pop(0):
                    yield outcome
        while pending:
            for outcome in await pending.pop(0):
                yield outcome
    finally:
        for task in pending:
            task.cancel()


async def _read_together(
    batch: list[tuple[str, Path]], root: Path, max_bytes: int, max_seconds: float
) -> list[tuple[str, ParsedDocument | InputError]]:
    """Read files one after the other in one child process, which is killed past a file's time
    bound (a library stuck in one call, or a named pipe that never opens): that file fails on
    the bound and the files after it are read by another child."""
    limits = ReadLimits(max_bytes=max_bytes, max_seconds=max_seconds)
    return await asyncio.to_thread(READERS.read, batch, root, limits)


async def _stored_chunking(store: Store) -> str | None:
    try:
        entry = await store.get_one(CacheEntry, _CHUNKING_KEY)
    except NotFound:
        return None
    return (entry.value or {}).get("fingerprint")  # type: ignore[union-attr]


