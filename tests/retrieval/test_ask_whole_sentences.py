"""ask through the scripted server, replying as the 1.5B local model did on the sample corpus
(benchmarks/reports/real_model.md, tenth session): a name the passage's heading gives, a relative
clause reworded, a JSON repair item of several sentences cut at the schema's length, a streamed
sentence cut mid-phrase. What the user relies on: every sentence shown cites its evidence and is
whole, and a true sentence is not refused."""

from __future__ import annotations

import json
import re

from compendium.engines.tasks import SENTENCE_CHARS
from compendium.retrieval import split_answer
from tests.support.llm_server import ChatRequest

from .test_ask import check_citations, check_order, events_of, llm_settings
from .test_ask_small_model import responder

PASSAGE = re.compile(r"^\[(C\d+)\] ([^\n]*)\n(.*?)(?=^\[C\d+\] |^Question: |\Z)", re.MULTILINE | re.DOTALL)
SNAPSHOT = "What is a snapshot in MVCC and what does it decide?"
TOAST = "How does TOAST store a large column value?"


def passage(prompt: str, words: str) -> tuple[str, str, str]:
    """(label, heading path, text) of the context's passage holding `words`."""
    return next((label, path, " ".join(text.split())) for label, path, text in PASSAGE.findall(prompt)
                if words in " ".join(text.split()))


async def test_a_name_the_passages_heading_gives_is_the_passages(compiled_copy, llm_server):
    # The passage under "Multi-Version Concurrency Control › Snapshots" never writes "MVCC".
    said: list[str] = []

    def reply(request: ChatRequest) -> str:
        label, path, text = passage(request.prompt, "A snapshot records which transactions were finished")
        assert "Multi-Version Concurrency Control" in path and "MVCC" not in text
        said.append(f"A snapshot in MVCC is a record of which transactions were finished at a given moment [{label}].")
        return said[-1]

    respond, asked = responder(reply, ["snapshot", "MVCC"])
    llm_server.responder = respond
    final = check_order(await events_of(llm_settings(compiled_copy, llm_server), SNAPSHOT))
    check_citations(final)
    assert final["answer"] == said[0] and len(asked) == 1  # kept as written, no repair
    assert final["citations"][0]["heading_path"][-1] == "Snapshots"


async def test_a_sentence_reworded_round_a_relative_clause_is_kept(compiled_copy, llm_server):
    said: list[str] = []

    def reply(request: ChatRequest) -> str:
        label, _, _ = passage(request.prompt, "Every table that has at least one variable-length column")
        said.append(f"Every table with at least one variable-length column gets its own TOAST table [{label}].")
        return said[-1]

    respond, asked = responder(reply, ["TOAST"])
    llm_server.responder = respond
    final = check_order(await events_of(llm_settings(compiled_copy, llm_server), TOAST))
    assert final["answer"] == said[0] and len(asked) == 1


async def test_a_repair_item_of_several_sentences_cut_at_its_length_gives_its_whole_ones(compiled_copy, llm_server):
    # The model's repair wrote a passage's first sentences as one item, and the server's grammar
    # stopped it at the schema's length mid-sentence ("... shows the `backend_xmin` of every");
    # another item was a list's item.
    seen: list[tuple[str, str]] = []

    def reply(request: ChatRequest) -> str:
        if request.schema_name != "cited_answer":
            return "Vacuum is quick."  # says nothing the evidence says: refused, so the answer is repaired
        label, _, text = passage(request.prompt, "MVCC leaves dead tuples behind")
        seen.append((label, text))
        assert len(text) > SENTENCE_CHARS
        return json.dumps({"sentences": [{"text": text[:SENTENCE_CHARS], "cites": [label]},
                                         {"text": "a forgotten prepared transaction", "cites": [label]}]})

    respond, asked = responder(reply, ["Vacuum", "MVCC"])
    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server),
                             "What does vacuum remove, and why can a long-running transaction hold it back?")
    final = check_order(events)
    check_citations(final)
    label, text = seen[0]
    sentences = split_answer(final["answer"])
    assert len(sentences) >= 3 and len(asked) == 2
    for sentence in sentences:
        assert sentence.endswith(f" [{label}].")  # each cites, and each is one of the passage's whole
        assert sentence.removesuffix(f" [{label}].") + "." in text
    cut = text[:SENTENCE_CHARS][text[:SENTENCE_CHARS].rindex(". ") + 2:].strip()
    assert cut not in final["answer"]
    assert [e["reason"] for e in events if e["type"] == "retract" and e["text"].strip() == cut] == [
        "not a whole sentence of the answer"]
    assert "forgotten" not in final["answer"]  # an item of a list, not a sentence


async def test_a_streamed_sentence_cut_mid_phrase_is_retracted(compiled_copy, llm_server):
    said: list[str] = []

    def reply(request: ChatRequest) -> str:
        label, _, _ = passage(request.prompt, "A snapshot records which transactions were finished")
        said.append(f"A snapshot records which transactions were finished at a given moment [{label}].")
        return f"{said[0]} Under the default Read Committed isolation level, Lumen takes a new snapshot for every [{label}]."

    respond, asked = responder(reply, ["snapshot"])
    llm_server.responder = respond
    events = await events_of(llm_settings(compiled_copy, llm_server), SNAPSHOT)
    final = check_order(events)
    assert final["answer"] == said[0] and len(asked) == 1
    [retracted] = [e for e in events if e["type"] == "retract"]
    assert retracted["reason"] == "the sentence is cut off" and "a new snapshot for every [" in retracted["text"]
