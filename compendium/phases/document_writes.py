"""Documents and their chunks as ingest writes them: a group of documents per transaction, and
a document deleted together with its chunks."""

from __future__ import annotations

import time
from pathlib import Path, PurePath

from ..ingest.chunking import ChunkSpan
from ..ingest.document_files import relative_path
from ..ingest.readers import ParsedDocument
from ..storage.base import Store
from ..storage.records import Chunk, Document

# Documents per write transaction: a commit per document cost ~1 ms, and one per 32 documents
# still 12% of ingesting small files (with their chunks' full-text index). A crash loses at
# most one group, which costs reading those files again.
GROUP_DOCUMENTS = 256
GROUP_BYTES = 32 * 1024 * 1024  # or fewer, when their files are larger than this together
GROUP_SECONDS = 1.0  # or when reading them takes longer than this


class DocumentGroup:
    """Documents written a group at a time: one transaction per GROUP_DOCUMENTS documents (or
    GROUP_BYTES, or GROUP_SECONDS), each document landing whole with its chunks. A crash loses
    at most the group, which costs a re-read of those files and no LLM call."""

    def __init__(self, store: Store):
        self.store = store
        self.records: list[Document | Chunk] = []
        self.removed: list[str] = []
        self.documents = 0
        self.bytes = 0
        self.started = 0.0

    async def add(
        self,
        rel: str,
        doc_id: str,
        parsed: ParsedDocument,
        spans: list[ChunkSpan],
        content_hash: str,
        size: int,
        previous: Document | None,
        assigned_template: str,
    ) -> tuple[int, list[str]]:
        """Queue one document and its chunks; returns (chunks added, chunk ids removed)."""
        # A document never stored before has no chunks: its id is derived from its path.
        old_ids = {c.id async for c in self.store.scan(Chunk, {"document_id": doc_id})} if previous else set()
        new_ids = [s.id for s in spans]
        removed = sorted(old_ids - set(new_ids))
        document = Document(
            id=doc_id,
            path=rel,
            title=parsed.title,
            content_hash=content_hash,
            format=parsed.format,
            size=size,
            metadata=parsed.metadata,
            template=assigned_template,
            chunk_ids=new_ids,
            updated_at=time.time(),
        )
        if not self.documents:
            self.started = time.monotonic()
        self.records.append(document)
        self.records.extend(
            Chunk(
                id=s.id,
                document_id=doc_id,
                ordinal=s.ordinal,
                text=s.text,
                heading_path=list(s.heading_path),
                start=s.start,
                end=s.end,
                tokens=s.tokens,
                content_hash=s.content_hash,
                blocks=[list(b) for b in s.blocks],
                examples=[list(e) for e in s.examples],
                follows_code=s.follows_code,
            )
            for s in spans
        )
        self.removed.extend(removed)
        self.documents += 1
        self.bytes += size
        if (self.documents >= GROUP_DOCUMENTS or self.bytes >= GROUP_BYTES
                or time.monotonic() - self.started >= GROUP_SECONDS):
            await self.flush()
        return len(set(new_ids) - old_ids), removed

    async def flush(self) -> None:
        if not self.documents:
            return
        async with self.store.transaction():
            if self.removed:
                await self.store.delete(Chunk, {"id": self.removed})
            await self.store.upsert(self.records)
        self.records, self.removed, self.documents, self.bytes = [], [], 0, 0


async def delete_document(store: Store, doc_id: str) -> list[str]:
    """Delete a document and its chunks together; returns the chunk ids removed."""
    chunk_ids = [c.id async for c in store.scan(Chunk, {"document_id": doc_id})]
    async with store.transaction():
        await store.delete(Chunk, {"document_id": doc_id})
        await store.delete(Document, {"id": doc_id})
    return chunk_ids


async def remove_document(store: Store, path: str | PurePath, documents_dir: Path | None = None) -> bool:
    """Forget one document (`compendium remove PATH`): its Document and Chunks. `path` is
    relative to the documents folder, or absolute inside `documents_dir`. False if unknown."""
    rel = relative_path(path, documents_dir)
    docs = [d async for d in store.scan(Document, {"path": rel})]
    if not docs:
        return False
    for doc in docs:
        await delete_document(store, doc.id)
    return True
