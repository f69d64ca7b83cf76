"""Mentions written alike in many chunks are resolved once but count as often as they occur."""

from __future__ import annotations

import gc
import weakref

import pytest

from compendium.fingerprint import short_id
from compendium.phases.reduce import claim_id
from compendium.phases.reduce_chunks import relation_id
from compendium.phases.resolution import build_groups, collect_mentions, tier1_labels
from compendium.pipeline.collector import collector_paused

from .test_resolution import by_name, ent, extract, resolve


def test_a_concept_joins_the_type_its_name_is_given_most_often_counting_every_alike_mention():
    # "module" three times written identically, "component" twice: the concept takes "module"
    # (alphabetical order, the tie-break, would say "component").
    exs = [extract(f"c{i}", entities=[ent("Pool", "module")]) for i in range(3)]
    exs += [extract(f"d{i}", entities=[ent("Pool", "component", aliases=[f"P{i}"])]) for i in range(2)]
    exs.append(extract("e1", concepts=[{"term": "Pool", "definition": "Where pages wait."}]))
    out, joins, _ = resolve(exs)
    assert joins == 1
    pool = [e for e in out.entities if e.name == "Pool" and e.type == "module"]
    assert len(pool) == 1 and "e1" in pool[0].chunk_ids and pool[0].category == "entity"


def test_alike_mentions_keep_each_chunk_its_own_description_and_document():
    exs = [extract("c1", doc="d1", entities=[ent("Buffer Pool", description="Caches pages.")]),
           extract("c2", doc="d2", entities=[ent("Buffer Pool", description="Holds hot pages.")]),
           extract("c3", doc="d2", entities=[ent("Buffer Pool")])]
    mentions = collect_mentions(exs)
    labels, _ = tier1_labels(mentions)
    assert labels.tolist() == [0, 0, 0]  # a label is the first index of its group's mentions
    (group,), _ = build_groups(mentions, labels)
    assert group.names == {"Buffer Pool": {"c1", "c2", "c3"}}
    assert group.descriptions == {"Caches pages.": {"c1"}, "Holds hot pages.": {"c2"}}
    assert group.document_ids == {"d1", "d2"} and group.chunk_ids == {"c1", "c2", "c3"}


def test_a_name_used_most_often_for_one_entity_resolves_there_in_chunks_that_do_not_define_it():
    exs = [extract(f"c{i}", entities=[ent("WAL", "log")]) for i in range(3)]
    exs.append(extract("d1", entities=[ent("WAL", "protocol")]))
    exs.append(extract("x1", entities=[ent("Writer", "process")],
                       claims=[{"text": "The Writer flushes the WAL.", "entities": ["Writer", "wal"]}]))
    out, _, _ = resolve(exs)
    names = {e.id: (e.name, e.type) for e in out.entities}
    (claim,) = [c for c in out.claims if c.chunk_id == "x1"]
    assert [names[i] for i in claim.entity_ids] == [("Writer", "process"), ("WAL", "log")]
    assert by_name(out)["Writer"].degree == 0


@pytest.mark.parametrize("text", ["plain", 'quoted "words" and \\ back', "é ü 😀 \u2028 tab\tnew\nline", ""])
def test_a_claim_id_is_the_short_id_of_its_chunk_and_text(text: str):
    assert claim_id("chunk-1", text) == short_id("claim", "chunk-1", text)


@pytest.mark.parametrize("text", ["related_to", 'quoted "type" \\', "é 😀 \u2028\t\n", ""])
def test_a_relation_id_is_the_short_id_of_its_ends_and_type(text: str):
    assert relation_id("e1", text, text) == short_id("rel", "e1", text, text)


def test_the_collector_runs_again_once_the_last_pausing_phase_ends_even_on_an_error():
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with collector_paused("compile"):
            with collector_paused("compile"):
                assert not gc.isenabled()
            assert not gc.isenabled()  # the outer phase still runs
            raise RuntimeError("phase failed")
    assert gc.isenabled()


def test_cycles_left_by_one_compile_are_collected_when_the_next_one_pauses_the_collector():
    class Node:
        def __init__(self):
            self.me = self

    with collector_paused("first compile"):
        cycle = Node()
    alive = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert alive() is not None  # frozen with what the first compile left
    with collector_paused("second compile"):
        assert alive() is None
