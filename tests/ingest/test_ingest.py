"""The ingest phase against a real SQLite store: incremental, transactional, forgiving."""

import pytest

from compendium.ingest.document_files import document_id, plan_ingest
from compendium.phases import ingest
from compendium.phases.document_writes import remove_document
from compendium.pipeline.context import CompileContext
from compendium.pipeline.events import ListSink, Message, PhaseProgress
from compendium.storage.factory import open_store
from compendium.storage.records import Chunk, Document
from compendium.templates.schema import Template

from .documents import minimal_pdf, write_docx

TEMPLATE = Template(name="test", chunking={"max_tokens": 64, "overlap_tokens": 8})
LONG = " ".join(f"Turbine fact number {i} is recorded here." for i in range(40))


@pytest.fixture
async def store(tmp_path):
    s = await open_store(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


@pytest.fixture
def docs(tmp_path):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    (root / "wind.md").write_text(f"# Wind\n\n{LONG}\n\n## Offshore\n\nBig turbines at sea.\n")
    (root / "sub" / "notes.txt").write_text("Grid notes\n\nThe grid balances load.\n")
    (root / "page.html").write_text("<title>Hydro</title><h1>Dams</h1><p>Water turns turbines.</p>")
    (root / "report.pdf").write_bytes(minimal_pdf([["Solar Report", "Panels make power."]]))
    write_docx(root / "memo.docx", [("Heading 1", "Memo"), ("", "Storage matters.")])
    (root / ".hidden.md").write_text("# secret\n\nnot ingested\n")
    (root / ".git").mkdir()
    (root / ".git" / "x.md").write_text("# git internals\n")
    (root / "image.png").write_bytes(b"\x89PNG")
    return root


async def compile_once(store, root):
    sink = ListSink()
    ctx = CompileContext(store=store, engine=None, embedder=None, template=TEMPLATE, events=sink, documents_dir=root)
    result = await ingest.run(TEMPLATE, ctx)
    warnings = [e.text for e in sink.events if isinstance(e, Message) and e.level == "warning"]
    return result, ctx, sink, warnings


async def chunks_of(store, path):
    return [c async for c in store.scan(Chunk, {"document_id": document_id(path)})]


def test_plan_ingest_sorts_paths():
    plan = plan_ingest({"a": "1", "b": "2", "c": "3"}, {"b": "2", "c": "old", "d": "4"})
    assert (plan.new, plan.changed, plan.unchanged, plan.deleted) == (["a"], ["c"], ["b"], ["d"])


async def test_first_run_stores_every_format(store, docs):
    result, ctx, sink, warnings = await compile_once(store, docs)
    assert warnings == []
    assert (result.items, result.done, result.skipped, result.failed) == (5, 5, 0, 0)
    stored = {d.path: d async for d in store.scan(Document)}
    assert set(stored) == {"wind.md", "sub/notes.txt", "page.html", "report.pdf", "memo.docx"}
    assert {d.format for d in stored.values()} == {"markdown", "text", "html", "pdf", "docx"}
    wind = stored["wind.md"]
    assert wind.id == document_id("wind.md") and wind.title == "Wind" and wind.size > 0
    chunks = await chunks_of(store, "wind.md")
    assert sorted(c.id for c in chunks) == sorted(wind.chunk_ids) and len(chunks) > 2
    assert all(c.tokens <= 64 for c in chunks)
    for c in chunks:  # every chunk keeps its blocks, spans inside its own text
        assert c.blocks and all(0 <= s < e <= len(c.text) for _, s, e in c.blocks)
    assert {k for c in chunks for k, _, _ in c.blocks} == {"heading", "paragraph"}
    assert result.details["documents"] == 5 and result.details["chunks"] == await store.count(Chunk)
    assert sorted(ctx.state["ingest"]["changed_documents"]) == sorted(d.id for d in stored.values())
    progress = [e for e in sink.events if isinstance(e, PhaseProgress)]
    assert progress[-1].done == progress[-1].total == 5


async def test_second_run_reads_nothing_and_edits_touch_only_their_chunks(store, docs):
    await compile_once(store, docs)
    result, ctx, _, _ = await compile_once(store, docs)
    assert (result.done, result.skipped) == (0, 5)
    assert ctx.state["ingest"] == {"changed_documents": [], "deleted_documents": [], "removed_chunks": []}

    before = {c.id: c for c in await chunks_of(store, "wind.md")}
    (docs / "wind.md").write_text(f"# Wind\n\n{LONG}\n\n## Offshore\n\nBigger turbines at sea.\n")
    result, ctx, _, _ = await compile_once(store, docs)
    assert (result.done, result.skipped) == (1, 4)
    after = {c.id: c for c in await chunks_of(store, "wind.md")}
    removed = set(before) - set(after)
    assert len(removed) == 1 and "Big turbines" in before[removed.pop()].text
    assert len(set(after) - set(before)) == 1
    assert ctx.state["ingest"]["changed_documents"] == [document_id("wind.md")]
    assert len(ctx.state["ingest"]["removed_chunks"]) == 1


async def test_deleted_file_removes_document_and_chunks(store, docs):
    await compile_once(store, docs)
    doomed = await chunks_of(store, "page.html")
    (docs / "page.html").unlink()
    result, ctx, _, _ = await compile_once(store, docs)
    assert result.details["deleted_documents"] == 1
    assert await chunks_of(store, "page.html") == []
    assert await store.get(Document, [document_id("page.html")]) == []
    assert ctx.state["ingest"]["deleted_documents"] == [document_id("page.html")]
    assert set(ctx.state["ingest"]["removed_chunks"]) == {c.id for c in doomed}


async def test_bad_file_warns_is_skipped_and_never_loses_the_stored_version(store, docs):
    await compile_once(store, docs)
    good = await store.get_one(Document, document_id("report.pdf"))
    good_chunks = await chunks_of(store, "report.pdf")
    (docs / "report.pdf").write_bytes(b"%PDF-1.4 truncated garbage")
    (docs / "empty.md").write_text("")
    result, ctx, _, warnings = await compile_once(store, docs)
    assert result.failed == 2
    assert any("report.pdf" in w and "PDF" in w for w in warnings)
    assert any("empty.md" in w and "empty" in w for w in warnings)
    assert (await store.get_one(Document, document_id("report.pdf"))).content_hash == good.content_hash
    assert await chunks_of(store, "report.pdf") == good_chunks
    assert await store.get(Document, [document_id("empty.md")]) == []
    assert ctx.state["ingest"]["deleted_documents"] == []


async def test_replacement_warning_is_reported(store, tmp_path):
    root = tmp_path / "d"
    root.mkdir()
    (root / "latin.txt").write_bytes("Caf\xe9 society.\n".encode("latin-1"))
    result, _, _, warnings = await compile_once(store, root)
    assert result.done == 1 and any("latin.txt" in w and "UTF-8" in w for w in warnings)


async def test_changed_chunking_settings_rechunk_unchanged_files(store, docs):
    await compile_once(store, docs)
    assert len(await chunks_of(store, "wind.md")) > 2
    sink = ListSink()
    bigger = Template(name="test", chunking={"max_tokens": 1000, "overlap_tokens": 0})
    ctx = CompileContext(store=store, engine=None, embedder=None, template=bigger, events=sink, documents_dir=docs)
    result = await ingest.run(bigger, ctx)
    assert result.done == 5
    # one chunk per section once the budget is large
    assert [c.heading_path for c in await chunks_of(store, "wind.md")] in (
        [["Wind"], ["Wind", "Offshore"]], [["Wind", "Offshore"], ["Wind"]])


async def test_remove_document(store, docs):
    await compile_once(store, docs)
    assert await remove_document(store, "sub/notes.txt") is True
    assert await chunks_of(store, "sub/notes.txt") == []
    assert await store.count(Document) == 4
    assert await remove_document(store, docs / "wind.md", documents_dir=docs) is True
    assert await remove_document(store, "missing.md") is False
