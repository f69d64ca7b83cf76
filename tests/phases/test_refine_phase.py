"""REFINE end to end: pages written from evidence, stored at once, resumable; real parts only."""

import dataclasses

import pytest

from compendium.engines.openai_embedder import OpenAIEmbedder
from compendium.engines.usage import UsageMeter
from compendium.errors import EngineUnavailable
from compendium.phases import plan as plan_phase
from compendium.phases import refine as refine_phase
from compendium.phases.refine import shrank_too_much
from compendium.settings import EmbeddingSettings
from compendium.storage.records import Claim, Entity, Page
from compendium.templates.schema import Template
from tests.support.llm_responder import EVIDENCE_LINE

from .kb_seed import PEOPLE, entity_id, knowledge_base

TEMPLATE = Template(name="t", plan={"topics": {"min_size": 3}}, refine={"concurrency": 2})


async def compile_pages(template, make_ctx):
    ctx = make_ctx(template)
    await plan_phase.run(template, ctx)
    return ctx, await refine_phase.run(template, ctx)


async def pages_of(store):
    return {p.slug: p async for p in store.scan(Page)}


async def test_pages_are_written_once_with_citations_links_and_a_summary(server, store, make_ctx):
    await store.upsert(knowledge_base())
    ctx, result = await compile_pages(TEMPLATE, make_ctx)
    assert result.details["created"] == 10 and result.failed == 0
    assert server.calls["text"] == 10
    assert ctx.state["refine"]["created"][0:1] == ["ada-lovelace"]
    pages = await pages_of(store)
    ada = pages["ada-lovelace"]
    assert (ada.status, ada.version, ada.kind, ada.subject_id) == ("active", 1, "entity", entity_id("Ada Lovelace"))
    assert ada.cited_chunks and set(ada.cited_chunks) <= {f"d1-k{i}" for i in range(5)}
    assert "[^1]: Pioneers › Overview — chunk " in ada.markdown
    assert ada.outlinks and set(ada.outlinks) <= set(pages)
    assert ada.summary and "[^" not in ada.summary
    assert ada.embedding is not None and ada.evidence_fingerprint
    topics = [p for p in pages.values() if p.kind == "topic"]
    assert len(topics) == 2 and any("ada-lovelace" in t.outlinks for t in topics)

    # Nothing changed: nothing is rewritten, no call is made.
    server.reset()
    _ctx, again = await compile_pages(TEMPLATE, make_ctx)
    assert again.details["unchanged"] == 10 and server.calls["chat"] == 0
    assert (await pages_of(store))["ada-lovelace"].version == 1


