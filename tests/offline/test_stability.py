"""One document added to a compiled workspace moves only the pages it concerns, and the vault
export leaves every other file byte-identical and untouched (same modification time)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from compendium.operations import compile_workspace, export_workspace, opened_store
from compendium.settings import load_settings
from compendium.storage.records import Document, Page
from compendium.workspace import add_documents, init_workspace

CORPUS = Path(__file__).resolve().parents[2] / "samples" / "corpus"

NEW_DOCUMENT = """# Archive Compression

Archive Compression shrinks archived WAL segments before the archiver copies them to the archive.

## Methods

Archive Compression uses zstd by default. The archive_compression setting chooses the method of
Archive Compression, and the archiver process applies it to every finished segment.

## Monitoring

Archive Compression reports its savings in the archiver statistics. A slow method of Archive
Compression delays the archiver process but never the writes of a transaction.
"""


async def compile_and_export(workspace: Path, vault: Path) -> tuple[dict, dict[str, set[str]], dict[str, set[str]]]:
    settings = load_settings(workspace, env={})
    report = await compile_workspace(settings)
    await export_workspace(settings, "vault", vault)
    async with opened_store(settings) as store:
        pages = {p.slug: p async for p in store.scan(Page, {"status": "active"})}
        documents = {d.path: set(d.chunk_ids) async for d in store.scan(Document)}
    return report.as_dict(), {s: set(p.cited_chunks) for s, p in pages.items()}, {
        "links": {s for s, p in pages.items()}, **{f"out:{s}": set(p.outlinks) for s, p in pages.items()},
        **documents}


def snapshot(vault: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in vault.glob("*.md")}


def test_adding_one_document_leaves_unrelated_vault_files_byte_identical(tmp_path: Path):
    workspace = init_workspace(tmp_path / "ws")
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    add_documents(workspace, [corpus])
    vault = tmp_path / "vault"
    _, cited_before, _ = asyncio.run(compile_and_export(workspace, vault))
    before = snapshot(vault)

    extra = tmp_path / "extra" / "archive-compression.md"
    extra.parent.mkdir()
    extra.write_text(NEW_DOCUMENT, encoding="utf-8")
    add_documents(workspace, [extra])
    report, cited_after, state = asyncio.run(compile_and_export(workspace, vault))
    after = snapshot(vault)

    new_chunks = next(chunks for path, chunks in state.items() if path.endswith("archive-compression.md"))
    citing = {s for s, cited in cited_after.items() if cited & new_chunks}
    created = set(cited_after) - set(cited_before)
    linking = {s for s in cited_after if state[f"out:{s}"] & created}
    concerned = {f"{s}.md" for s in citing | created | linking} | {"_index.md"}
    assert citing, "the new document is cited by some page"
    untouched = [name for name in before if name in after and name not in concerned]
    assert len(untouched) > 0.8 * len(before)
    for name in untouched:
        assert after[name] == before[name], f"{name} changed though the new document does not concern it"
    written = report["pages"]["created"] + report["pages"]["updated"] + report["pages"]["deleted"]
    assert written <= 2 * len(citing | linking)  # pages citing the new document or linking to its new pages
