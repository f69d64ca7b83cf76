"""MAP end to end: real SQLite file, real LLM engine, scripted server on 127.0.0.1."""

import json

import pytest

from compendium.errors import BudgetExceeded, EngineUnavailable
from compendium.phases import map as map_phase
from compendium.storage.records import Chunk, Document, Extract
from compendium.templates.schema import Template

TEXTS = [
    "Ada Lovelace worked with Charles Babbage on the Analytical Engine.",
    "Charles Babbage designed the Difference Engine in London.",
    "Ada Lovelace published notes on the Analytical Engine in 1843.",
    "Alan Turing read the notes of Ada Lovelace at Bletchley Park.",
    "Grace Hopper wrote the first compiler for the Harvard Mark I.",
]


async def seed(store, texts=TEXTS):
    await store.upsert([Document(id="d1", title="History of computing", path="h.md"),
                        Document(id="d2", title="Pioneers", path="p.md")])
    chunks = [Chunk(id=f"k{i}", document_id="d1" if i < 3 else "d2", ordinal=i, text=t, tokens=20)
              for i, t in enumerate(texts)]
    await store.upsert(chunks)
    return chunks


async def extracts(store):
    return {e.id: e async for e in store.scan(Extract)}


async def test_extracts_once_then_only_what_changed(server, store, make_ctx):
    template = Template(name="t", map={"batch_chunks": 2, "concurrency": 2})
    await seed(store)
    ctx = make_ctx(template)
    first = await map_phase.run(template, ctx)
    assert (first.items, first.done, first.skipped, first.failed) == (5, 5, 0, 0)
    assert server.calls["chat"] == 3  # 5 chunks, 2 per batch, one call per batch
    assert first.details["batches"] == 3
    stored = await extracts(store)
    assert set(stored) == {f"k{i}" for i in range(5)}
    ada = stored["k0"]
    assert ada.status == "done" and ada.engine == "llm" and ada.document_id == "d1"
    assert {"Ada Lovelace", "Charles Babbage"} <= {e["name"] for e in ada.entities}
    assert all("chunk" not in item for item in ada.entities + ada.claims + ada.relations)

    server.reset()
    again = await map_phase.run(template, make_ctx(template))
    assert (again.done, again.skipped) == (0, 5) and server.calls["chat"] == 0

    # Edit one chunk, delete another: one batch is asked, one extract is purged.
    await store.upsert([Chunk(id="k1", document_id="d1", ordinal=1, tokens=20,
                              text="Charles Babbage designed the Analytical Engine in London.")])
    await store.delete(Chunk, {"id": ["k4"]})
    ctx = make_ctx(template)
    third = await map_phase.run(template, ctx)
    assert (third.done, third.skipped, third.details["purged"]) == (1, 3, 1)
    assert server.calls["chat"] == 1
    assert ctx.state["map"] == {"changed_chunks": ["k1"], "purged_chunks": ["k4"], "incomplete": False}
    assert "k4" not in await extracts(store)


async def test_a_changed_map_prompt_reextracts_everything(server, store, make_ctx):
    await seed(store, TEXTS[:2])
    await map_phase.run(Template(name="t"), make_ctx(Template(name="t")))
    edited = Template(name="t", map={"system": "Extract carefully."})
    server.reset()
    result = await map_phase.run(edited, make_ctx(edited))
    assert result.done == 2 and server.calls["chat"] == 1


async def test_a_failed_batch_is_recorded_and_retried_next_run(server, store, make_ctx):
    template = Template(name="t", map={"batch_chunks": 2, "concurrency": 1})
    await seed(store)
    server.fail_next(1, "500")  # the first batch fails (no retries configured)
    result = await map_phase.run(template, make_ctx(template))
    assert (result.done, result.failed) == (3, 2)
    stored = await extracts(store)
    failed = sorted(k for k, e in stored.items() if e.status == "failed")
    assert failed == ["k0", "k1"] and stored["k0"].error

    server.reset()
    retry = await map_phase.run(template, make_ctx(template))
    assert (retry.done, retry.skipped, retry.failed) == (2, 3, 0)
    assert server.calls["chat"] == 1
    assert all(e.status == "done" for e in (await extracts(store)).values())


async def test_bad_credentials_abort_the_phase(server, store, make_ctx):
    template = Template(name="t", map={"batch_chunks": 1, "concurrency": 1})
    await seed(store)
    server.fail_next(1, "auth")
    with pytest.raises(EngineUnavailable):
        await map_phase.run(template, make_ctx(template))
    assert await extracts(store) == {}  # nothing after the fatal batch was launched


async def test_cancel_stops_launching_batches(server, store, make_ctx):
    template = Template(name="t", map={"batch_chunks": 1})
    await seed(store)
    ctx = make_ctx(template)
    ctx.cancel.set()
    result = await map_phase.run(template, ctx)
    assert result.done == 0 and result.details["cancelled"] and server.calls["chat"] == 0


async def test_unusable_items_are_dropped_and_unknown_types_retyped(server, store, make_ctx):
    reply = {
        "entities": [
            {"chunk": "c1", "name": "Ada Lovelace", "type": "Scientist", "description": "", "aliases": []},
            {"chunk": "c1", "name": "Charles Babbage", "type": "PERSON", "description": "", "aliases": []},
            {"chunk": "c1", "name": "9f86d081884c7d65", "type": "person", "description": "", "aliases": []},
            {"chunk": "c7", "name": "Ghost", "type": "person", "description": "", "aliases": []},
        ],
        # Usable items (terms the chunk writes), so that half (not most) of the reply is dropped
        # and the compile goes on.
        "concepts": [{"chunk": "c1", "term": "Analytical Engine", "definition": "A machine."},
                     {"chunk": "c1", "term": "Analytical Engines", "definition": "The machines."}],
        "claims": [{"chunk": "c1", "text": "", "entities": []}],
        "relations": [{"chunk": "c1", "source": "Ada Lovelace", "target": "Nobody", "type": "knows",
                       "description": "", "strength": 1}],
        "topics": [],
    }
    server.responder = lambda request: json.dumps(reply)
    template = Template(name="t", entity_types=[{"name": "person"}, {"name": "other"}])
    await seed(store, TEXTS[:1])
    result = await map_phase.run(template, make_ctx(template))
    extract = (await extracts(store))["k0"]
    assert [(e["name"], e["type"]) for e in extract.entities] == [("Ada Lovelace", "other"), ("Charles Babbage", "person")]
    assert extract.claims == [] and extract.relations == []
    assert (result.details["retyped_items"], result.details["dropped_items"]) == (1, 4)
    assert extract.dropped == 3  # the unknown label is not this chunk's


async def test_the_token_budget_aborts_the_phase(server, store, make_ctx):
    template = Template(name="t", map={"batch_chunks": 1, "concurrency": 1})
    await seed(store)
    with pytest.raises(BudgetExceeded):
        await map_phase.run(template, make_ctx(template, budget=1))
    assert server.calls["chat"] == 0
