"""The endpoint's profile: what it supports and its context, as settings say or the server does."""

from __future__ import annotations

from compendium.engines.llm import LLMEngine
from compendium.engines.openai_client import _stated_context
from compendium.templates.schema import Template
from tests.engines.test_openai_client import Answer, client_for


async def test_a_context_the_server_does_not_state_is_unknown_and_asked_once(llm_server):
    client = client_for(llm_server)
    try:
        assert await client.detect_context() is None and await client.detect_context() is None
        assert llm_server.calls["models"] == 1
    finally:
        await client.close()


async def test_a_configured_context_sizes_map_batches_and_pages_without_asking(llm_server):
    client = client_for(llm_server, context_tokens=8192, max_reply_tokens=8192)
    engine = LLMEngine(client)
    try:
        assert await client.detect_context() == 8192 and llm_server.calls["models"] == 0
        template = Template(name="t")
        chunks, tokens, reply = engine.map_limits(template)
        assert reply == 2048 and chunks == 4 and tokens <= 8192 - 2048  # a quarter of the context for the reply
        assert engine.page_limits(template) == (2048, 1024)
        assert engine.list_items() == 4 and engine.lean()
        # Replies measured shorter than assumed: more chunks per batch.
        client.reply_tokens["extraction:per_chunk"] = [150.0, 170.0]
        assert engine.map_limits(template)[0] == 7
    finally:
        await client.close()


async def test_an_unknown_context_keeps_the_template_limits(llm_server):
    engine = LLMEngine(client_for(llm_server))
    try:
        template = Template(name="t")
        assert engine.map_limits(template) == (template.map.batch_chunks, template.map.batch_tokens, None)
    finally:
        await engine.close()


def test_the_context_is_read_where_servers_state_it():
    assert _stated_context({"data": [{"id": "m", "max_model_len": 8192}]}, "m") == 8192  # vLLM
    assert _stated_context({"data": [{"id": "m", "context_length": 4096}]}, "m") == 4096  # LM Studio
    # llama.cpp states the training context, not the one the server runs with (-c): not taken.
    assert _stated_context({"data": [{"id": "m", "meta": {"n_ctx_train": 32768}}]}, "m") is None


async def test_plain_endpoints_get_no_response_format_and_the_schema_in_the_prompt(llm_server):
    from tests.engines.test_openai_client import answer_responder

    llm_server.responder = answer_responder
    client = client_for(llm_server, response_format="plain")
    try:
        reply = await client.complete_json(system="Answer in JSON.", prompt="Where?", reply_type=Answer,
                                           schema_name="answer", temperature=0.0)
        assert reply.city == "Armonk"
        request = llm_server.requests[0]
        assert request.response_format is None and "JSON schema" in request.messages[-1]["content"]
    finally:
        await client.close()
