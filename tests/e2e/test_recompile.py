"""Recompiling costs only what changed: nothing for nothing, one document's chunks for one edit."""

from __future__ import annotations

from pathlib import Path

from compendium.storage.records import Chunk, Document, Extract, Page
from tests.support.llm_server import LLMServer

from .conftest import CompiledSample, compile_in_process, read_store
from .wiki_checks import broken_links, check_citations, extraction_chunk_texts, flat

EDITED = Path("documents") / "corpus" / "durability" / "checkpointer.md"
OLD_PARAGRAPH_START = "A checkpoint is a promise:"


def test_a_second_compile_with_nothing_changed_asks_nothing_and_rewrites_nothing(
    compiled_sample: CompiledSample, e2e_server: LLMServer, tmp_path: Path
):
    workspace = compiled_sample.copy(tmp_path / "ws")
    (before,) = read_store(workspace, Page)
    e2e_server.reset()

    report = compile_in_process(workspace, e2e_server)

    assert e2e_server.calls["chat"] == 0 and e2e_server.calls["embeddings"] == 0
    assert report["totals"]["llm_calls"] == 0 and report["totals"]["prompt_tokens"] == 0
    assert report["pages"]["created"] == report["pages"]["updated"] == report["pages"]["deleted"] == 0
    assert report["pages"]["unchanged"] == len([p for p in before if p.status == "active"])
    assert report["phases"]["map"]["skipped"] == report["chunks"]
    (after,) = read_store(workspace, Page)
    assert {p.id: (p.version, p.updated_at, p.markdown) for p in after} == {
        p.id: (p.version, p.updated_at, p.markdown) for p in before
    }


def test_editing_one_paragraph_re_extracts_only_the_chunks_it_changed(
    compiled_sample: CompiledSample, e2e_server: LLMServer, tmp_path: Path
):
    workspace = compiled_sample.copy(tmp_path / "ws")
    docs, chunks, extracts_before = read_store(workspace, Document, Chunk, Extract)
    path = workspace / EDITED
    text = path.read_text(encoding="utf-8")
    paragraph = next(p for p in text.split("\n\n") if OLD_PARAGRAPH_START in p)
    new_paragraph = paragraph.replace(
        OLD_PARAGRAPH_START, "A checkpoint is a promise kept by the Checkpointer and the Storage Manager together:"
    )
    path.write_text(text.replace(paragraph, new_paragraph), encoding="utf-8")
    edited_doc = next(d for d in docs if d.path.endswith("checkpointer.md"))
    old_texts = {flat(c.text) for c in chunks if c.document_id == edited_doc.id}
    e2e_server.reset()

    report = compile_in_process(workspace, e2e_server)

    asked = [t for r in e2e_server.requests if r.schema_name == "extraction" for t in extraction_chunk_texts(r)]
    chunks_after, extracts_after, pages = read_store(workspace, Chunk, Extract, Page)
    changed = {flat(c.text) for c in chunks_after if c.document_id == edited_doc.id} - old_texts
    assert len(changed) == 1 and "kept by the Checkpointer" in next(iter(changed))
    assert asked == list(changed), "MAP must ask only for the chunk holding the edited paragraph"
    assert report["phases"]["map"]["done"] == 1
    assert report["phases"]["map"]["skipped"] == len(chunks_after) - 1

    # Every other chunk's extract is the very record stored before.
    before = {e.id: e for e in extracts_before}
    untouched = [e for e in extracts_after if e.document_id != edited_doc.id]
    assert untouched and all(e == before[e.id] for e in untouched)
    # Pages are rewritten only where evidence changed, and the wiki still holds together.
    assert report["pages"]["updated"] + report["pages"]["created"] < report["pages"]["unchanged"]
    checked, problems = check_citations([p for p in pages if p.status == "active"], {c.id: c for c in chunks_after})
    assert checked and not problems, "\n".join(map(str, problems[:10]))
    assert broken_links(pages) == []
