"""ask through the scripted server: a sentence giving its passage's action to another actor is
retracted, though every one of its words is in the passage it cites."""

from __future__ import annotations

import re

from tests.support.llm_server import ChatRequest

from .test_ask import check_citations, check_order, events_of, llm_settings

PASSAGE = re.compile(r"^\[(C\d+)\] [^\n]*\n(.*?)(?=^\[C\d+\] |\Z)", re.MULTILINE | re.DOTALL)
SWAPPED = "The Visibility Map reads the table's Heap Files page by page"
FAITHFUL = "Vacuum reads the table's Heap Files page by page, skipping pages the Visibility Map marks all-visible"


async def test_a_swapped_actor_is_retracted_and_the_faithful_sentence_stays(compiled_copy, llm_server):
    labels: list[str] = []

    def respond(request: ChatRequest) -> str:
        if "question_terms" in (request.schema_name or ""):
            return '{"names": ["Vacuum", "Visibility Map"], "keywords": ["all-visible", "heap"]}'
        label = next(m[1] for m in PASSAGE.finditer(request.prompt) if "Visibility Map marks all-visible" in m[2])
        labels.append(label)
        return f"{FAITHFUL} [{label}]. {SWAPPED} [{label}]."

    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server))
    final = check_order(events)
    check_citations(final)
    retracted = [e for e in events if e["type"] == "retract"]
    assert len(retracted) == 1 and retracted[0]["text"].startswith(SWAPPED)
    assert "Visibility Map" in retracted[0]["reason"]
    assert final["answer"] == f"{FAITHFUL} [{labels[0]}]."


# The two false sentences the check let through on the real models (real_model.md, sixth session).
WAL_QUESTION = "What must be written to the write-ahead log before a data page reaches disk?"
WAL_FALSE = "To write to the Write-Ahead Log (WAL) before a data page reaches disk, the modified page must be flushed"
# The model's next sentence, kept with nothing before it: "This" stands for what follows the colon.
WAL_TRUE = ("This is the rule that gives the WAL its name: a modified page may not reach disk until the WAL "
            "records describing its modification have been flushed")
SNAPSHOT_QUESTION = "What is a snapshot in MVCC and what does it decide?"
SNAPSHOT_TRUE = "A snapshot records which transactions were finished at a given moment"
PRONOUN_FALSE = ("It is created when a transaction commits before the snapshot and its deleting transaction, if "
                 "any, had not committed before the snapshot")


def answering_from(holding: str, terms: str, answer):  # type: ignore[no-untyped-def]
    """Answers the terms call with `terms`, and the answer with `answer(label)`, the label of the
    passage holding `holding`."""
    def respond(request: ChatRequest) -> str:
        if "question_terms" in (request.schema_name or ""):
            return terms
        label = next(m[1] for m in PASSAGE.finditer(request.prompt) if holding in " ".join(m[2].split()))
        return answer(label)

    return respond


async def test_a_passive_said_of_the_wrong_thing_is_retracted(compiled_copy, llm_server):
    llm_server.responder = answering_from(
        "have been flushed", '{"names": ["WAL"], "keywords": ["data page", "disk", "flushed"]}',
        lambda label: f"{WAL_FALSE} [{label}]. {WAL_TRUE} [{label}].")
    events = await events_of(llm_settings(compiled_copy, llm_server), WAL_QUESTION)
    final = check_order(events)
    [retracted] = [e for e in events if e["type"] == "retract"]
    assert retracted["text"].startswith(WAL_FALSE) and "modified page" in retracted["reason"]
    assert final["answer"].startswith(WAL_TRUE) and "must be flushed" not in final["answer"]


async def test_a_sentence_opening_with_a_pronoun_is_read_as_the_subject_before_it(compiled_copy, llm_server):
    llm_server.responder = answering_from(
        SNAPSHOT_TRUE, '{"names": ["MVCC"], "keywords": ["snapshot", "visible"]}',
        lambda label: f"{PRONOUN_FALSE} [{label}]. {SNAPSHOT_TRUE} [{label}]. {PRONOUN_FALSE} [{label}].")
    events = await events_of(llm_settings(compiled_copy, llm_server), SNAPSHOT_QUESTION)
    final = check_order(events)
    retracted = [e for e in events if e["type"] == "retract"]
    # First with nothing before it; then read as the snapshot's, which the passage does not say.
    assert [e["text"].startswith(PRONOUN_FALSE) for e in retracted] == [True, True]
    assert "pronoun" in retracted[0]["reason"] and "snapshot" in retracted[1]["reason"]
    assert final["answer"].startswith(SNAPSHOT_TRUE) and "created" not in final["answer"]
