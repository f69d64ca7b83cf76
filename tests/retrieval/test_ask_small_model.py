"""ask through the scripted server, replying as a 1.5B local model did (real_model.md): prose
copied from the evidence with its labels left off or shifted, and a JSON repair."""

from __future__ import annotations

import json
import re

from compendium.retrieval import split_answer
from compendium.retrieval.citations import SentenceCutter
from tests.support.llm_server import ChatRequest

from .test_ask import check_citations, check_order, events_of, llm_settings

PASSAGE = re.compile(r"^\[(C\d+)\] [^\n]*\n(.*?)(?=^\[C\d+\] |\Z)", re.MULTILINE | re.DOTALL)
DESCRIBED = re.compile(r"^- \[([EP]\d+)\] .*?(?:\): |: )([A-Z][^\n]*?\.)(?= |$)", re.MULTILINE)
FAITHFUL = "Vacuum reads the table's Heap Files page by page, skipping pages the Visibility Map marks all-visible"
TERMS = '{"names": ["Vacuum", "Visibility Map"], "keywords": ["all-visible", "skip"]}'


def responder(reply, names: list[str] | None = None):
    """Answers the term call (with `names`, else TERMS), then `reply(request)` for each answer
    call; the calls it saw."""
    asked: list[ChatRequest] = []

    def respond(request: ChatRequest) -> str:
        if (request.schema_name or "") == "question_terms":
            return TERMS if names is None else json.dumps({"names": names, "keywords": []})
        asked.append(request)
        return reply(request)

    return respond, asked


async def test_a_sentence_only_an_entity_or_page_says_is_given_its_label(compiled_copy, llm_server):
    # The model copied an entity's description, which no passage of the context holds.
    copied: list[str] = []

    def reply(request: ChatRequest) -> str:
        passages = " ".join(text for _, text in PASSAGE.findall(request.prompt))
        sentence = next(s for _, s in DESCRIBED.findall(request.prompt) if s[:-1] not in passages)
        copied.append(sentence)
        return sentence

    respond, asked = responder(reply)
    llm_server.responder = respond
    final = check_order(await events_of(llm_settings(compiled_copy, llm_server)))
    check_citations(final)
    assert len(asked) == 1  # no repair
    [cited] = final["citations"]
    assert cited["kind"] in ("entity", "page")
    assert final["answer"] == f"{copied[0][:-1]} [{cited['ref']}]."


async def test_a_sentence_next_to_the_wrong_label_cites_the_passage_that_restates_it(compiled_copy, llm_server):
    labels: list[tuple[str, str]] = []

    def reply(request: ChatRequest) -> str:
        passages = PASSAGE.findall(request.prompt)
        right = next(label for label, text in passages if "all-visible" in text)
        wrong = next(label for label, _ in passages if label != right)
        labels.append((right, wrong))
        sentence = next(s for s in split_answer(dict(passages)[right].replace("\n", " ")) if "all-visible" in s)
        return f"{sentence.rstrip('.')} [{wrong}]."

    respond, asked = responder(reply)
    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server))
    final = check_order(events)
    check_citations(final)
    right, wrong = labels[0]
    assert [c["ref"] for c in final["citations"]] == [right] and f"[{wrong}]" not in final["answer"]
    assert not [e for e in events if e["type"] == "retract"] and len(asked) == 1


async def test_the_repair_placeholder_copied_back_is_no_sentence(compiled_copy, llm_server):
    def reply(request: ChatRequest) -> str:
        if request.schema_name != "cited_answer":
            return "Vacuum is quick."
        label = next(label for label, text in PASSAGE.findall(request.prompt) if "all-visible" in text)
        return json.dumps({"sentences": [{"text": "<a sentence of the answer>", "cites": ["C1"]},
                                         {"text": f"{FAITHFUL}.", "cites": [label]}]})

    respond, asked = responder(reply)
    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server))
    final = check_order(events)
    assert final["answer"].startswith(f"{FAITHFUL} [C")
    assert [e["text"] for e in events if e["type"] == "retract"] == ["Vacuum is quick.", "<a sentence of the answer>"]
    assert len(asked) == 2


def test_an_abbreviation_or_a_decimal_number_does_not_end_an_answer_sentence():
    text = ("About 4.29 billion XIDs exist, e.g. the 2.1 billion before any XID [C1]. "
            "Vacuum, i.e. the cleaner, runs (cf. autovacuum) [C2]. Done [C3].")
    whole = ["About 4.29 billion XIDs exist, e.g. the 2.1 billion before any XID [C1].",
             "Vacuum, i.e. the cleaner, runs (cf. autovacuum) [C2].", "Done [C3]."]
    assert split_answer(text) == whole
    cutter = SentenceCutter()
    streamed = [s for i in range(0, len(text), 7) for s in cutter.feed(text[i:i + 7])] + cutter.rest()
    assert streamed == whole


async def test_a_heading_copied_as_a_sentence_and_a_sentence_said_twice_are_not_kept(compiled_copy, llm_server):
    # As the 0.5B model repaired an answer: a passage's heading with its label, one sentence four times.
    seen: list[tuple[str, str]] = []

    def reply(request: ChatRequest) -> str:
        label = next(label for label, text in PASSAGE.findall(request.prompt) if "page by page" in text)
        heading = re.search(rf"^\[{label}\] .* › (.+)$", request.prompt, re.MULTILINE).group(1)
        seen.append((label, heading))
        return f"{heading} [{label}]. " + f"{FAITHFUL} [{label}]. " * 3

    respond, asked = responder(reply)
    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server))
    final = check_order(events)
    label, heading = seen[0]
    assert final["answer"] == f"{FAITHFUL} [{label}]."
    retracted = [e for e in events if e["type"] == "retract"]
    reasons = [e["reason"] for e in retracted]
    assert retracted[0]["text"].startswith(heading) and "heading" in reasons[0]
    assert len(reasons) == 3 and reasons[1:] == ["the answer already says this"] * 2
    assert len(asked) == 1
