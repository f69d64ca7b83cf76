"""Every model reply is checked before it is cached or returned: through the scripted server
and the real openai client, with the faults models and proxies produce."""

from __future__ import annotations

import json

import pytest

from compendium.engines.factory import build_engine
from compendium.engines.tasks import ChunkInput, EvidenceItem, ExtractionBatch, PageRequest
from compendium.engines.usage import UsageMeter
from compendium.errors import LabelError, ReplyError
from compendium.phases.batching import split_reply
from compendium.storage.response_cache import StoreResponseCache
from compendium.templates.schema import Template
from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import GARBAGE_MARKDOWN, REFUSAL, TRUNCATED_JSON

from .conftest import cached_replies

TEMPLATE = Template(name="wiki", entity_types=[{"name": "person"}, {"name": "machine"}])
PAGE = PageRequest(
    slug="ada-lovelace",
    title="Ada Lovelace",
    kind="entity",
    description="A mathematician.",
    aliases=[],
    evidence=[
        EvidenceItem(1, "Ada Lovelace published notes on the Analytical Engine in 1843.", "k1", "History"),
        EvidenceItem(2, "Ada Lovelace worked with Charles Babbage.", "k2", "History"),
    ],
    links=[],
)
BATCH = ExtractionBatch(
    [
        ChunkInput("c1", "Ada Lovelace worked with Charles Babbage on the Analytical Engine.", [], "History"),
        ChunkInput("c2", "Grace Hopper wrote the first compiler for the Harvard Mark I.", [], "Pioneers"),
    ]
)
PAGE_FAULTS = ["truncated", "empty", "refusal", "garbage", "length"]


@pytest.fixture
async def engine(llm_server, store):
    built = build_engine(settings_for(llm_server), TEMPLATE, usage=UsageMeter(), cache=StoreResponseCache(store))
    yield built
    await built.close()


@pytest.mark.parametrize("fault", PAGE_FAULTS)
async def test_a_bad_page_reply_is_repaired_and_only_the_good_one_is_kept(fault, engine, llm_server, store):
    llm_server.fail_next(1, fault)
    markdown = await engine.write_page(PAGE, TEMPLATE)
    assert "Ada Lovelace published notes on the Analytical Engine in 1843. [^1]" in markdown
    assert llm_server.calls["text"] == 2
    repair = llm_server.requests[1]
    assert repair.messages[-1]["role"] == "user" and "cannot be published" in repair.repair
    assert "[^1]" in repair.repair  # the instruction names the evidence to cite
    assert await cached_replies(store) == [markdown] and engine.client.repairs == 1


@pytest.mark.parametrize("reply", [TRUNCATED_JSON, "", REFUSAL, GARBAGE_MARKDOWN, '{"markdown": "Ada. [^1]"}'])
async def test_a_page_that_stays_bad_is_an_error_naming_why_and_is_never_cached(reply, engine, llm_server, store):
    llm_server.responder = lambda request: reply
    with pytest.raises(ReplyError, match=r"page 'ada-lovelace' was not usable after 1 repair \(the same failure twice\)") as caught:
        await engine.write_page(PAGE, TEMPLATE)
    assert caught.value.problem
    assert llm_server.calls["text"] == 2  # two identical failures end it: a third ask would fail the same way
    assert await cached_replies(store) == []
    # The repair was drawn at a higher temperature than the ask: not the same draw again.
    assert llm_server.requests[1].temperature > llm_server.requests[0].temperature


async def test_a_page_failing_differently_each_time_gets_both_repairs(engine, llm_server, store):
    replies = iter([REFUSAL, "", GARBAGE_MARKDOWN])
    llm_server.responder = lambda request: next(replies) if request.schema_name is None else REFUSAL
    with pytest.raises(ReplyError, match=r"not usable after 2 repairs: the reply (has no prose|cites none)"):
        await engine.write_page(PAGE, TEMPLATE)
    assert llm_server.calls["text"] == 3 and await cached_replies(store) == []


@pytest.mark.parametrize("fault", PAGE_FAULTS)
async def test_a_page_that_keeps_meeting_a_fault_is_never_published_or_cached(fault, engine, llm_server, store):
    # The prose and its repair, then the page asked as sentences and its repair: all four faulted.
    llm_server.fail_next(4, fault)
    with pytest.raises(ReplyError, match="not usable after 1 repair"):
        await engine.write_page(PAGE, TEMPLATE)
    assert (llm_server.calls["text"], llm_server.calls["page_sentences"]) == (2, 2)
    assert await cached_replies(store) == []


