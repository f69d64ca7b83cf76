"""A model's "same" merges two names only where the sources show they could be one thing: a
small model answered "same" for Vacuum and "value", TOAST and "transaction"."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from compendium.engines.factory import build_engine
from compendium.engines.llm import UNIFORM_BATCH
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.usage import UsageMeter
from compendium.phases import reduce
from compendium.pipeline.context import CompileContext
from compendium.storage.factory import open_store
from compendium.storage.records import Entity, Extract
from compendium.templates.schema import Template
from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import LLMServer

ENTITIES = [
    ("Vacuum", "Vacuum removes dead tuples from tables."),
    ("value", "A value stored in a column."),
    ("Write-Ahead Log", "The Write-Ahead Log (WAL) records every change before the data pages."),
    ("WAL", "The log of changes."),
    ("Standby server", "A server that replays the log."),
    ("Hot Standby server", "A standby server that answers read-only queries."),
    ("TOAST", "Stores large column values out of line."),
    ("transaction", "A unit of work."),
    ("table", "Rows stored together."),
    ("TOAST table", "Where out-of-line values are kept."),
]


def _extract(n: int, name: str, description: str) -> Extract:
    return Extract(
        id=f"c{n}", chunk_id=f"c{n}", document_id=f"d{n}", fingerprint=f"fp-c{n}", engine="llm",
        entities=[{"name": name, "type": "concept", "description": description, "aliases": []}],
        claims=[{"text": f"{description}", "entities": [name]}], relations=[],
    )


def _answer_same_to_every_pair(server: LLMServer) -> None:
    """The server answers every pair question "same" (its other answers as before)."""
    writes = server.responder

    def always_same(request: Any) -> str:
        if request.schema_name == "pairs":
            labels = re.findall(r"\[(p\d+)\]", request.prompt)
            return json.dumps({"decisions": [{"pair": label, "same": True} for label in dict.fromkeys(labels)]})
        return writes(request)

    server.responder = always_same


async def test_a_model_saying_same_for_every_pair_merges_only_names_that_meet(tmp_path: Path, llm_server: LLMServer):
    _answer_same_to_every_pair(llm_server)
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}", "kb")
    template = Template(name="wiki", reduce={"auto_merge": 0.999, "review_band": (0.0, 0.999), "judge_batch": 4})
    engine = build_engine(settings_for(llm_server), template, usage=UsageMeter())
    try:
        await store.upsert([_extract(n, name, text) for n, (name, text) in enumerate(ENTITIES)])
        ctx = CompileContext(store=store, engine=engine, embedder=OfflineEmbedder(), template=template)
        await reduce.run(template, ctx)
        asked = " ".join(r.prompt for r in llm_server.requests if r.schema_name == "pairs")
        assert "Hot Standby server" in asked  # names that meet are asked about (and answered "same")
        assert not re.search(r"A: (?:Vacuum|value) .*\n(?:  .*\n)*B: (?:Vacuum|value) ", asked)  # never asked
        groups = {frozenset([e.name, *e.aliases]) async for e in store.scan(Entity)}
        names = {n for g in groups for n in g}
        assert {"Vacuum", "value", "TOAST", "transaction"} <= names
        together = {n: g for g in groups for n in g}
        assert "value" not in together["Vacuum"] and "transaction" not in together["TOAST"]
        assert "WAL" in together["Write-Ahead Log"]  # its description names it: (WAL)
        assert "Standby server" in together["Hot Standby server"]  # a word in common
        assert "table" not in together["TOAST table"]  # a common word and a compound of it: a kind and a case
    finally:
        await engine.close()
        await store.close()


async def test_a_batch_answered_same_for_every_pair_merges_nothing(tmp_path: Path, llm_server: LLMServer):
    _answer_same_to_every_pair(llm_server)
    names = ["transaction", "Transaction ID", "long-running transaction", "virtual transaction ID",
             "prepared transaction", "transaction snapshot", "transaction log", "transaction counter"]
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}", "kb")
    template = Template(name="wiki", reduce={"auto_merge": 0.999, "review_band": (0.0, 0.999), "judge_batch": 20})
    engine = build_engine(settings_for(llm_server), template, usage=UsageMeter())
    try:
        await store.upsert([_extract(n, name, f"The {name} is a part of the engine.") for n, name in enumerate(names)])
        ctx = CompileContext(store=store, engine=engine, embedder=OfflineEmbedder(), template=template)
        details = (await reduce.run(template, ctx)).details
        assert details["tier3_pairs"] >= UNIFORM_BATCH  # asked, one batch, every answer "same"
        assert len([e async for e in store.scan(Entity)]) == len(names)  # none of it believed
    finally:
        await engine.close()
        await store.close()


async def test_rules_that_find_every_pair_of_a_batch_the_same_are_believed(tmp_path: Path):
    # The guard above is against a model that cannot tell names apart; the offline rules judge
    # each pair alone, so how the pairs fall into batches changes nothing they decide.
    from compendium.engines.offline import OfflineEngine

    words = ["Replica", "Process", "Checkpoint", "Tablespace", "Trigger", "Sequence", "Publication"]
    names = [form for w in words for form in (w, f"{w}es" if w.endswith("s") else f"{w}s")]
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}", "kb")
    template = Template(name="wiki", reduce={"auto_merge": 0.999, "review_band": (0.0, 0.999), "judge_batch": 20})
    try:
        await store.upsert([_extract(n, name, f"The {name} is a part of the engine.") for n, name in enumerate(names)])
        ctx = CompileContext(store=store, engine=OfflineEngine(), embedder=OfflineEmbedder(), template=template)
        details = (await reduce.run(template, ctx)).details
        assert details["tier3_pairs"] >= UNIFORM_BATCH
        groups = {frozenset([e.name, *e.aliases]) async for e in store.scan(Entity)}
        assert len(groups) == len(words)  # each word with its plural, every pair of the batch taken
    finally:
        await store.close()


async def test_a_small_models_name_with_words_added_is_judged_not_merged_by_its_embedding(tmp_path: Path,
                                                                                         llm_server: LLMServer):
    # Every pair close enough to merge by its embedding alone: a name and the same name with a
    # word added ("TOAST" / "TOAST table") is judged instead, by the name rules on a small model.
    names = {"TOAST": "component", "TOAST table": "component", "dead tuple": "concept", "dead tuples": "concept"}
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}", "kb")
    template = Template(name="wiki", reduce={"auto_merge": 0.0, "review_band": (0.0, 0.0), "judge_batch": 20})
    engine = build_engine(settings_for(llm_server, context_tokens=8192), template, usage=UsageMeter())
    try:
        extracts = [_extract(n, name, f"The {name} is a part of the engine.") for n, name in enumerate(names)]
        for ex in extracts:
            ex.entities[0]["type"] = names[ex.entities[0]["name"]]
        await store.upsert(extracts)
        ctx = CompileContext(store=store, engine=engine, embedder=OfflineEmbedder(), template=template)
        await reduce.run(template, ctx)
        groups = {frozenset([e.name, *e.aliases]) async for e in store.scan(Entity)}
        together = {n: g for g in groups for n in g}
        assert "TOAST table" not in together["TOAST"]
        assert "dead tuple" in together["dead tuples"]
        assert llm_server.calls["chat"] == 0
    finally:
        await engine.close()
        await store.close()
