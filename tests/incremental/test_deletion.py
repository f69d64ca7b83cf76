"""Deleting a document leaves nothing behind: the orphan walk over every record kind."""

from __future__ import annotations

from pathlib import Path

from compendium.outline import OutlineNode
from compendium.storage.records import (
    CacheEntry,
    Chunk,
    Claim,
    Document,
    Entity,
    Extract,
    Page,
    Relation,
    Topic,
)
from tests.support.llm_server import LLMServer

from .corpus import DELETED_FACT, compile_, make_workspace, records, schemas

KINDS = (Document, Chunk, Extract, Entity, Relation, Claim, Topic, Page, CacheEntry)


async def store_of(workspace: Path, server: LLMServer) -> dict[type, list]:
    return {kind: await records(workspace, server, kind) for kind in KINDS}


def orphans(s: dict[type, list]) -> list[str]:
    """Every reference to a missing record, and every record supported by nothing that exists."""
    docs = {d.id for d in s[Document]}
    chunks = {c.id for c in s[Chunk]}
    entities = {e.id for e in s[Entity]}
    topics = {t.id for t in s[Topic]}
    outline = [e.value for e in s[CacheEntry] if e.namespace == "outline"]
    nodes = {n.id for o in outline for r in o["roots"] for n, _d in OutlineNode.from_dict(r).walk()}
    active = {p.slug for p in s[Page] if p.status == "active"}
    problems = [f"chunk {c.id}: document {c.document_id}" for c in s[Chunk] if c.document_id not in docs]
    problems += [f"document {d.id}: chunk {c}" for d in s[Document] for c in d.chunk_ids if c not in chunks]
    problems += [f"extract {e.id}: no chunk" for e in s[Extract] if e.id not in chunks]
    for e in s[Entity]:
        if not e.chunk_ids or set(e.chunk_ids) - chunks or set(e.document_ids) - docs:
            problems.append(f"entity {e.name}: chunks {e.chunk_ids}, documents {e.document_ids}")
    for r in s[Relation]:
        if {r.source, r.target} - entities or not r.chunk_ids or set(r.chunk_ids) - chunks:
            problems.append(f"relation {r.id}")
    for c in s[Claim]:
        if c.chunk_id not in chunks or c.document_id not in docs or set(c.entity_ids) - entities:
            problems.append(f"claim {c.id}")
    problems += [f"topic {t.slug}" for t in s[Topic] if not t.members or set(t.members) - entities]
    for p in s[Page]:
        if p.status != "active":
            continue
        if p.subject_id not in entities | topics | nodes:  # a node's subject is its overview page
            problems.append(f"page {p.slug}: subject {p.subject_id} is gone")
        if set(p.cited_chunks) - chunks:
            problems.append(f"page {p.slug}: cites missing chunks {sorted(set(p.cited_chunks) - chunks)}")
        if set(p.outlinks) - active:
            problems.append(f"page {p.slug}: links to {sorted(set(p.outlinks) - active)}")
    # Cached page evidence exists only for pages that are live.
    problems += [f"evidence of page {e.id}" for e in s[CacheEntry]
                 if e.namespace == "page-pack" and e.id.removeprefix("pack:") not in active]
    return problems


async def test_removing_a_document_purges_everything_only_it_supported(llm_server: LLMServer, tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    await compile_(workspace, llm_server)
    before = await store_of(workspace, llm_server)
    assert not orphans(before)
    gateway = next(e for e in before[Entity] if e.name == "Zephyr Gateway")
    gateway_page = next(p for p in before[Page] if p.subject_id == gateway.id)
    pool = next(e for e in before[Entity] if e.name == "Buffer Pool")
    assert DELETED_FACT in pool.description  # the deleted document's sentence was merged in
    assert any(DELETED_FACT in p.markdown for p in before[Page] if p.subject_id == pool.id)
    # A page whose evidence never came from the deleted document is left as it was.
    untouched = {p.slug: p.version for p in before[Page] if p.title == "Archive Daemon"}
    assert untouched

    (workspace / "documents" / "kb" / "gateway.md").unlink()
    llm_server.reset()
    report = await compile_(workspace, llm_server)
    after = await store_of(workspace, llm_server)

    assert orphans(after) == []
    assert len(after[Document]) == 3
    assert not any(e.name in ("Zephyr Gateway", "Orion Team") for e in after[Entity])
    assert {p.slug: p.status for p in after[Page]}[gateway_page.slug] == "deleted"
    assert not any(t.members and gateway.id in t.members for t in after[Topic])
    # Its facts are gone from what survives: merged descriptions, claims, relations and pages.
    assert not any(DELETED_FACT in e.description for e in after[Entity])
    assert not any(DELETED_FACT in c.text for c in after[Claim])
    assert not any(DELETED_FACT in r.description for r in after[Relation])
    assert not any(DELETED_FACT in p.markdown for p in after[Page] if p.status == "active")
    # ... with no page rewritten by the model and no extraction: removal is mechanical.
    asked = schemas(llm_server)
    assert asked.get("extraction", 0) == 0 and asked.get("page", 0) == 0, asked
    changes = {c["slug"]: c for c in report["changes"]}
    assert changes[gateway_page.slug]["action"] == "deleted"
    assert any(c["action"] == "updated" and "no rewrite" in c["reason"] for c in changes.values())
    assert {p.slug: p.version for p in after[Page] if p.slug in untouched} == untouched


async def test_a_document_that_returns_brings_its_page_back(llm_server: LLMServer, tmp_path: Path):
    workspace = make_workspace(tmp_path / "ws")
    await compile_(workspace, llm_server)
    path = workspace / "documents" / "kb" / "gateway.md"
    text = path.read_text(encoding="utf-8")
    path.unlink()
    await compile_(workspace, llm_server)
    path.write_text(text, encoding="utf-8")
    await compile_(workspace, llm_server)
    after = await store_of(workspace, llm_server)
    assert orphans(after) == []
    page = next(p for p in after[Page] if p.title == "Zephyr Gateway")
    assert page.status == "active"
