"""Bad model replies in MAP and REFINE: retried, never published, never cached; real parts only."""

from __future__ import annotations

import json

import pytest

from compendium.compiler.orchestrator import run_compile
from compendium.phases import map as map_phase
from compendium.phases import plan as plan_phase
from compendium.phases import refine as refine_phase
from compendium.storage.factory import open_store
from compendium.storage.records import Claim, Page, PageVersion
from compendium.templates.schema import Template
from tests.support.llm_server import GARBAGE_MARKDOWN, REFUSAL, TRUNCATED_JSON

from .kb_seed import entity_id, knowledge_base
from .test_map_phase import TEXTS, extracts, seed

PAGES = Template(name="t", artifacts=["wiki_pages"], refine={"concurrency": 2})
MAP = Template(name="t", map={"batch_chunks": 2, "concurrency": 2})
BAD_PAGES = [TRUNCATED_JSON, "", REFUSAL, GARBAGE_MARKDOWN, '{"markdown": "Grace Hopper. [^1]"}']


async def pages_of(store) -> dict[str, Page]:
    return {p.slug: p async for p in store.scan(Page)}  # type: ignore[misc]


async def count(store, kind) -> int:
    return len([r async for r in store.scan(kind)])


async def write_pages(make_ctx, template=PAGES):
    ctx = make_ctx(template)
    await plan_phase.run(template, ctx)
    return await refine_phase.run(template, ctx)


@pytest.mark.parametrize("reply", BAD_PAGES, ids=["truncated-json", "empty", "refusal", "garbage", "json"])
async def test_a_page_whose_replies_stay_bad_fails_and_keeps_its_previous_version(reply, server, store, make_ctx):
    await store.upsert(knowledge_base())
    await write_pages(make_ctx)
    before, versions = await pages_of(store), await count(store, PageVersion)
    await store.upsert([Claim(id="c-new", text="Grace Hopper joined the Navy.", chunk_id="d1-k3",
                              document_id="d1", entity_ids=[entity_id("Grace Hopper")])])
    default = server.responder
    server.responder = lambda request: reply
    server.reset()
    result = await write_pages(make_ctx)
    # One small update: its grouped call and one repair, then the page alone, asked and repaired
    # once: the same failure twice ends the repairs.
    assert (server.calls["page_additions"], server.calls["text"]) == (2, 2)
    assert result.failed == 1 and list(result.details["failed_pages"]) == ["grace-hopper"]
    assert "not usable after 1 repair (the same failure twice)" in result.details["failed_pages"]["grace-hopper"]
    after = await pages_of(store)
    kept = after["grace-hopper"]
    assert (kept.markdown, kept.version, kept.status) == (before["grace-hopper"].markdown, 1, "active")
    assert await count(store, PageVersion) == versions  # no version made from garbage

    # The next run asks again and publishes the update.
    server.responder = default
    server.reset()
    retry = await write_pages(make_ctx)
    assert (retry.failed, retry.details["updated"], server.calls["chat"]) == (0, 1, 1)
    assert "joined the Navy" in (await pages_of(store))["grace-hopper"].markdown


async def test_a_new_page_whose_replies_stay_bad_is_not_created(server, store, make_ctx):
    await store.upsert(knowledge_base(planets=[]))
    server.responder = lambda request: REFUSAL
    result = await write_pages(make_ctx)
    assert result.failed == 4 and result.details["created"] == 0
    assert "refusal" in result.details["failed_pages"]["ada-lovelace"]
    assert await pages_of(store) == {} and await count(store, PageVersion) == 0


@pytest.mark.parametrize("fault", ["truncated", "empty", "refusal", "garbage", "length"])
async def test_one_bad_reply_per_page_costs_a_repair_and_changes_nothing(fault, server, store, make_ctx, tmp_path):
    await store.upsert(knowledge_base())
    await write_pages(make_ctx)
    clean = {slug: p.markdown for slug, p in (await pages_of(store)).items()}
    other = await open_store(f"sqlite:///{tmp_path / 'faulty.db'}")
    try:
        await other.upsert(knowledge_base())
        server.reset()
        server.fault_rate(fault, 1.0)  # every page's first reply is bad; its repair is not
        ctx = make_ctx(PAGES)
        ctx.store = other
        await plan_phase.run(PAGES, ctx)
        result = await refine_phase.run(PAGES, ctx)
        assert result.failed == 0 and server.calls["text"] == 2 * len(clean)
        assert {slug: p.markdown for slug, p in (await pages_of(other)).items()} == clean
    finally:
        await other.close()


