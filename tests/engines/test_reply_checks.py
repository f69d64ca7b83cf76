"""The checks a model reply passes before anything keeps it: chunk labels and page prose."""

from __future__ import annotations

import pytest

from compendium.engines.replies import LabelReader, label_problem, page_problem

LABELS = ["c1", "c2", "c3", "c12"]


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("c3", "c3"),
        ("[c3]", "c3"),
        ("C3", "c3"),
        ("chunk c3", "c3"),
        ("Chunk 3", "c3"),
        ("c3:", "c3"),
        ("(c3)", "c3"),
        ("c3.", "c3"),
        (" c3 ", "c3"),
        ("[C12]", "c12"),
        ("c03", "c3"),
        ("#c2", "c2"),
        ('"c1"', "c1"),
        ("chunk-2", "c2"),
        ("3", "c3"),
    ],
)
def test_labels_are_read_in_the_shapes_models_write_them(written, meant):
    assert LabelReader(LABELS).read(written) == meant


@pytest.mark.parametrize("written", ["c4", "x3", "c", "", "chunk", "the third chunk", "c1 and c2", "k3", "c1c2"])
def test_a_label_that_names_no_chunk_of_the_batch_is_none(written):
    assert LabelReader(LABELS).read(written) is None


def test_a_reply_is_refused_only_when_most_of_its_labels_name_no_chunk():
    assert label_problem(["c1", "[c2]", "x9"], LABELS) is None  # one of three lost
    problem = label_problem(["c1", "x8", "x9"], LABELS)
    assert problem is not None
    assert "2 of 3 items" in problem and "c1, c2, c3, c12" in problem and "'x8'" in problem
    assert label_problem([], LABELS) is None  # nothing to say is not a label problem


REFS = ["1", "2", "chunk-a"]


@pytest.mark.parametrize(
    ("reply", "finish", "problem"),
    [
        ("", "stop", "empty"),
        ("   \n", "stop", "empty"),
        ('{"entities": [ {"name": "Trunc', "stop", "JSON"),
        ('{"title": "Ada", "body": "Ada wrote notes. [^1]"}', "stop", "JSON"),
        ('```json\n{"page": "x"}\n```', "stop", "JSON"),
        ('[{"name": "Ada"}]', "stop", "JSON"),
        ("I'm sorry, but I can't help with that request.", "stop", "refusal"),
        ("Sorry, I cannot write this page.", "stop", "refusal"),
        ("I cannot answer from this evidence.", "stop", "refusal"),
        ("As an AI language model, I have no opinion.", "stop", "refusal"),
        ("Ada Lovelace wrote the first published program. [^1] She worked with", "length", "cut off"),
        ("# Notes\n\nLorem ipsum dolor sit amet, consectetur adipiscing elit.\n", "stop", "cites none"),
        ("Ada Lovelace wrote notes. [^7]", "stop", "cites none"),
        ("[^1] [^2]", "stop", "no prose"),
    ],
)
def test_unpublishable_pages_are_named_for_what_is_wrong(reply, finish, problem):
    found = page_problem(reply, REFS, finish_reason=finish)
    assert found is not None and problem in found


@pytest.mark.parametrize(
    "reply",
    [
        "Ada Lovelace wrote the first published program. [^1]",
        "[[charles-babbage]] designed the engine that Ada Lovelace wrote for. [^2]",
        "## Work\n\nShe translated the memoir of Menabrea.[^chunk-a]",
        "The page says why it cannot be sorry: Ada was not. [^1]",
        "Sorry is a song that Ada Lovelace never heard. [^1]",
    ],
)
def test_cited_prose_is_publishable(reply):
    assert page_problem(reply, REFS, finish_reason="stop") is None


def test_a_page_sent_no_evidence_need_not_cite_any():
    assert page_problem("Ada Lovelace was a mathematician.", []) is None
    assert page_problem("I'm sorry, I cannot write this.", []) is not None
