"""REDUCE end to end on a real SQLite store with the offline engine and embedder."""

from __future__ import annotations

from collections import Counter

import pytest

from compendium.engines.offline.engine import OfflineEngine
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.phases import reduce
from compendium.pipeline.context import CompileContext
from compendium.storage.factory import open_store
from compendium.storage.records import CacheEntry, Claim, Entity, Extract, Relation
from compendium.templates.schema import Template


def ent(name, type_="technology", description="", aliases=()):
    return {"name": name, "type": type_, "description": description, "aliases": list(aliases)}


def rel(source, target, type_="uses"):
    return {"source": source, "target": target, "type": type_, "description": f"{source} {type_} {target}", "strength": 1.0}


def extract(chunk, doc, entities=(), claims=(), relations=(), concepts=()):
    return Extract(
        id=chunk, chunk_id=chunk, document_id=doc, fingerprint=f"fp-{chunk}", engine="offline",
        entities=list(entities), concepts=list(concepts), claims=list(claims), relations=list(relations),
    )


CORPUS = [
    extract("c1", "d1", entities=[ent("Postgres", description="A relational database."), ent("Write-Ahead Log", aliases=["WAL"], description="The log of changes.")],
            claims=[{"text": "Postgres writes every change to the WAL first.", "entities": ["Postgres", "WAL"]}],
            relations=[rel("Postgres", "WAL")]),
    extract("c2", "d1", entities=[ent("Postgress", description="A relational database system."), ent("WAL", description="Durability mechanism.")],
            claims=[{"text": "Postgress replays the WAL after a crash.", "entities": ["Postgress", "WAL"]}],
            relations=[rel("Postgress", "WAL")]),
    extract("c3", "d2", entities=[ent("Postgres", description="A relational database."), ent("Vacuum", type_="process", description="Reclaims dead rows.")],
            claims=[{"text": "Vacuum keeps Postgres tables small.", "entities": ["Vacuum", "Postgres"]}],
            relations=[rel("Vacuum", "Postgres", "maintains")],
            concepts=[{"term": "MVCC", "definition": "Multi-version concurrency control."}]),
    extract("c4", "d3", entities=[ent("Postgres", description="Object-relational system.")],
            claims=[{"text": "Postgres supports MVCC.", "entities": ["Postgres", "MVCC"]}]),
]


@pytest.fixture
async def ctx(tmp_path):
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}", "kb")
    # A wide review band sends "Postgres"/"Postgress" to tier 3; summarise clusters with > 2 descriptions.
    template = Template(name="wiki", reduce={"auto_merge": 0.99, "review_band": (0.6, 0.99), "summarize_over": 2, "judge_batch": 2})
    context = CompileContext(store=store, engine=OfflineEngine(), embedder=OfflineEmbedder(), template=template)
    await store.upsert(CORPUS)
    yield context
    await store.close()


async def entities(ctx) -> dict[str, Entity]:
    return {e.name: e async for e in ctx.store.scan(Entity)}


async def cache_counts(ctx) -> Counter[str]:
    return Counter([c.namespace async for c in ctx.store.scan(CacheEntry)])


async def test_builds_canonical_records_with_tier3_and_summaries(ctx):
    result = await reduce.run(ctx.template, ctx)
    ents = await entities(ctx)
    assert set(ents) == {"Postgres", "WAL", "Vacuum", "MVCC"}
    pg = ents["Postgres"]
    assert pg.aliases == ["Postgress"]  # the typo was judged the same thing in tier 3
    assert pg.chunk_ids == ["c1", "c2", "c3", "c4"] and pg.document_ids == ["d1", "d2", "d3"]
    assert 0 < len(pg.description) <= 800  # three distinct descriptions: summarised
    assert ents["WAL"].aliases == ["Write-Ahead Log"] and ents["MVCC"].category == "concept"
    assert pg.embedding is not None and pg.embedding.shape == (256,)
    rels = {(r.source, r.target, r.type): r async for r in ctx.store.scan(Relation)}
    assert rels[(pg.id, ents["WAL"].id, "uses")].strength == 2
    assert (ents["Vacuum"].id, pg.id, "maintains") in rels
    claims = [c async for c in ctx.store.scan(Claim)]
    assert len(claims) == 4
    assert {tuple(c.entity_ids) for c in claims} >= {(pg.id, ents["WAL"].id), (pg.id, ents["MVCC"].id)}
    d = result.details
    assert d["tier3_merged"] >= 1 and d["tier3_cached"] == 0 and d["summaries"] >= 1
    assert d["entities"] == 3 and d["concepts"] == 1 and d["relations"] == 2 and d["claims"] == 4
    assert sorted(ctx.state["reduce"]["changed_entities"]) == sorted(e.id for e in ents.values())