async def test_a_crash_mid_refine_resumes_from_the_stored_plan(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"], refine={"concurrency": 1})
    await store.upsert(knowledge_base())
    await plan_phase.run(template, make_ctx(template))
    default, answered = server.responder, []

    def then_lose_the_key(request):
        answered.append(1)
        if len(answered) == 3:
            server.fail_next(1, "auth")  # the fourth page finds the endpoint refusing us
        return default(request)

    server.responder = then_lose_the_key
    try:
        await refine_phase.run(template, make_ctx(template))
    except Exception as exc:
        assert type(exc).__name__ == "EngineUnavailable"
    else:
        raise AssertionError("an auth failure must abort REFINE")
    assert len(await pages_of(store)) == 3

    server.responder = default
    server.reset()
    resumed = await refine_phase.run(template, make_ctx(template))  # fresh context: plan from the store
    assert server.calls["text"] == 5
    assert (resumed.details["created"], resumed.details["unchanged"]) == (5, 3)


async def test_one_failing_page_does_not_stop_the_others(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"], refine={"concurrency": 1})
    await store.upsert(knowledge_base())
    server.fail_next(1, "500")
    _ctx, result = await compile_pages(template, make_ctx)
    assert (result.failed, result.details["created"]) == (1, 7)
    server.reset()
    _ctx, retry = await compile_pages(template, make_ctx)
    assert (retry.details["created"], retry.details["unchanged"]) == (1, 7)


async def test_new_evidence_updates_only_the_pages_it_touches(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base())
    await compile_pages(template, make_ctx)
    old = (await pages_of(store))["grace-hopper"]
    await store.upsert([Claim(id="c-new", text="Grace Hopper wrote the first compiler.", chunk_id="d1-k3",
                              document_id="d1", entity_ids=[entity_id("Grace Hopper")])])
    server.reset()
    _ctx, result = await compile_pages(template, make_ctx)
    assert (result.details["updated"], result.details["unchanged"]) == (1, 7)
    new = (await pages_of(store))["grace-hopper"]
    assert new.version == 2 and new.created_at == old.created_at
    assert "first compiler" in new.markdown
    asked = server.requests[-1]
    assert asked.schema_name == "page_additions" and "first compiler" in asked.prompt  # a small update
    assert "Existing page:" not in asked.prompt  # only its new evidence and headings were sent


async def test_a_big_update_is_written_with_the_existing_page(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base())
    await compile_pages(template, make_ctx)
    old = (await pages_of(store))["grace-hopper"]
    long_fact = "Grace Hopper wrote the first compiler " + "and documented every step of it " * 60 + "."
    await store.upsert([Claim(id="c-new", text=long_fact, chunk_id="d1-k3",
                              document_id="d1", entity_ids=[entity_id("Grace Hopper")])])
    server.reset()
    _ctx, result = await compile_pages(template, make_ctx)
    assert result.details["updated"] == 1 and "page_additions" not in server.calls
    prompt = server.requests[-1].prompt
    assert old.markdown.split("\n")[0][:40] in prompt  # the existing page was handed to the writer
    assert "first compiler" in (await pages_of(store))["grace-hopper"].markdown


async def test_an_update_that_cites_none_of_the_new_evidence_keeps_the_page(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base())
    await compile_pages(template, make_ctx)
    old = (await pages_of(store))["grace-hopper"]
    await store.upsert([Claim(id="c-new", text="Grace Hopper joined the Navy.", chunk_id="d1-k3",
                              document_id="d1", entity_ids=[entity_id("Grace Hopper")])])
    server.responder = lambda request: "Hopper was a pioneer of computing."
    server.reset()
    _ctx, result = await compile_pages(template, make_ctx)
    assert server.calls["text"] == 2  # asked, then one repair: the same failure twice ends it
    assert result.failed == 1 and "cites none of the evidence" in result.details["failed_pages"]["grace-hopper"]
    kept = (await pages_of(store))["grace-hopper"]
    assert (kept.markdown, kept.version) == (old.markdown, old.version)


async def test_edited_pages_are_never_overwritten(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base())
    await compile_pages(template, make_ctx)
    page = (await pages_of(store))["grace-hopper"]
    await store.upsert([dataclasses.replace(page, markdown="Written by a person.", edited=True)])
    await store.upsert([Claim(id="c-new", text="Grace Hopper joined the Navy.", chunk_id="d1-k3",
                              document_id="d1", entity_ids=[entity_id("Grace Hopper")])])
    server.reset()
    _ctx, result = await compile_pages(template, make_ctx)
    assert result.details["pending_edits"] == 1 and server.calls["text"] == 0
    kept = (await pages_of(store))["grace-hopper"]
    assert kept.markdown == "Written by a person." and kept.pending_update


async def test_deleted_subjects_mark_pages_deleted_and_links_to_them_go(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base())
    await compile_pages(template, make_ctx)
    assert "alan-turing" in (await pages_of(store))["ada-lovelace"].outlinks
    await store.delete(Entity, {"id": [entity_id("Alan Turing")]})
    ctx, result = await compile_pages(template, make_ctx)
    assert ctx.state["refine"]["deleted"] == ["alan-turing"]
    pages = await pages_of(store)
    assert pages["alan-turing"].status == "deleted" and pages["alan-turing"].markdown
    for slug in ("ada-lovelace", "charles-babbage", "grace-hopper"):
        assert "alan-turing" not in pages[slug].outlinks
        assert "[[alan-turing" not in pages[slug].markdown
    assert result.details["deleted"] == 1 and len(PEOPLE) == 4


async def test_unknown_links_and_citations_are_removed_and_counted(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base(people=PEOPLE[:2], planets=[]))
    def responder(request):  # type: ignore[no-untyped-def]
        first = EVIDENCE_LINE.search(request.prompt)
        return f"{first['text']} [^{first['ref']}] [^42]. See [[nowhere]] and [[charles-babbage]]."

    server.responder = responder
    _ctx, result = await compile_pages(template, make_ctx)
    # [^42] on both pages; [[nowhere]] on both, and Babbage's own page may not link to itself.
    assert result.details["removed_citations"] == 2 and result.details["unlinked_links"] == 3
    ada = (await pages_of(store))["ada-lovelace"]
    assert ada.outlinks == ["charles-babbage"] and "nowhere" in ada.markdown and "[^42]" not in ada.markdown


def test_shrink_rule_is_capped_by_the_page_budget():
    long_page = "word " * 2000
    assert shrank_too_much("short", long_page, [], 0.6, 1200)
    assert not shrank_too_much("word " * 800, long_page, [], 0.6, 1200)
    assert not shrank_too_much("anything", "", [], 0.6, 1200)


async def test_cancel_stops_writing_pages(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base())
    ctx = make_ctx(template)
    await plan_phase.run(template, ctx)
    ctx.cancel.set()
    result = await refine_phase.run(template, ctx)
    assert result.details["cancelled"] and result.details["created"] == 0 and server.calls["text"] == 0


async def test_pages_are_stored_only_with_their_embedding(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"], refine={"concurrency": 2})
    await store.upsert(knowledge_base())
    ctx = make_ctx(template)
    await plan_phase.run(template, ctx)
    missing = OpenAIEmbedder.from_settings(
        EmbeddingSettings(base_url=server.base_url, api_key="test-key", max_retries=0),
        model="no-such-embedding-model", usage=UsageMeter(),
    )
    try:
        with pytest.raises(EngineUnavailable, match="no-such-embedding-model"):
            await refine_phase.run(template, dataclasses.replace(ctx, embedder=missing))
    finally:
        await missing.close()
    assert await pages_of(store) == {}  # a page without its vector is never stored
    result = await refine_phase.run(template, make_ctx(template))
    assert result.details["created"] == 8
    assert all(p.embedding is not None for p in (await pages_of(store)).values())


async def test_a_page_failing_twice_on_the_same_evidence_is_not_asked_again_until_it_changes(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base())
    writes = server.responder
    server.responder = lambda request: "Nothing here cites anything."  # every page fails its check
    failed_calls = []
    for _ in range(3):
        server.reset()
        _ctx, result = await compile_pages(template, make_ctx)
        failed_calls.append(server.calls["text"])
        assert result.failed == result.items == 8 and "grace-hopper" in result.details["failed_pages"]
    assert failed_calls[0] > 0 and failed_calls[1] == failed_calls[0]  # retried once, on the next compile
    assert failed_calls[2] == 0  # then left alone: a failure costs its calls once more, not every compile
    assert "--retry-failed" in result.details["failed_pages"]["grace-hopper"]

    # Asked for, the pages are asked again; written, they forget their failures.
    server.responder = writes
    server.reset()
    ctx = make_ctx(template)
    ctx.state[refine_phase.RETRY_FAILED] = True
    await plan_phase.run(template, ctx)
    result = await refine_phase.run(template, ctx)
    assert result.failed == 0 and result.details["created"] == 8 and server.calls["text"] == 8

    # New evidence for a backed-off page makes it worth asking again by itself.
    server.responder = lambda request: "Nothing here cites anything."
    await compile_pages(template, make_ctx)  # (every page stands: nothing to ask)
    await store.upsert([Claim(id="c-new", text="Grace Hopper joined the Navy.", chunk_id="d1-k3",
                              document_id="d1", entity_ids=[entity_id("Grace Hopper")])])
    for expected in (True, True, False):
        server.reset()
        await compile_pages(template, make_ctx)
        assert (server.calls["text"] > 0) == expected
    await store.upsert([Claim(id="c-newer", text="Grace Hopper wrote the first compiler.", chunk_id="d1-k3",
                              document_id="d1", entity_ids=[entity_id("Grace Hopper")])])
    server.reset()
    await compile_pages(template, make_ctx)
    assert server.calls["text"] > 0


async def test_a_withheld_page_whose_rewrite_shrinks_stays_out_of_sight(server, store, make_ctx):
    template = Template(name="t", artifacts=["wiki_pages"])
    await store.upsert(knowledge_base())
    await compile_pages(template, make_ctx)
    page = (await pages_of(store))["grace-hopper"]
    # A page kept out of sight: written citing nothing (long, so any rewrite is far shorter).
    await store.upsert([dataclasses.replace(page, markdown="# Grace Hopper\n\n" + "Words citing nothing. " * 300,
                                            cited_chunks=[], status="withheld")])
    await store.upsert([Claim(id="c-new", text="Grace Hopper joined the Navy.", chunk_id="d1-k3",
                              document_id="d1", entity_ids=[entity_id("Grace Hopper")])])
    server.reset()
    await compile_pages(template, make_ctx)
    kept = (await pages_of(store))["grace-hopper"]
    assert kept.pending_update  # the rewrite shrank too much: the safe version is kept ...
    assert kept.status == "withheld"  # ... and a version citing nothing is never published