@pytest.mark.parametrize("fault", PAGE_FAULTS)
async def test_a_page_whose_prose_keeps_meeting_a_fault_is_published_from_its_sentences(fault, engine, llm_server, store):
    llm_server.fail_next(2, fault)  # the prose and its repair
    markdown = await engine.write_page(PAGE, TEMPLATE)
    assert markdown == ("Ada Lovelace published notes on the Analytical Engine in 1843.[^1] "
                        "Ada Lovelace worked with Charles Babbage.[^2]")
    assert (llm_server.calls["text"], llm_server.calls["page_sentences"]) == (2, 1)
    assert len(await cached_replies(store)) == 1  # the sentences that passed, not the faulted prose


async def test_a_clean_rerun_asks_again_after_a_bad_reply(llm_server, store):
    default = llm_server.responder
    llm_server.responder = lambda request: REFUSAL
    first = build_engine(settings_for(llm_server), TEMPLATE, usage=UsageMeter(), cache=StoreResponseCache(store))
    try:
        with pytest.raises(ReplyError):
            await first.write_page(PAGE, TEMPLATE)
    finally:
        await first.close()
    llm_server.responder = default
    llm_server.reset()
    again = build_engine(settings_for(llm_server), TEMPLATE, usage=UsageMeter(), cache=StoreResponseCache(store))
    try:
        markdown = await again.write_page(PAGE, TEMPLATE)
    finally:
        await again.close()
    assert llm_server.calls["text"] == 1 and "[^1]" in markdown


async def test_a_page_cut_off_at_the_token_limit_is_asked_again(engine, llm_server):
    llm_server.fail_next(1, "length")
    await engine.write_page(PAGE, TEMPLATE)
    first = llm_server.requests[0]
    assert first.body["max_tokens"] == int(PAGE.max_tokens * 1.5)
    assert "finish_reason: length" in llm_server.requests[1].repair


async def test_map_label_variants_are_read_not_dropped(engine, llm_server):
    llm_server.fail_next(1, "label_variants")
    varied = await engine.extract(BATCH, TEMPLATE)
    assert llm_server.calls["extraction"] == 1  # no repair: every label names a chunk
    written = {item.chunk for item in varied.entities + varied.claims}
    assert written - {"c1", "c2"}  # the labels came back in other shapes...
    uncached = build_engine(settings_for(llm_server), TEMPLATE, usage=UsageMeter())
    try:
        clean = await uncached.extract(BATCH, TEMPLATE)
    finally:
        await uncached.close()
    labels = {"c1": "k1", "c2": "k2"}
    by_clean, _ = split_reply(clean, labels, TEMPLATE)
    by_varied, counts = split_reply(varied, labels, TEMPLATE)
    assert by_varied == by_clean and counts.unknown_labels == 0  # ...and were all read


async def test_a_map_reply_naming_no_chunk_is_placed_by_its_text(engine, llm_server, store):
    llm_server.fail_next(1, "unknown_labels")
    reply = await engine.extract(BATCH, TEMPLATE)
    # Every item's name or sentence is found in one chunk of the batch: no repair is needed.
    assert {item.chunk for item in reply.entities + reply.claims} == {"c1", "c2"}
    assert all(claim.text in BATCH.chunks[int(claim.chunk[1:]) - 1].text for claim in reply.claims)
    assert llm_server.calls["extraction"] == 1


def _unplaceable(request) -> str:  # type: ignore[no-untyped-def]
    """A MAP reply whose items name no chunk and whose names no chunk holds."""
    item = {"chunk": "x9", "name": "Somebody Else", "type": "person", "description": "", "aliases": []}
    return json.dumps({"entities": [item, {**item, "name": "Nobody"}], "concepts": [], "claims": [],
                       "relations": [], "topics": []})


async def test_a_map_reply_naming_no_chunk_is_repaired_with_the_valid_labels(engine, llm_server, store):
    replies = iter([_unplaceable, lambda request: _unplaceable(request).replace('"x9"', '"c1"')
                    .replace("Somebody Else", "Ada Lovelace").replace("Nobody", "Charles Babbage")])
    llm_server.responder = lambda request: next(replies)(request)
    reply = await engine.extract(BATCH, TEMPLATE)
    assert {item.chunk for item in reply.entities} == {"c1"}
    assert llm_server.calls["extraction"] == 2
    repair = llm_server.requests[1].repair
    assert "name no chunk of this batch" in repair and "c1, c2" in repair and "'x9'" in repair
    assert all('"x9"' not in content for content in await cached_replies(store))


async def test_a_map_reply_that_keeps_naming_no_chunk_fails_and_is_never_cached(engine, llm_server, store):
    llm_server.responder = _unplaceable
    with pytest.raises(LabelError) as caught:
        await engine.extract(BATCH, TEMPLATE)
    assert caught.value.unknown == caught.value.items > 0
    assert "the model does not cite chunk labels" in str(caught.value)
    assert llm_server.calls["extraction"] == 2  # retried once, then given up
    assert await cached_replies(store) == []


