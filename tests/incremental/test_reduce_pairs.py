"""REDUCE asks pair questions only about pairs with a new or changed name: a recompile after one
chunk changed finds the decisions about every other pair stored under the pair's fingerprint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compendium.engines.factory import build_engine
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.usage import UsageMeter
from compendium.phases import reduce
from compendium.pipeline.context import CompileContext
from compendium.storage.factory import open_store
from compendium.storage.records import Extract
from compendium.templates.schema import Template
from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import LLMServer

# Near spellings: a wide review band sends every close pair to the judge, one pair per call.
NAMES = ["Segment Compaction Daemon", "Segment Compaction Daemons", "Ledger Routing Service",
         "Ledger Routing Services", "Quota Lease Manager", "Quota-Lease Manager Unit",
         "Snapshot Recovery Broker", "Snapshot Recovery Brokers"]
NEW_NAME = "Segment Compaction Daemon Pool"


def _extract(n: int, name: str) -> Extract:
    chunk = f"c{n}"
    return Extract(
        id=chunk, chunk_id=chunk, document_id=f"d{n}", fingerprint=f"fp-{chunk}-{name}", engine="llm",
        entities=[{"name": name, "type": "technology", "description": f"{name} keeps segments small.", "aliases": []},
                  {"name": "Storage Engine", "type": "technology", "description": "The engine.", "aliases": []}],
        claims=[{"text": f"{name} runs inside the Storage Engine.", "entities": [name, "Storage Engine"]}],
        relations=[],
    )


async def _reduce(store: Any, server: LLMServer) -> dict[str, Any]:
    template = Template(name="wiki", reduce={"auto_merge": 0.999, "review_band": (0.3, 0.999), "judge_batch": 1})
    engine = build_engine(settings_for(server), template, usage=UsageMeter())
    try:
        ctx = CompileContext(store=store, engine=engine, embedder=OfflineEmbedder(), template=template)
        return (await reduce.run(template, ctx)).details
    finally:
        await engine.close()


def _asked(server: LLMServer) -> list[str]:
    return [r.prompt for r in server.requests if r.schema_name == "pairs"]


async def test_a_changed_chunk_asks_only_about_pairs_with_its_new_name(tmp_path: Path, llm_server: LLMServer):
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}", "kb")
    try:
        await store.upsert([_extract(n, name) for n, name in enumerate(NAMES)])
        first = await _reduce(store, llm_server)
        assert first["tier3_pairs"] >= 4 and len(_asked(llm_server)) == first["tier3_pairs"]

        llm_server.reset()
        await store.upsert([_extract(len(NAMES), NEW_NAME)])  # one chunk more, naming one new thing
        second = await _reduce(store, llm_server)
        asked = _asked(llm_server)
        assert asked, "the new name has close neighbours: some pair with it is asked"
        assert all(NEW_NAME in prompt for prompt in asked), [p for p in asked if NEW_NAME not in p]
        assert second["tier3_cached"] == second["tier3_pairs"] - len(asked) >= first["tier3_pairs"] - first["tier3_merged"]

        llm_server.reset()
        await store.upsert([_extract(len(NAMES), "Snapshot Recovery Broker")])  # that chunk edited again
        third = await _reduce(store, llm_server)
        assert _asked(llm_server) == [] and third["tier3_cached"] == third["tier3_pairs"]
    finally:
        await store.close()