async def test_a_dunder_method_and_the_builtin_of_its_name_stay_two_entities(tmp_path):
    # Tier 1 reads underscores as spaces and the offline embedder sees nearly the same letters:
    # `__len__()` and `len()` (or `os._exit()`'s `_exit()` and `exit()`, `update_wrapper()` and
    # WRAPPER_UPDATES, `--version` and `version()`) met every merge rule.
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}", "kb")
    try:
        ctx = CompileContext(store=store, engine=OfflineEngine(), embedder=OfflineEmbedder(), template=Template(name="wiki"))
        await store.upsert([
            extract("c1", "d1", entities=[ent("len()", description="Return the length of an object."),
                                          ent("__len__()", description="Called to implement len().")]),
            extract("c2", "d2", entities=[ent("_exit()"), ent("exit()"), ent("max_wal_size"), ent("max wal size")]),
            extract("c3", "d3", entities=[ent("update_wrapper"), ent("WRAPPER_UPDATES"), ent("--version"),
                                          ent("version()")]),
        ])
        await reduce.run(ctx.template, ctx)
        names = set(await entities(ctx))
        apart = {"len()", "__len__()", "_exit()", "exit()", "update_wrapper", "WRAPPER_UPDATES", "--version", "version()"}
        assert apart <= names and len(names) == 9  # max_wal_size and max wal size: one
    finally:
        await store.close()


async def test_unchanged_rerun_is_skipped_and_costs_nothing(ctx):
    await reduce.run(ctx.template, ctx)
    before, ents = await cache_counts(ctx), await entities(ctx)
    again = await reduce.run(ctx.template, ctx)
    assert again.skipped == again.items == 4 and again.done == 0
    assert await cache_counts(ctx) == before
    assert {n: e.id for n, e in (await entities(ctx)).items()} == {n: e.id for n, e in ents.items()}
    assert ctx.state["reduce"]["changed_entities"] == []


async def test_unrelated_extract_keeps_ids_and_reuses_every_cached_answer(ctx):
    first = await reduce.run(ctx.template, ctx)
    ids, before = {n: e.id for n, e in (await entities(ctx)).items()}, await cache_counts(ctx)
    await ctx.store.upsert([extract("c9", "d9", entities=[ent("Quokka", type_="animal", description="A small marsupial.")])])
    second = await reduce.run(ctx.template, ctx)
    after = await entities(ctx)
    assert {n: after[n].id for n in ids} == ids and "Quokka" in after
    counts = await cache_counts(ctx)
    assert counts["embedding"] == before["embedding"] + 1  # only the new text was embedded
    assert counts["summary"] == before["summary"] and counts["pair"] == before["pair"]
    assert second.details["tier3_cached"] == first.details["tier3_pairs"] == second.details["tier3_pairs"]
    assert ctx.state["reduce"]["changed_entities"] == [after["Quokka"].id]


async def test_a_description_said_more_often_asks_for_no_new_summary(ctx):
    """New chunks repeating a description the summary is written from make it the best
    supported, but its inputs stay the same texts: no call, the same description."""
    await reduce.run(ctx.template, ctx)
    before, pg = await cache_counts(ctx), (await entities(ctx))["Postgres"]
    await ctx.store.upsert([extract(c, "d5", entities=[ent("Postgres", description="Object-relational system.")])
                            for c in ("c5", "c6")])
    await reduce.run(ctx.template, ctx)
    after = (await entities(ctx))["Postgres"]
    assert {"c5", "c6"} <= set(after.chunk_ids)
    assert (await cache_counts(ctx))["summary"] == before["summary"]
    assert after.description == pg.description


async def test_records_of_a_removed_extract_disappear(ctx):
    await reduce.run(ctx.template, ctx)
    before = await entities(ctx)
    await ctx.store.delete(Extract, {"id": ["c3"]})
    await reduce.run(ctx.template, ctx)
    ents = await entities(ctx)
    # Vacuum and the MVCC concept were only written in c3.
    assert set(ents) == {"Postgres", "WAL"} and ents["Postgres"].chunk_ids == ["c1", "c2", "c4"]
    assert ctx.state["reduce"]["removed_entities"] == sorted([before["Vacuum"].id, before["MVCC"].id])
    assert ents["Postgres"].id == before["Postgres"].id
    assert [r async for r in ctx.store.scan(Relation, {"type": "maintains"})] == []
    assert [c async for c in ctx.store.scan(Claim, {"chunk_id": "c3"})] == []


async def test_a_summary_is_written_from_the_descriptions_there_are_now(ctx):
    """A summary is kept under exactly what it is written from: a new description rewrites it
    (a compile from scratch would write it so), going back to the same descriptions does not."""
    await reduce.run(ctx.template, ctx)
    before = await cache_counts(ctx)
    pg = (await entities(ctx))["Postgres"]

    await ctx.store.upsert([extract("c5", "d4", entities=[ent("Postgres", description="An open-source database.")])])
    await reduce.run(ctx.template, ctx)
    assert (await cache_counts(ctx))["summary"] == before["summary"] + 1
    assert "open-source" in (await entities(ctx))["Postgres"].description

    await ctx.store.delete(Extract, {"id": ["c5"]})  # back to the first descriptions: no call
    await reduce.run(ctx.template, ctx)
    assert (await cache_counts(ctx))["summary"] == before["summary"] + 1
    assert (await entities(ctx))["Postgres"].description == pg.description

    # A description the summary was written from goes away: so does its text.
    await ctx.store.delete(Extract, {"id": ["c4"]})
    await reduce.run(ctx.template, ctx)
    assert "Object-relational" not in (await entities(ctx))["Postgres"].description
