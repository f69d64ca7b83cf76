"""A model of small context is asked for its MAP items grouped by chunk, so that a grammar gives
every chunk of a batch its turn; its grouped reply is read as items of their chunks (through the
scripted server and the real openai client)."""

from __future__ import annotations

import json

from compendium.engines.tasks import ChunkInput, ExtractionBatch
from compendium.templates.schema import Template

TEMPLATE = Template(name="wiki")
MVCC = ("Multi-Version Concurrency Control (MVCC) lets many transactions read and write the same tables "
        "at once. Each transaction sees the versions that were committed when its snapshot was taken.")
COMPRESSION = ("Since Lumen 6.0 the default compression method is lz4, chosen with the "
               "`default_toast_compression` setting. A value is compressed only if compression saves "
               "at least 25 percent of its size.")
BATCH = ExtractionBatch([ChunkInput("c1", MVCC, ["Multi-Version Concurrency Control"], "MVCC"),
                         ChunkInput("c2", COMPRESSION, ["Compression"], "TOAST"),
                         ChunkInput("c3", "See below.", ["Notes"], "TOAST")])



async def test_a_small_model_writes_each_chunks_items_under_its_label(small, llm_server):
    llm_server.responder = lambda request: json.dumps({
        "c1": {"claims": [{"text": "Each transaction sees the versions that were committed when its snapshot "
                                   "was taken.", "entities": ["snapshot"]}],
               "entities": [{"name": "Multi-Version Concurrency Control (MVCC)", "type": "concept"}]},
        "c2": {"claims": [{"text": "A value is compressed only if compression saves at least 25 percent of its "
                                   "size.", "entities": []}],
               "entities": [{"name": "default_toast_compression", "type": "concept"}]},
        "c3": {"claims": [], "entities": []}})
    reply = await small.extract(BATCH, TEMPLATE)

    schema = llm_server.requests[0].response_format["json_schema"]["schema"]
    # One object per chunk, in the batch's order, all required: the grammar cannot skip a chunk.
    assert list(schema["properties"]) == ["c1", "c2", "c3"] and schema["required"] == ["c1", "c2", "c3"]
    prose, short = schema["properties"]["c1"]["properties"], schema["properties"]["c3"]["properties"]
    assert prose["entities"]["minItems"] == 1 and prose["entities"]["maxItems"] == 4
    assert "minItems" not in short["entities"]  # a chunk of two words need state nothing
    assert '{"c0":{"claims"' in llm_server.requests[0].messages[-1]["content"]  # the example has the shape

    assert {(e.chunk, e.name) for e in reply.entities} == {("c1", "Multi-Version Concurrency Control"),
                                                          ("c2", "default_toast_compression")}
    assert {c.chunk for c in reply.claims} == {"c1", "c2"}
