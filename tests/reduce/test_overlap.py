"""REDUCE asks its pair judgments together, and gets the entities it gets asking one at a time."""

from __future__ import annotations

from compendium.engines.factory import build_engine
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.usage import UsageMeter
from compendium.phases import reduce
from compendium.pipeline.context import CompileContext
from compendium.storage.factory import open_store
from compendium.storage.records import Entity, Extract, Relation
from compendium.templates.schema import Template
from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import LLMServer

# Near names: a wide review band sends every close pair to the judge, one pair per call.
NAMES = [
    ("Segment Compaction Daemon", "Segment Compaction Daemons"),
    ("Ledger Routing Service", "Ledger Routing Services"),
    ("Quota Lease Manager", "Quota-Lease Manager Unit"),
    ("Snapshot Recovery Broker", "Snapshot Recovery Brokers"),
    ("Catalog Eviction Planner", "Catalog Eviction Planners"),
    ("Postgres", "Postgress"),
]


def _corpus() -> list[Extract]:
    out = []
    for n, (left, right) in enumerate(NAMES):
        for k, name in enumerate((left, right)):
            chunk = f"c{n}-{k}"
            out.append(Extract(
                id=chunk, chunk_id=chunk, document_id=f"d{n}", fingerprint=f"fp-{chunk}", engine="llm",
                entities=[{"name": name, "type": "technology", "description": f"{name} keeps segments small.",
                           "aliases": []},
                          {"name": "Storage Engine", "type": "technology", "description": "The engine.", "aliases": []}],
                claims=[{"text": f"{name} runs inside the Storage Engine.", "entities": [name, "Storage Engine"]}],
                relations=[{"source": name, "target": "Storage Engine", "type": "part_of",
                            "description": f"{name} is part of the Storage Engine."}],
            ))
    return out


async def _reduce(tmp_path, server: LLMServer, concurrency: int,
                  extracts: list[Extract] | None = None) -> tuple[list[tuple], list[tuple], dict]:
    template = Template(name="wiki", map={"concurrency": concurrency},
                        reduce={"auto_merge": 0.999, "review_band": (0.3, 0.999), "judge_batch": 1})
    store = await open_store(f"sqlite:///{tmp_path / f'kb{concurrency}.db'}", "kb")
    engine = build_engine(settings_for(server), template, usage=UsageMeter())
    try:
        await store.upsert(_corpus() if extracts is None else extracts)
        ctx = CompileContext(store=store, engine=engine, embedder=OfflineEmbedder(), template=template)
        result = await reduce.run(template, ctx)
        entities = sorted([(e.id, e.name, tuple(e.aliases), tuple(e.chunk_ids), e.description)
                           async for e in store.scan(Entity)])
        relations = sorted([(r.id, r.source, r.target, r.strength) async for r in store.scan(Relation)])
    finally:
        await engine.close()
        await store.close()
    return entities, relations, result.details


async def test_pair_judgments_asked_together_give_the_entities_asked_one_at_a_time(tmp_path, llm_server):
    llm_server.set_latency(0.02)  # so that requests answered at once are seen at once
    one_by_one = await _reduce(tmp_path, llm_server, 1)
    assert llm_server.most_in_flight["completions"] == 1
    llm_server.reset()
    together = await _reduce(tmp_path, llm_server, 4)
    details = together[2]
    assert details["tier3_pairs"] >= 4 and details["tier3_merged"] >= 1 and details["summaries"] == 0
    assert llm_server.most_in_flight["completions"] > 1
    assert together[:2] == one_by_one[:2]


def _one_pair_and_one_summary() -> list[Extract]:
    """Two spellings for the judge, and an engine described six ways (a summary), unrelated."""
    out = []
    for k in range(6):
        name = ("Postgres", "Postgress")[k % 2]
        chunk = f"s{k}"
        out.append(Extract(
            id=chunk, chunk_id=chunk, document_id=f"d{k}", fingerprint=f"fp-{chunk}", engine="llm",
            entities=[{"name": name, "type": "technology", "description": "A database server.", "aliases": []},
                      {"name": "Storage Engine", "type": "component", "aliases": [],
                       "description": f"The storage engine, as chapter {k} describes it."}],
            claims=[], relations=[],
        ))
    return out


async def test_clusters_no_judgment_can_change_are_described_while_the_pairs_are_judged(tmp_path, llm_server):
    llm_server.set_latency(0.3)
    entities, _, details = await _reduce(tmp_path, llm_server, 4, _one_pair_and_one_summary())
    engines = [e for e in entities if e[1] == "Storage Engine"]
    assert details["tier3_pairs"] == 1 and details["summaries"] == 1
    assert llm_server.calls["chat"] == 2  # the judgment and the summary, each asked once
    assert llm_server.most_in_flight["completions"] == 2  # ... at the same time
    assert len(engines) == 1 and "chapter 5" in engines[0][4]  # the summary of its six descriptions
