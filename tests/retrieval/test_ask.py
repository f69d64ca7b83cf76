"""ask(): cited answers from one retrieval, streamed as events; offline and through a scripted LLM."""

from __future__ import annotations

import dataclasses
import re

from compendium.operations import opened_store
from compendium.retrieval import Options, ask, citation_problems, split_answer
from compendium.retrieval.workspace import ask_in_workspace, sources_for
from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import ChatRequest

QUESTION = "How does Vacuum use the Visibility Map?"
LABEL = re.compile(r"\[([A-Z]\d+)(?:, ?([A-Z]\d+))*\]")


async def events_of(settings, question=QUESTION, **options):
    return [e async for e in ask_in_workspace(settings, question, Options(**options))]


def check_order(events):
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["stage", "stage"]
    assert [e["stage"] for e in events[:2]] == ["retrieve", "answer"]
    assert kinds[-1] == "final" and set(kinds[2:-1]) <= {"delta", "sentence", "retract", "note"}
    final = events[-1]
    assert " ".join(e["text"] for e in events if e["type"] == "sentence") == final["answer"]
    return final


def check_citations(final):
    evidence = final["evidence"]
    chunk_ids = {c["chunk_id"] for c in evidence["chunks"]}
    entity_ids = {e["id"] for e in evidence["entities"]}
    assert final["citations"]
    for citation in final["citations"]:
        assert citation["ref"] in final["answer"]
        if citation["kind"] == "chunk":
            index = int(citation["ref"][1:]) - 1
            assert evidence["chunks"][index]["chunk_id"] == citation["id"]
            assert citation["id"] in chunk_ids
        elif citation["kind"] == "entity":
            assert citation["id"] in entity_ids
    for sentence in split_answer(final["answer"]):
        assert LABEL.search(sentence), sentence


async def test_offline_answer_cites_only_returned_passages_in_stream_order(compiled_offline):
    final = check_order(await events_of(compiled_offline))
    check_citations(final)
    assert "Visibility Map" in final["answer"]
    assert all(c["kind"] in ("chunk", "entity") for c in final["citations"])
    assert final["citations"][0]["kind"] == "chunk"


def test_answer_sentences_and_their_problems():
    assert split_answer("A is B. [C1] C is D [C2, E1]. E.") == ["A is B. [C1]", "C is D [C2, E1].", "E."]
    problems = citation_problems("A is B [C1]. C is D [C9]. E.", {"C1", "C2"})
    assert len(problems) == 2 and "C9" in problems[0] and "cites nothing" in problems[1]
    assert citation_problems("A is B [C1].", {"C1"}) == []


def llm_settings(compiled_copy, server):
    pointed = settings_for(server)
    return dataclasses.replace(compiled_copy, llm=pointed.llm)


def answering(replies):
    """A responder answering the question prompt with the given replies in turn."""
    asked: list[ChatRequest] = []

    def respond(request: ChatRequest) -> str:
        if "question_terms" in (request.schema_name or ""):
            return '{"names": ["Vacuum", "Visibility Map"], "keywords": ["all-visible", "skip"]}'
        asked.append(request)
        return replies[min(len(asked) - 1, len(replies) - 1)]

    return respond, asked


async def test_llm_answer_is_one_streamed_call_and_unsupported_sentences_are_retracted(compiled_copy, llm_server):
    respond, asked = answering(["Vacuum reads the Visibility Map to skip pages that need no work [C1]. "
                                "The moon is made of green cheese [C2, E1]."])
    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server))
    final = check_order(events)
    check_citations(final)
    assert len(asked) == 1 and "## Passages" in asked[0].prompt and QUESTION in asked[0].prompt
    assert asked[0].body["stream"] is True
    assert "".join(e["text"] for e in events if e["type"] == "delta").startswith("Vacuum reads the Visibility Map")
    retracted = [e for e in events if e["type"] == "retract"]
    assert len(retracted) == 1 and "green cheese" in retracted[0]["text"] and "does not" in retracted[0]["reason"]
    assert final["answer"] == "Vacuum reads the Visibility Map to skip pages that need no work [C1]."
    assert {c["ref"] for c in final["citations"]} == {"C1"}


async def test_an_uncited_reply_is_repaired_once_as_json_sentences_with_labels(compiled_copy, llm_server):
    respond, asked = answering(["Vacuum is remarkably quick. It cites [C99].",
                                '{"sentences": [{"text": "Vacuum skips all-visible pages.", "cites": ["C1"]}]}'])
    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server))
    final = check_order(events)
    assert final["answer"] == "Vacuum skips all-visible pages [C1]."
    assert len(asked) == 2
    repair = asked[1]
    assert repair.schema_name == "cited_answer" and not repair.body.get("stream")
    assert "cites nothing" in repair.prompt and "C99" in repair.prompt and QUESTION in repair.prompt
    labels = repair.response_format["json_schema"]["schema"]["properties"]["sentences"]["items"]["properties"]["cites"]
    refs = next(e["refs"] for e in events if e.get("stage") == "answer")
    assert sorted(labels["items"]["enum"]) == sorted(refs) and labels["minItems"] == 1
    assert [e["text"] for e in events if e["type"] == "sentence"] == ["Vacuum skips all-visible pages [C1]."]


async def test_a_sentence_copied_from_a_passage_without_its_label_is_given_it(compiled_copy, llm_server):
    # A small model copies a passage's sentence and leaves its label off; one passage says it.
    respond, asked = answering(["Vacuum reads the Visibility Map to skip pages that need no work. "
                                "The moon is made of green cheese."])
    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server))
    final = check_order(events)
    check_citations(final)
    label = final["citations"][0]["ref"]
    assert final["answer"] == f"Vacuum reads the Visibility Map to skip pages that need no work [{label}]."
    assert len(asked) == 1  # no repair asked for
    assert [e["text"] for e in events if e["type"] == "retract"] == ["The moon is made of green cheese."]


async def test_a_reply_still_unsupported_after_the_repair_is_an_error_event(compiled_copy, llm_server):
    cheese = '{"sentences": [{"text": "The moon is made of green cheese.", "cites": ["C1"]}]}'
    respond, asked = answering(["No citations here.", cheese])
    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server))
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["stage", "stage"] and kinds[-1] == "error" and "sentence" not in kinds
    assert "not cited" in events[-1]["message"] and "green cheese" in events[-1]["message"]
    # the streamed reply, the JSON repair, and its own repair drawn hotter (nothing stood)
    assert len(asked) == 3 and [r.schema_name for r in asked[1:]] == ["cited_answer"] * 2
    assert asked[2].temperature > asked[1].temperature == 0.0
    assert kinds.count("retract") == 1  # the streamed sentence; the repair's were never shown


async def test_the_rewrite_call_is_cached(compiled_copy, llm_server):
    respond, _ = answering(["Vacuum skips pages [C1]."])
    llm_server.responder = respond
    settings = llm_settings(compiled_copy, llm_server)
    async with opened_store(settings) as store, sources_for(store, settings) as src:
        for _ in range(2):
            _ = [e async for e in ask("What does the autovacuum launcher start?", store,
                                      embedder=src.embedder, llm=src.llm)]
    rewrites = [r for r in llm_server.requests if (r.schema_name or "") == "question_terms"]
    assert len(rewrites) == 1
