"""Files read several to a worker thread: the same documents, in order, and one stuck file costs itself alone."""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from compendium.errors import InputError
from compendium.ingest.readers import read_document
from compendium.phases import ingest
from compendium.phases.document_writes import GROUP_DOCUMENTS
from compendium.pipeline.context import CompileContext
from compendium.pipeline.events import ListSink
from compendium.storage.factory import open_store
from compendium.storage.records import Chunk, Document
from compendium.templates.schema import Template

TEMPLATE = Template(name="test", chunking={"max_tokens": 64, "overlap_tokens": 8})


def markdown(n: int) -> str:
    items = "\n".join(f"- item {k} of list {n}" for k in range(4))
    return f"# Title {n}\n\nIntro   paragraph {n},\twith  odd spacing.\n\n{items}\n\n## Part\n\n| a | b |\n|---|---|\n| {n} | x |\n"


async def test_many_small_files_are_each_stored_as_when_read_alone(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    # More files than are read in one thread call, and more than one write transaction holds.
    count = max(ingest.READ_TOGETHER, GROUP_DOCUMENTS) + 7
    for n in range(count):
        (root / f"{n:04d}.md").write_text(markdown(n))
    store = await open_store(f"sqlite:///{tmp_path}/store.db")
    try:
        ctx = CompileContext(store=store, engine=None, embedder=None, template=TEMPLATE, events=ListSink(), documents_dir=root)
        result = await ingest.run(TEMPLATE, ctx)
        docs = {d.path: d async for d in store.scan(Document)}
        chunks = [c async for c in store.scan(Chunk)]
    finally:
        await store.close()
    assert result.details["new_documents"] == count and result.failed == 0
    assert sorted(docs) == [f"{n:04d}.md" for n in range(count)]
    for n in (0, count // 2, count - 1):
        alone = read_document(root / f"{n:04d}.md")
        doc = docs[f"{n:04d}.md"]
        assert doc.title == alone.title == f"Title {n}"
        texts = "\n\n".join(c.text for c in sorted((c for c in chunks if c.document_id == doc.id), key=lambda c: c.ordinal))
        assert "Intro paragraph" in texts and f"| {n} | x |" in texts
    assert len(chunks) == sum(len(d.chunk_ids) for d in docs.values())


def test_markdown_read_in_parallel_threads_gives_what_it_gives_in_one(tmp_path):
    paths = []
    for n in range(24):
        path = tmp_path / f"{n}.md"
        path.write_text(markdown(n) * (1 + n % 3))
        paths.append(path)
    alone = [read_document(p) for p in paths]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(read_document, paths * 3))
    for i, doc in enumerate(together):
        want = alone[i % len(paths)]
        assert (doc.text, doc.blocks, doc.title) == (want.text, want.blocks, want.title)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
async def test_a_file_stuck_in_a_read_fails_alone_and_the_files_after_it_are_read(tmp_path):
    # Opening a named pipe with no writer blocks inside one system call: no reader's own
    # deadline check can stop it, only being left behind.
    (tmp_path / "a.md").write_text("# A\n\nFirst file.\n")
    os.mkfifo(tmp_path / "b.md")
    (tmp_path / "c.md").write_text("# C\n\nThird file.\n")
    batch = [(name, tmp_path / name) for name in ("a.md", "b.md", "c.md")]
    try:
        outcomes = await ingest._read_together(batch, tmp_path, max_bytes=1 << 20, max_seconds=0.01)
    finally:
        # Let the thread left behind go: it sees it was given up and reads nothing more.
        threading.Thread(target=lambda: open(tmp_path / "b.md", "wb").close(), daemon=True).start()
        await asyncio.sleep(0.1)
    assert [rel for rel, _ in outcomes] == ["a.md", "b.md", "c.md"]
    (_, a), (_, b), (_, c) = outcomes
    assert not isinstance(a, InputError) and a.title == "A"
    assert isinstance(b, InputError) and "longer than the 0.01 s limit" in str(b)
    assert not isinstance(c, InputError) and c.title == "C"
