"""ask(): streaming, caching and degraded paths (each test failed on the ask before streaming)."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys

from compendium.retrieval import NOTHING, Options
from compendium.retrieval.workspace import ask_in_workspace, retrieve_in_workspace
from compendium.settings import load_settings
from compendium.workspace import init_workspace
from tests.retrieval.test_ask import QUESTION, answering, check_order, events_of, llm_settings
from tests.support.llm_server import LLMServer

GOOD = "Vacuum reads the Visibility Map to skip pages that need no work [C1]."


def chat_calls(server: LLMServer) -> int:
    return sum(1 for r in server.requests if not r.schema_name)


async def test_the_first_sentence_reaches_the_client_before_the_reply_ends(compiled_copy, llm_server):
    respond, _ = answering([f"{GOOD} Vacuum reads the Visibility Map before it scans [C1]."])
    llm_server.responder = respond
    llm_server.stream_hold = "[C1]."  # the server stops after the first sentence until released
    events = []
    async for event in ask_in_workspace(llm_settings(compiled_copy, llm_server), QUESTION, Options()):
        events.append(event)
        if event["type"] == "sentence" and event["index"] == 0:
            assert llm_server.streams_ended == 0  # the model's reply has not ended
            assert event["text"] == GOOD
            llm_server.stream_release.set()
    final = check_order(events)
    assert llm_server.streams_ended == 1
    assert final["answer"].startswith(GOOD) and final["answer"].count("[C1]") == 2


async def test_an_endpoint_that_refuses_to_stream_is_answered_whole(compiled_copy, llm_server):
    # Some local servers answer a streamed request with a 400: the answer is asked again
    # without streaming, and its sentences are checked as any others.
    respond, asked = answering([GOOD])
    llm_server.responder = respond
    llm_server.refuses_streams = True
    final = check_order(await events_of(llm_settings(compiled_copy, llm_server)))
    assert final["answer"] == GOOD and llm_server.calls["stream_refused"] == 1 and len(asked) == 1


async def test_a_rejected_answer_is_never_cached(compiled_copy, llm_server):
    respond, asked = answering(["No citations here.", "Still none."])
    llm_server.responder = respond
    settings = llm_settings(compiled_copy, llm_server)
    assert (await events_of(settings))[-1]["type"] == "error"
    respond, asked = answering([GOOD])
    llm_server.responder = respond
    final = check_order(await events_of(settings))  # asked again, not the rejected reply
    assert final["answer"] == GOOD and len(asked) == 1
    check_order(await events_of(settings))  # an accepted answer is cached
    assert len(asked) == 1


async def test_the_answer_cache_key_holds_the_endpoint_and_the_model(compiled_copy, llm_server):
    respond, asked = answering([GOOD])
    llm_server.responder = respond
    llm_server.model_names.append("other-chat")
    settings = llm_settings(compiled_copy, llm_server)
    check_order(await events_of(settings))
    other = dataclasses.replace(settings, llm=dataclasses.replace(settings.llm, model="other-chat"))
    check_order(await events_of(other))
    assert len(asked) == 2  # another model: asked, not served the first model's answer
    with LLMServer() as second:
        second.responder = respond
        moved = dataclasses.replace(settings, llm=dataclasses.replace(settings.llm, base_url=second.base_url))
        check_order(await events_of(moved))
    assert len(asked) == 3  # another endpoint: asked too


async def test_an_empty_knowledge_base_answers_nothing_without_calling_the_model(tmp_path, llm_server):
    workspace = init_workspace(tmp_path / "empty")
    settings = llm_settings(load_settings(workspace, env={}), llm_server)
    final = check_order(await events_of(settings))
    assert final["answer"] == NOTHING and final["citations"] == []
    assert llm_server.calls["chat"] == 0


async def test_evidence_sharing_no_word_with_the_question_answers_nothing(compiled_copy, llm_server):
    respond, asked = answering([GOOD])
    llm_server.responder = respond
    final = check_order(await events_of(llm_settings(compiled_copy, llm_server), "Quokka marsupials?"))
    assert final["answer"] == NOTHING and asked == []


async def test_an_unreachable_model_falls_back_to_the_offline_terms_and_the_extractive_answer(compiled_copy):
    with LLMServer() as server:
        settings = llm_settings(compiled_copy, server)
    # the server has stopped: its port answers nothing
    result = await retrieve_in_workspace(settings, QUESTION, Options())
    assert result.chunks and result.terms.source == "rules"
    assert any("could not rewrite" in note for note in result.notes)
    events = await events_of(settings)
    final = check_order(events)
    notes = [e["message"] for e in events if e["type"] == "note"]
    assert len(notes) == 1 and "could not be reached" in notes[0] and "extractive" in notes[0]
    assert final["engine"] == "offline" and "[C1]" in final["answer"]


async def test_offline_answers_say_they_are_extractive_and_end_at_sentence_boundaries(compiled_offline):
    for question in (QUESTION, "How do I undo a change to a table?", "What does TOAST do with large values?"):
        events = await events_of(compiled_offline, question)
        check_order(events)
        assert any(e["type"] == "note" and "extractive" in e["message"] for e in events)
        sentences = [e["text"] for e in events if e["type"] == "sentence"]
        for sentence in sentences:  # the label sits inside its own sentence, before the stop
            assert re.search(r"\[[ERPTC]\d+\][.!?]$", sentence), sentence
            assert not re.search(r"\b(with|the|to|of)\s*\[", sentence), sentence


def test_a_rejected_answer_prints_one_error_line_and_no_traceback(compiled_copy, llm_server):
    respond, _ = answering(["No citations here.", "Still none."])
    llm_server.responder = respond
    env = {**os.environ, "COMPENDIUM_LLM_BASE_URL": llm_server.base_url, "COMPENDIUM_LLM_API_KEY": "test-key",
           "COMPENDIUM_LLM_MODEL": "test-chat", "PYTHONWARNINGS": "default"}
    done = subprocess.run([sys.executable, "-m", "compendium.cli", "-w", str(compiled_copy.workspace), "ask", QUESTION],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().startswith("error:") and "not cited" in done.stderr
    assert "Traceback" not in done.stderr and "GeneratorExit" not in done.stderr


def test_the_question_rewrite_bounds_its_lists_for_a_grammar():
    # Under a json_schema grammar a small model looped one keyword to its reply cap.
    from compendium.retrieval.terms import QuestionRewrite

    properties = QuestionRewrite.model_json_schema()["properties"]
    assert properties["names"]["maxItems"] == 10 and properties["keywords"]["maxItems"] == 10
