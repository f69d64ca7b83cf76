"""What a small local model's MAP names and REDUCE pairs become, through the scripted server and
the real openai client: the names a reader would look up, one name per thing."""

from __future__ import annotations

import json

from compendium.engines.tasks import ChunkInput, EntitySketch, ExtractionBatch, PairQuestion
from compendium.templates.schema import Template

TEMPLATE = Template(name="wiki")
FREEZING = ("Vacuum prevents XID wraparound by freezing tuples. Freezing marks a tuple's `xmin` as frozen. "
            "Vacuum keeps dead tuples on disk until no snapshot sees the dead tuples. The chunk sequence is kept.")
WAL = ("Every change is written to the Write-Ahead Log (WAL) before the page. A query on a standby waits. "
       "The `lumen_stat_activity` view shows the session holding Vacuum back.")



async def test_a_small_models_common_words_and_clauses_are_no_entities(small, llm_server):
    # Names as the 1.5B model listed them for a compile of the slice: the words of its claims.
    def entity(chunk: str, name: str) -> dict:
        return {"chunk": chunk, "name": name, "type": "concept"}

    llm_server.responder = lambda request: json.dumps({
        "claims": [{"chunk": "c2", "text": "The `lumen_stat_activity` view shows the session holding Vacuum back.",
                    "entities": ["lumen_stat_activity", "session holding Vacuum back", "three things"]}],
        "entities": [entity("c1", n) for n in ("Vacuum", "frozen", "disk", "Freezing", "dead tuples",
                                               "chunk sequence", "ID")]
                    + [entity("c2", n) for n in ("Query", "Write-Ahead Log (WAL)",
                                                 "WAL records describing its modification have been flushed")],
        "concepts": [], "relations": [], "topics": []})
    batch = ExtractionBatch([ChunkInput("c1", FREEZING, ["Freezing"], "Transaction IDs"),
                             ChunkInput("c2", WAL, ["Who uses the WAL"], "The Write-Ahead Log")])
    reply = await small.extract(batch, TEMPLATE)
    kept = {(e.chunk, e.name): e.aliases for e in reply.entities}
    # Kept: a heading, a term used twice, an acronym with its words, and a code name a kept claim
    # is about. Gone: a verb form, common words (even capitalised by the model), a phrase written
    # once, a generic acronym and a clause; and "Vacuum" in c1, which opens its sentences there
    # only: a chunk's names are judged by its own text, never by the batch it happened to share
    # (MAP keeps a chunk's extraction for every later compile, however its batch is made up).
    assert set(kept) == {("c1", "Freezing"), ("c1", "dead tuples"),
                         ("c2", "Write-Ahead Log"), ("c2", "lumen_stat_activity")}
    assert kept[("c2", "Write-Ahead Log")] == ["WAL"]


async def test_a_small_models_pairs_are_judged_by_the_name_rules(small, llm_server):
    def pair(label: str, a: tuple[str, str], b: tuple[str, str], aliases: list[str] | None = None) -> PairQuestion:
        return PairQuestion(label, EntitySketch(a[0], a[1], aliases=aliases or []), EntitySketch(b[0], b[1]), 0.9)

    answers = await small.judge_pairs([
        pair("p1", ("Vacuum", "component"), ("Vacuum", "standard")),  # its types are noise
        pair("p2", ("TOAST", "component"), ("TOAST table", "component")),  # a word added: another thing
        pair("p3", ("Write-Ahead Log", "standard"), ("WAL", "concept")),
        pair("p4", ("Streaming Replication", "technology"), ("replication slots", "organization")),
    ], TEMPLATE)
    assert answers == {"p1": True, "p2": False, "p3": True, "p4": False}
    assert llm_server.calls["chat"] == 0  # the 1.5B model answered 13 of 45 such pairs wrong: not asked


async def test_a_name_a_claim_writes_in_code_is_an_entity_of_its_chunk(small, llm_server):
    # The 1.5B model's claim copied from the slice's cost-based delay section, its names listed as
    # words ("cost limit"); the settings the sentence writes in code were in no list of the reply.
    delay = ("When the accumulated cost reaches `vacuum_cost_limit` (200 by default), Vacuum sleeps for "
             "`vacuum_cost_delay`. Setting `hot_standby_feedback = on` keeps rows; `SELECT ... FOR SHARE` locks.")
    llm_server.responder = lambda request: json.dumps({
        "claims": [{"chunk": "c1", "text": delay, "entities": ["cost limit", "vacuum cost delay"]}],
        "entities": [], "concepts": [], "relations": [], "topics": []})
    batch = ExtractionBatch([ChunkInput("c1", delay, ["Cost-based delay"], "Vacuum")])
    reply = await small.extract(batch, TEMPLATE)
    # Identifiers only: an expression or a command in code marks is no name.
    assert {e.name for e in reply.entities} == {"vacuum_cost_limit", "vacuum_cost_delay"}
