"""REDUCE from its ledger equals REDUCE from scratch, whatever changed: random extracts with
names their chunk does not mention, names no chunk mentions, defined terms, code-only terms and
capitalised common words, changed, removed and added in a seeded sequence on one store, each
state compared with a fresh store reduced from the same extracts."""

from __future__ import annotations

import random
from typing import Any

import pytest

from compendium.engines.offline.engine import OfflineEngine
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.phases import reduce
from compendium.phases.map import extracts_fingerprint
from compendium.pipeline.context import CompileContext
from compendium.pipeline.stages import set_rollup
from compendium.storage.factory import open_store
from compendium.storage.records import Claim, Entity, Extract, Relation
from compendium.templates.schema import Template
from tests.contract.conftest import drop_kbs, fresh_kb, server_url
from tests.support.outputs import canonical_records

NAMES = [("Buffer Pool", "component"), ("Storage Engine", "component"), ("Redo Journal", "component"),
         ("WAL", "concept"), ("Write-Ahead Log", "component"), ("Exception", "class"), ("Vacuum", "process"),
         ("current", "keyword"), ("Archiver", "process")]
TERMS = {"checkpoint": "A point where dirty pages are written.", "latch": "A short lock on one page."}
UNMENTIONED = ["Ghost Service", "Phantom Index"]
WORDS = ["checkpoint", "checkpoints", "latch", "latches", "exception", "Exception", "`current`", "current",
         "the", "page", "writes", "before", "every", "row"]


def _extract(rng: random.Random, chunk: str, version: int) -> Extract:
    named = rng.sample(NAMES, rng.randint(1, 4))
    entities = [{"name": n, "type": t, "description": rng.choice(["", f"{n} v{rng.randint(0, 2)}."]),
                 "aliases": ["Write-Ahead Log"] if n == "WAL" and rng.random() < 0.5 else []} for n, t in named]
    concepts = [{"term": t, "definition": d} for t, d in TERMS.items() if rng.random() < 0.2]
    pool = [n for n, _ in NAMES] + UNMENTIONED + list(TERMS)
    claims = [{"text": " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 8))) + f" {chunk}.{version}.{k}.",
               "entities": rng.sample(pool, rng.randint(0, 3))} for k in range(rng.randint(0, 4))]
    relations = [{"source": rng.choice(pool), "target": rng.choice(pool), "type": rng.choice(["uses", "feeds"]),
                  "description": rng.choice(["", "it uses it", "it feeds it"])} for _ in range(rng.randint(0, 3))]
    return Extract(id=chunk, chunk_id=chunk, document_id=f"d{int(chunk[1:]) // 3}", fingerprint=f"fp-{chunk}-{version}",
                   engine="offline", entities=entities, concepts=concepts, claims=claims, relations=relations)


def _template() -> Template:
    return Template(name="wiki", reduce={"auto_merge": 0.99, "review_band": (0.6, 0.99)})


async def _kb(store) -> dict[str, Any]:
    return await canonical_records(store, (Entity, Relation, Claim))


async def _reduce_from_scratch(path, extracts: dict[str, Extract]) -> dict[str, Any]:
    store = await open_store(f"sqlite:///{path}", "kb")
    try:
        await store.upsert(list(extracts.values()))
        ctx = CompileContext(store=store, engine=OfflineEngine(), embedder=OfflineEmbedder(), template=_template())
        await reduce.run(ctx.template, ctx)
        return await _kb(store)
    finally:
        await store.close()


async def _open(backend: str, tmp_path) -> Any:
    if backend == "sqlite":
        return await open_store(f"sqlite:///{tmp_path / 'kb.db'}", "kb")
    return await open_store(server_url("COMPENDIUM_TEST_MYSQL_URL"), fresh_kb())


@pytest.mark.parametrize(("backend", "seed"), [("sqlite", 1), ("sqlite", 2), ("sqlite", 3), ("sqlite", 4), ("mariadb", 5)])
async def test_reduce_from_the_ledger_equals_reduce_from_scratch(tmp_path, backend, seed):
    rng = random.Random(seed)
    store = await _open(backend, tmp_path)
    extracts = {f"c{n:03d}": _extract(rng, f"c{n:03d}", 0) for n in range(30)}
    await store.upsert(list(extracts.values()))
    redone = []
    try:
        for step in range(10):
            ctx = CompileContext(store=store, engine=OfflineEngine(), embedder=OfflineEmbedder(), template=_template())
            if step:
                changed = rng.sample(sorted(extracts), rng.randint(1, 3))
                for c in changed:
                    extracts[c] = _extract(rng, c, step)
                gone = rng.sample(sorted(set(extracts) - set(changed)), rng.randint(0, 2))
                added = [f"c{100 + step * 3 + k:03d}" for k in range(rng.randint(0, 2))]
                for c in added:
                    extracts[c] = _extract(rng, c, step)
                for c in gone:
                    del extracts[c]
                await store.upsert([extracts[c] for c in [*changed, *added]])
                await store.delete(Extract, {"id": gone}) if gone else None
                # What MAP hands REDUCE after extracting these chunks.
                ctx.state["map"] = {"changed_chunks": sorted([*changed, *added]), "purged_chunks": sorted(gone), "incomplete": False}
                set_rollup(ctx.state, "map", extracts_fingerprint((e.id, e.fingerprint) for e in extracts.values()))
            result = await reduce.run(ctx.template, ctx)
            redone.append(result.details["chunks_redone"])
            assert await _kb(store) == await _reduce_from_scratch(tmp_path / f"fresh{step}.db", extracts), f"step {step}"
    finally:
        if backend != "sqlite":
            await drop_kbs(store, [store.kb])
        await store.close()
    assert redone[0] == 30 and all(n < len(extracts) for n in redone[1:])


@pytest.mark.parametrize("handed", ["all", "stale"])
async def test_reduce_from_the_extracts_map_handed_on_equals_reduce_from_the_store(tmp_path, handed):
    """A first compile's REDUCE takes MAP's extracts from memory, only when they are what MAP
    says is stored: a hand-off missing one is not trusted, and the store is read instead."""
    rng = random.Random(7)
    extracts = {f"c{n:03d}": _extract(rng, f"c{n:03d}", 0) for n in range(30)}
    store = await _open("sqlite", tmp_path)
    try:
        await store.upsert(list(extracts.values()))
        ctx = CompileContext(store=store, engine=OfflineEngine(), embedder=OfflineEmbedder(), template=_template())
        given = sorted(extracts.values(), key=lambda e: e.id)
        ctx.state["map"] = {"changed_chunks": sorted(extracts), "purged_chunks": [], "incomplete": False,
                            "extracts": given if handed == "all" else given[1:]}
        set_rollup(ctx.state, "map", extracts_fingerprint((e.id, e.fingerprint) for e in extracts.values()))
        await reduce.run(ctx.template, ctx)
        assert "extracts" not in ctx.state["map"]  # not kept alive past REDUCE
        assert await _kb(store) == await _reduce_from_scratch(tmp_path / "fresh.db", extracts)
    finally:
        await store.close()