async def test_a_truncated_map_reply_is_repaired_and_never_cached(engine, llm_server, store):
    llm_server.fail_next(1, "truncated")
    reply = await engine.extract(BATCH, TEMPLATE)
    assert reply.entities and llm_server.calls["extraction"] == 2
    cached = await cached_replies(store)
    assert len(cached) == 1 and TRUNCATED_JSON not in cached[0]


async def test_a_map_reply_that_stays_truncated_fails_and_is_never_cached(engine, llm_server, store):
    llm_server.fail_next(2, "truncated")
    with pytest.raises(ReplyError, match="even after one repair"):
        await engine.extract(BATCH, TEMPLATE)
    assert llm_server.calls["extraction"] == 2 and await cached_replies(store) == []


async def test_a_page_without_markers_whose_sentences_restate_the_evidence_gets_them_without_a_repair(engine, llm_server):
    # As the 1.5B model wrote one page: the evidence's sentences, no marker, and one of its own.
    llm_server.responder = lambda request: (
        "Ada Lovelace published notes on the Analytical Engine in 1843. "
        "Ada Lovelace worked with Charles Babbage. She invented the telephone in Paris."
    )
    markdown = await engine.write_page(PAGE, TEMPLATE)
    assert llm_server.calls["text"] == 1
    assert markdown == ("Ada Lovelace published notes on the Analytical Engine in 1843.[^1] "
                        "Ada Lovelace worked with Charles Babbage.[^2]")


async def test_a_page_that_stays_mostly_unsupported_publishes_its_supported_sentences_only(engine, llm_server):
    evidence = [EvidenceItem(1, "Ada Lovelace published notes on the Analytical Engine in 1843.", "k1", "History"),
                EvidenceItem(2, "Ada Lovelace worked with Charles Babbage.", "k2", "History"),
                EvidenceItem(3, "Charles Babbage designed the Difference Engine in London.", "k3", "History")]
    page = PageRequest(slug="ada", title="Ada", kind="entity", description="", aliases=[], evidence=evidence, links=[])
    invented = " ".join(f"She invented gadget number {n} in Paris." for n in range(5))
    llm_server.responder = lambda request: (
        "Ada Lovelace published notes on the Analytical Engine in 1843. Ada Lovelace worked with Charles Babbage. "
        f"Charles Babbage designed the Difference Engine in London. {invented}"
    )
    markdown = await engine.write_page(page, TEMPLATE)
    assert llm_server.calls["text"] == 2  # asked, repaired once (same failure), then its supported part kept
    assert markdown == ("Ada Lovelace published notes on the Analytical Engine in 1843.[^1] "
                        "Ada Lovelace worked with Charles Babbage.[^2] "
                        "Charles Babbage designed the Difference Engine in London.[^3]")


async def test_a_map_reply_keeps_only_claims_and_names_its_chunk_holds(engine, llm_server, store):
    """A small model copies the prompt's example into its reply under a real chunk's label:
    a claim its chunk does not say, a name its chunk does not hold. Neither is kept."""
    def reply(request) -> str:  # type: ignore[no-untyped-def]
        return json.dumps({
            "entities": [{"chunk": "c1", "name": "Ada Lovelace", "type": "person", "description": "", "aliases": []},
                         {"chunk": "c1", "name": "elect a leader", "type": "concept", "description": "", "aliases": []}],
            "concepts": [], "relations": [], "topics": [],
            "claims": [{"chunk": "c1", "text": "Ada Lovelace worked with Charles Babbage on the Analytical Engine.",
                        "entities": ["Ada Lovelace"]},
                       {"chunk": "c2", "text": "The Harvard Mark I uses Raft, a consensus algorithm, to elect a leader.",
                        "entities": ["Harvard Mark I"]},
                       # every word of its chunk, the actor swapped
                       {"chunk": "c3", "text": "Ada Lovelace designed the Difference Engine.",
                        "entities": ["Ada Lovelace"]},
                       {"chunk": "c3", "text": "Charles Babbage designed the Difference Engine.",
                        "entities": ["Charles Babbage"]}]})
    llm_server.responder = reply
    batch = ExtractionBatch([*BATCH.chunks, ChunkInput(
        "c3", "Charles Babbage designed the Difference Engine, and Ada Lovelace wrote its first program.", [], "Engines")])
    got = await engine.extract(batch, TEMPLATE)
    # "elect a leader" is gone; Charles Babbage, whom a kept claim of c3 is about, is an entity of c3
    assert [(e.chunk, e.name) for e in got.entities] == [("c1", "Ada Lovelace"), ("c3", "Charles Babbage")]
    assert [c.text for c in got.claims] == ["Ada Lovelace worked with Charles Babbage on the Analytical Engine.",
                                            "Charles Babbage designed the Difference Engine."]