def unplaceable(request) -> str:  # type: ignore[no-untyped-def]
    """A MAP reply whose items name no chunk of the batch and whose names no chunk holds."""
    item = {"chunk": "x9", "name": "Somebody Else", "type": "person", "description": "", "aliases": []}
    return json.dumps({"entities": [item, {**item, "name": "Nobody"}], "concepts": [], "claims": [],
                       "relations": [], "topics": []})


async def test_a_map_reply_naming_no_chunk_is_placed_by_its_text(server, store, make_ctx):
    await seed(store)
    server.fault_rate("unknown_labels", 1.0)  # every label is wrong
    result = await map_phase.run(MAP, make_ctx(MAP))
    # Claims and most names are found in one chunk of their batch and go there, with no repair;
    # what sits in both chunks or in neither (a topic named after a heading) is dropped.
    assert (result.done, result.failed) == (5, 0) and server.calls["extraction"] == 3
    stored = await extracts(store)
    assert all(e.claims for e in stored.values())  # each chunk kept its own sentence
    assert all(c["text"] in TEXTS[int(e_id[1:])] for e_id, e in stored.items() for c in e.claims)


async def test_a_map_reply_naming_no_chunk_is_retried_then_fails_the_compile(server, store, make_ctx):
    await seed(store)
    default = server.responder
    server.responder = unplaceable  # three batches, each asked and repaired
    report = await run_compile(make_ctx(MAP), phases=[("map", map_phase.run)])
    assert server.calls["extraction"] == 6  # each batch asked, then repaired once
    assert report.status == "failed"
    assert "map:" in report.error and "the model does not cite chunk labels" in report.error
    stored = await extracts(store)
    assert {e.status for e in stored.values()} == {"failed"}  # a rerun asks again

    server.responder = default
    server.reset()
    rerun = await run_compile(make_ctx(MAP), phases=[("map", map_phase.run)])
    assert rerun.status == "succeeded" and server.calls["extraction"] == 3
    assert {e.status for e in (await extracts(store)).values()} == {"done"}


async def test_a_map_reply_naming_no_chunk_once_is_repaired(server, store, make_ctx):
    await seed(store)
    default, asked = server.responder, []

    def first_unplaceable(request):  # type: ignore[no-untyped-def]
        # Each batch's first reply names no chunk and holds no chunk's text; its repair is clean.
        key = request.prompt
        if request.repair or key in asked:
            return default(request)
        asked.append(key)
        return unplaceable(request)

    server.responder = first_unplaceable
    result = await map_phase.run(MAP, make_ctx(MAP))
    assert (result.done, result.failed, result.details["unknown_label_items"]) == (5, 0, 0)
    assert server.calls["extraction"] == 6


async def test_label_variants_give_the_extracts_of_a_clean_reply(server, store, make_ctx, tmp_path):
    await seed(store)
    await map_phase.run(MAP, make_ctx(MAP))
    clean = {k: (e.entities, e.claims, e.relations, e.topics) for k, e in (await extracts(store)).items()}
    other = await open_store(f"sqlite:///{tmp_path / 'variants.db'}")
    try:
        await seed(other)
        server.reset()
        server.fault_rate("label_variants", 1.0)
        ctx = make_ctx(MAP)
        ctx.store = other
        result = await map_phase.run(MAP, ctx)
        assert server.calls["fault_label_variants"] == 3 and server.calls["extraction"] == 3
        assert result.details["dropped_items"] == 0 and result.details["unknown_label_items"] == 0
        varied = {k: (e.entities, e.claims, e.relations, e.topics) for k, e in (await extracts(other)).items()}
        assert varied == clean and all(any(v) for v in varied.values())
    finally:
        await other.close()
    assert len(TEXTS) == len(clean)
