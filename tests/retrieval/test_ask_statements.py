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
