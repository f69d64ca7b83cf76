"""The sample corpus compiled end to end against the scripted LLM server: the wiki a user gets."""

from __future__ import annotations

import pytest

from compendium.storage.records import Chunk, Claim, Document, Entity, Page, Relation, Topic

from .conftest import CompiledSample, read_store
from .wiki_checks import broken_links, check_citations

PHASES = ("map", "reduce", "plan", "refine")
PHASE_KEYS = {
    "items", "done", "skipped", "failed", "llm_calls", "prompt_tokens", "completion_tokens",
    "embedding_calls", "seconds",
}

# Pairs of samples/expected.yaml's `merged` groups that the scripted model can see: an acronym
# introduced in parentheses ("Write-Ahead Log (WAL)") or an explicit "also known as".
MERGED_PAIRS = [
    ("Lumen DB", "LumenDB"),
    ("Lumen DB", "Lumen"),
    ("Write-Ahead Log", "WAL"),
    ("Multi-Version Concurrency Control", "MVCC"),
    ("Log Sequence Number", "LSN"),
    ("Transaction ID", "XID"),
    ("Buffer Pool", "Shared Buffer Pool"),
    ("Checkpointer", "checkpoint process"),
    ("Autovacuum Daemon", "autovacuum"),
    ("Streaming Replication", "physical replication"),
    ("Query Planner", "optimizer"),
    ("Free Space Map", "FSM"),
    ("Visibility Map", "VM"),
    ("TOAST", "Oversized-Attribute Storage Technique"),
]
# Entities the corpus keeps apart, often in one sentence: merging any two is a wrong merge.
DISTINCT = [
    "Write-Ahead Log", "Log Sequence Number", "Free Space Map", "Visibility Map", "Buffer Pool",
    "Checkpointer", "Streaming Replication", "Hot Standby", "Heap Files", "Query Planner",
    "Multi-Version Concurrency Control", "Transaction ID", "Lumen Cloud", "Lumen DB",
]


def _names(entity: Entity) -> set[str]:
    return {n.lower() for n in (entity.name, *entity.aliases)}


def _entity_named(entities: list[Entity], name: str) -> list[Entity]:
    return [e for e in entities if name.lower() in _names(e)]


def test_report_has_the_documented_shape_and_matches_the_store(compiled_sample: CompiledSample):
    report = compiled_sample.report
    assert report["status"] == "succeeded" and report["engine"] == "llm"
    assert set(report) >= {"engine", "documents", "chunks", "phases", "pages", "counts", "totals"}
    for phase in PHASES:
        assert set(report["phases"][phase]) >= PHASE_KEYS, phase
    assert set(report["pages"]) == {"created", "updated", "unchanged", "deleted"}
    assert set(report["counts"]) >= {"entities", "relations", "claims", "topics"}

    docs, chunks, entities, relations, claims, topics, pages = read_store(
        compiled_sample.workspace, Document, Chunk, Entity, Relation, Claim, Topic, Page
    )
    assert report["documents"] == len(docs) == 30
    assert report["chunks"] == len(chunks) == report["phases"]["map"]["items"]
    assert report["counts"]["entities"] == sum(1 for e in entities if e.category == "entity")
    assert report["counts"]["relations"] == len(relations) > 0
    assert report["counts"]["claims"] == len(claims) > 0
    assert report["counts"]["topics"] == len(topics) > 0
    active = [p for p in pages if p.status == "active"]
    assert report["pages"]["created"] == len(active) > 0
    assert report["pages"]["updated"] == report["pages"]["deleted"] == 0
    assert report["phases"]["map"]["done"] == len(chunks) and report["phases"]["map"]["failed"] == 0

    # The server's own counters agree with what the report says was spent.
    totals = report["totals"]
    assert totals["llm_calls"] == compiled_sample.calls["chat"] == sum(report["phases"][p]["llm_calls"] for p in PHASES)
    assert totals["prompt_tokens"] == compiled_sample.prompt_tokens
    assert totals["completion_tokens"] == compiled_sample.completion_tokens
    assert report["phases"]["map"]["llm_calls"] == compiled_sample.calls["extraction"]
    assert report["phases"]["refine"]["llm_calls"] == compiled_sample.calls.get("text", 0) == len(active)


def test_every_citation_resolves_to_a_chunk_that_says_it(compiled_sample: CompiledSample):
    chunks, pages = read_store(compiled_sample.workspace, Chunk, Page)
    active = [p for p in pages if p.status == "active"]
    checked, problems = check_citations(active, {c.id: c for c in chunks})
    assert checked >= 5 * len(active), "pages should cite their evidence throughout"
    assert not problems, "\n".join(map(str, problems[:10]))
    for page in active:
        assert page.cited_chunks and set(page.cited_chunks) <= {c.id for c in chunks}, page.slug


def test_every_wikilink_names_an_active_page(compiled_sample: CompiledSample):
    (pages,) = read_store(compiled_sample.workspace, Page)
    assert sum(len(p.outlinks) for p in pages) > 0, "the scripted writer links related pages"
    assert broken_links(pages) == []


@pytest.mark.parametrize(("canonical", "alias"), MERGED_PAIRS, ids=[f"{a}={b}" for a, b in MERGED_PAIRS])
def test_aliases_in_the_corpus_are_merged(compiled_sample: CompiledSample, canonical: str, alias: str):
    (entities,) = read_store(compiled_sample.workspace, Entity)
    holding = _entity_named(entities, canonical)
    assert len(holding) == 1, f"{canonical!r} is spread over {[(e.name, e.aliases) for e in holding]}"
    assert alias.lower() in _names(holding[0]), f"{alias!r} not merged into {holding[0].name!r} {holding[0].aliases}"
    assert len(_entity_named(entities, alias)) == 1


def test_distinct_entities_stay_apart(compiled_sample: CompiledSample):
    (entities,) = read_store(compiled_sample.workspace, Entity)
    owner = {}
    for name in DISTINCT:
        found = _entity_named(entities, name)
        assert found, f"no entity for {name!r}"
        owner[name] = found[0].id
    merged = [(a, b) for i, a in enumerate(DISTINCT) for b in DISTINCT[i + 1 :] if owner[a] == owner[b]]
    assert merged == []
