"""MAP batching: packing, labels, and validation of what the engine sends back."""

from dataclasses import asdict

import pytest

from compendium.engines.tasks import EntityItem, ExtractionReply, RelationItem
from compendium.phases.batching import is_real_name, label_batch, pack_batches, split_reply
from compendium.storage.records import Chunk
from compendium.templates.schema import Template

from .golden_files import load


def chunk(doc: str, ordinal: int, tokens: int) -> Chunk:
    return Chunk(id=f"{doc}-{ordinal}", document_id=doc, ordinal=ordinal, tokens=tokens, text=f"{doc} {ordinal}")


def ids(batches: list[list[Chunk]]) -> list[list[str]]:
    return [[c.id for c in b] for b in batches]


def test_batches_respect_count_and_tokens_in_document_order():
    chunks = [chunk("b", 1, 100), chunk("a", 2, 100), chunk("a", 1, 100), chunk("b", 0, 100)]
    assert ids(pack_batches(chunks, max_chunks=3, max_tokens=1000)) == [["a-1", "a-2"], ["b-0", "b-1"]]
    assert ids(pack_batches(chunks, max_chunks=8, max_tokens=250)) == [["a-1", "a-2"], ["b-0", "b-1"]]
    assert ids(pack_batches(chunks, max_chunks=8, max_tokens=1000)) == [["a-1", "a-2", "b-0", "b-1"]]


def test_a_document_that_fits_whole_in_a_fresh_batch_is_not_split():
    chunks = [chunk("a", 0, 300), chunk("b", 0, 300), chunk("b", 1, 300)]
    assert ids(pack_batches(chunks, max_chunks=8, max_tokens=700)) == [["a-0"], ["b-0", "b-1"]]
    # A document too big for any batch fills batches in order instead.
    big = [chunk("a", 0, 100), *(chunk("b", i, 300) for i in range(4))]
    assert ids(pack_batches(big, max_chunks=8, max_tokens=700)) == [["a-0", "b-0", "b-1"], ["b-2", "b-3"]]


def test_an_oversized_chunk_travels_alone():
    chunks = [chunk("a", 0, 50), chunk("a", 1, 5000), chunk("a", 2, 50)]
    assert ids(pack_batches(chunks, max_chunks=8, max_tokens=1000)) == [["a-0"], ["a-1"], ["a-2"]]


def test_labels_carry_document_title_and_headings():
    c = Chunk(id="x1", document_id="d", text="Body", heading_path=["Intro", "Part"])
    batch, labels = label_batch([c, chunk("d", 2, 10)], {"d": "Guide"})
    assert labels == {"c1": "x1", "c2": "d-2"}
    assert batch.chunks[0].document_title == "Guide" and batch.chunks[0].heading_path == ["Intro", "Part"]


@pytest.mark.parametrize(
    ("name", "real"),
    [
        ("Ada Lovelace", True), ("R2-D2", True), ("3M", True), ("Café", True),
        ("", False), ("   ", False), ("c3", False), ("42", False), ("1,000.5", False),
        ("---", False), ("550e8400-e29b-41d4-a716-446655440000", False),
        ("3f2a9b7c", False), ("f00dcafe12345678", False), ("x" * 101, False),
    ],
)
def test_names_that_name_nothing_are_refused(name, real):
    assert is_real_name(name) is real


def test_split_reply_golden():
    golden = load("map_split")
    reply = ExtractionReply.model_validate(golden["reply"])
    out, counts = split_reply(reply, golden["labels"], Template.model_validate(golden["template"]))
    got = {"chunks": {k: asdict(v) for k, v in out.items()}, "counts": asdict(counts)}
    assert got == golden["expected"]


def test_items_are_capped_per_chunk_and_relations_follow_kept_entities():
    template = Template(name="t", map={"max_items_per_chunk": 2})
    reply = ExtractionReply(
        entities=[EntityItem(chunk="c1", name=n, type="x", description="", aliases=[]) for n in ("A1", "B1", "C1")],
        concepts=[],
        claims=[],
        relations=[RelationItem(chunk="c1", source="A1", target="C1", type="t", description="", strength=1)],
        topics=[],
    )
    out, counts = split_reply(reply, {"c1": "k"}, template)
    assert [e["name"] for e in out["k"].entities] == ["A1", "B1"]
    assert out["k"].relations == []  # C1 was cut, so the relation has no end
    assert counts.dropped == 2


def test_packing_never_spends_an_extra_call_to_keep_documents_whole():
    # Five documents of three chunks: keeping each whole would need three calls of at most
    # two documents; two calls suffice when one document is split.
    chunks = [chunk(d, i, 100) for d in "abcde" for i in range(3)]
    batches = pack_batches(chunks, max_chunks=8, max_tokens=10_000)
    assert len(batches) == 2
    assert sum(len(b) for b in batches) == 15
    # Among two-call packings, only one document is split.
    split_docs = {c.document_id for c in batches[0]} & {c.document_id for c in batches[1]}
    assert len(split_docs) == 1


def test_whitespace_is_folded_in_every_field_and_a_repeated_name_is_read_the_same_each_time():
    template = Template(name="t")
    reply = ExtractionReply.model_validate({
        "entities": [
            {"chunk": "c1", "name": " Ada\tLovelace ", "type": "person", "description": "Wrote\nthe  first\u00a0program. ",
             "aliases": ["Ada  Lovelace", "Countess\u2003of Lovelace"]},
            {"chunk": "c1", "name": "Charles Babbage", "type": "person", "description": "Built engines.", "aliases": []},
        ],
        "concepts": [{"chunk": "c1", "term": "Analytical\u00a0Engine", "definition": " A  machine. "}],
        "claims": [
            {"chunk": "c1", "text": "Ada wrote notes.", "entities": [" Ada\tLovelace ", "Ada Lovelace", "42"]},
            {"chunk": "[c1]", "text": "  Babbage\u3000designed it.\n", "entities": ["Charles  Babbage"]},
        ],
        "relations": [{"chunk": "c1", "source": " Ada\tLovelace ", "target": "Charles\nBabbage", "type": " worked  with ",
                       "description": "Together\t1843.", "strength": 3}],
        "topics": [{"chunk": "c1", "name": " Computing\thistory "}, {"chunk": "c1", "name": "Computing history"}],
    })
    out, counts = split_reply(reply, {"c1": "k"}, template)
    items = out["k"]
    assert items.entities[0] == {"name": "Ada Lovelace", "type": "person", "description": "Wrote the first program.",
                                 "aliases": ["Countess of Lovelace"]}  # the alias equal to the name is dropped
    assert items.concepts == [{"term": "Analytical Engine", "definition": "A machine."}]
    assert items.claims == [
        {"text": "Ada wrote notes.", "entities": ["Ada Lovelace"]},  # the same name twice, and a number dropped
        {"text": "Babbage designed it.", "entities": ["Charles Babbage"]},
    ]
    assert items.relations == [{"source": "Ada Lovelace", "target": "Charles Babbage", "type": "worked with",
                                "description": "Together 1843.", "strength": 3.0}]
    assert items.topics == ["Computing history"]  # the second is the same topic once folded
    assert (counts.items, counts.dropped, counts.unknown_labels) == (8, 1, 0)
