"""The OpenAI-compatible client against the scripted server, through the real openai SDK."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
from pydantic import BaseModel

from compendium.engines.openai_client import OpenAIClient, strict_schema
from compendium.engines.usage import UsageMeter
from compendium.errors import BudgetExceeded, EngineError, EngineUnavailable, ReplyError
from compendium.storage.factory import open_store
from compendium.storage.response_cache import StoreResponseCache
from tests.support.llm_server import TRUNCATED_JSON, ChatRequest, LLMServer


class Answer(BaseModel):
    city: str
    people: list[str]


def answer_responder(request: ChatRequest) -> str:
    return json.dumps({"city": "Armonk", "people": ["Arvind Krishna"]})


def client_for(server: LLMServer, usage: UsageMeter | None = None, **overrides) -> OpenAIClient:
    args = {
        "base_url": server.base_url,
        "api_key": "sk-test-secret-key",
        "model": "test-chat",
        "usage": usage or UsageMeter(),
        "timeout": 0.5,
        "max_retries": 2,
        "retry_wait": 0.01,
        "hedge": False,  # requests are counted; a loaded machine would hedge a slow one
        **overrides,
    }
    return OpenAIClient(**args)


async def ask(client: OpenAIClient, prompt: str = "Where is IBM based?") -> Answer:
    return await client.complete_json(
        system="Answer in JSON.", prompt=prompt, reply_type=Answer, schema_name="answer", temperature=0.0
    )


def test_strict_schema_requires_every_property_and_forbids_extras():
    schema = strict_schema(Answer)
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == ["city", "people"]


async def test_structured_round_trip_sends_json_schema_and_records_usage(llm_server):
    llm_server.responder = answer_responder
    usage = UsageMeter()
    client = client_for(llm_server, usage)
    try:
        reply = await ask(client)
    finally:
        await client.close()
    assert reply == Answer(city="Armonk", people=["Arvind Krishna"])
    sent = llm_server.requests[0].response_format
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "answer" and sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"]["additionalProperties"] is False
    total = usage.get("other")
    assert total.llm_calls == 1
    assert total.prompt_tokens == llm_server.prompt_tokens > 0
    assert total.completion_tokens == llm_server.completion_tokens > 0


async def test_rejected_json_schema_falls_back_to_json_object_for_good(llm_server):
    llm_server.responder = answer_responder
    llm_server.fail_next(1, "reject_json_schema")
    client = client_for(llm_server)
    try:
        first = await ask(client, "one")
        second = await ask(client, "two")
    finally:
        await client.close()
    assert first.city == second.city == "Armonk"
    assert llm_server.calls["rejected_json_schema"] == 1
    assert llm_server.calls["json_object"] == 2  # the second call did not try json_schema again
    assert llm_server.calls["json_schema"] == 0
    assert client.json_schema_supported is False
    assert 'matching the JSON schema "answer"' in llm_server.requests[-1].messages[-1]["content"]


@pytest.mark.parametrize("fault", ["429", "500", "timeout"])
async def test_transient_faults_are_retried(llm_server, fault):
    llm_server.responder = answer_responder
    llm_server.timeout_sleep = 1.0
    llm_server.fail_next(2, fault)
    usage = UsageMeter()
    client = client_for(llm_server, usage, timeout=0.3, max_retries=2)
    try:
        reply = await ask(client)
    finally:
        await client.close()
    assert reply.city == "Armonk"
    assert llm_server.calls[f"fault_{fault}"] == 2
    assert llm_server.calls["chat"] == 1  # only the third attempt reached the responder
    assert client.retries == 2
    assert usage.get("other").llm_calls == 1


async def test_retries_give_up_after_max_retries(llm_server):
    llm_server.fail_next(5, "500")
    client = client_for(llm_server, max_retries=1)
    try:
        with pytest.raises(EngineError, match="HTTP 500 after 2 attempts"):
            await ask(client)
    finally:
        await client.close()
    assert llm_server.calls["fault_500"] == 2


async def test_wrong_key_is_engine_unavailable_without_the_key_in_the_message():
    with LLMServer(api_key="the-right-key") as server:
        client = client_for(server, api_key="sk-wrong-key-123")
        try:
            with pytest.raises(EngineUnavailable) as caught:
                await ask(client)
        finally:
            await client.close()
    message = str(caught.value)
    assert "rejected the API key" in message and "COMPENDIUM_LLM_API_KEY" in message
    assert "sk-wrong-key-123" not in message
    assert server.calls["chat"] == 0


async def test_auth_fault_is_not_retried(llm_server):
    llm_server.fail_next(1, "auth")
    client = client_for(llm_server)
    try:
        with pytest.raises(EngineUnavailable, match="rejected the API key"):
            await ask(client)
    finally:
        await client.close()
    assert llm_server.calls["fault_auth"] == 1 and llm_server.calls["chat"] == 0


async def test_unknown_model_names_the_model(llm_server):
    client = client_for(llm_server, model="no-such-model")
    try:
        with pytest.raises(EngineUnavailable, match="no-such-model"):
            await ask(client)
    finally:
        await client.close()


async def test_unreachable_endpoint_fails_fast_naming_the_url():
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = OpenAIClient(
        base_url=f"http://user:pw@127.0.0.1:{port}/v1",
        model="m",
        usage=UsageMeter(),
        timeout=0.3,
        max_retries=2,
        retry_wait=0.01,
    )
    try:
        with pytest.raises(EngineUnavailable) as caught:
            await ask(client)
    finally:
        await client.close()
    assert f"127.0.0.1:{port}/v1" in str(caught.value) and "COMPENDIUM_LLM_BASE_URL" in str(caught.value)
    assert "pw" not in str(caught.value)


async def test_malformed_reply_is_repaired_by_a_second_attempt(llm_server):
    llm_server.responder = answer_responder
    llm_server.fail_next(1, "malformed")
    usage = UsageMeter()
    client = client_for(llm_server, usage)
    try:
        reply = await ask(client)
    finally:
        await client.close()
    assert reply.city == "Armonk"
    assert llm_server.calls["chat"] == 2
    repair = llm_server.requests[1].messages
    assert repair[-2] == {"role": "assistant", "content": TRUNCATED_JSON}
    assert "not valid" in repair[-1]["content"]
    assert usage.get("other").llm_calls == 2


async def test_reply_error_when_the_repair_is_malformed_too(llm_server):
    llm_server.fail_next(2, "malformed")
    client = client_for(llm_server)
    try:
        with pytest.raises(ReplyError, match="even after one repair"):
            await ask(client)
    finally:
        await client.close()
    assert llm_server.calls["chat"] == 2


async def test_reply_missing_a_field_is_repaired(llm_server):
    replies = iter(['{"city": "Armonk"}', '```json\n{"city": "Armonk", "people": []}\n```'])
    llm_server.responder = lambda request: next(replies)
    client = client_for(llm_server)
    try:
        reply = await ask(client)
    finally:
        await client.close()
    assert reply == Answer(city="Armonk", people=[])
    assert "people" in llm_server.requests[1].messages[-1]["content"]


async def test_requests_per_minute_spaces_calls(llm_server):
    llm_server.responder = answer_responder
    client = client_for(llm_server, requests_per_minute=600)  # one call per 0.1 s
    started = time.perf_counter()
    try:
        for i in range(5):
            await ask(client, f"question {i}")
    finally:
        await client.close()
    assert time.perf_counter() - started >= 0.4 * 0.95
    assert llm_server.calls["chat"] == 5


async def test_response_cache_answers_an_identical_request_without_a_call(llm_server, tmp_path):
    llm_server.responder = answer_responder
    store = await open_store(str(tmp_path / "cache.db"))
    usage = UsageMeter()
    try:
        client = client_for(llm_server, usage, cache=StoreResponseCache(store))
        try:
            first = await ask(client)
        finally:
            await client.close()
        # A new client (another compile) over the same store.
        client = client_for(llm_server, usage, cache=StoreResponseCache(store))
        try:
            again = await ask(client)
            other = await ask(client, "a different question")
        finally:
            await client.close()
    finally:
        await store.close()
    assert first == again == other
    assert llm_server.calls["chat"] == 2  # the repeat cost no HTTP call
    assert usage.get("other").cached_calls == 1
    assert usage.get("other").llm_calls == 2


async def test_budget_stops_a_call_before_it_is_sent(llm_server):
    llm_server.responder = answer_responder
    usage = UsageMeter(budget_tokens=50)
    client = client_for(llm_server, usage)
    try:
        with pytest.raises(BudgetExceeded):
            await ask(client, "word " * 400)
    finally:
        await client.close()
    assert llm_server.calls["chat"] == 0


async def test_complete_text_returns_the_page_text(llm_server):
    llm_server.responder = lambda request: "  IBM is based in Armonk. [^1]\n"
    client = client_for(llm_server)
    try:
        text = await client.complete_text(system="", prompt="Write.", temperature=0.2, max_tokens=50)
    finally:
        await client.close()
    assert text == "IBM is based in Armonk. [^1]"
    assert llm_server.requests[0].body["max_tokens"] == 50
    assert llm_server.requests[0].response_format is None


async def test_the_server_lists_its_models(llm_server):
    client = client_for(llm_server)
    try:
        models = [m.id async for m in client.sdk.models.list()]
    finally:
        await client.close()
    assert models == ["test-chat", "test-embed"] and llm_server.calls["models"] == 1


async def test_a_reply_body_that_is_not_json_is_a_reply_error_naming_the_endpoint(llm_server):
    llm_server.fail_next(1, "not_json")
    client = client_for(llm_server)
    try:
        with pytest.raises(ReplyError, match=r"127\.0\.0\.1"):
            await client.complete_text(system="s", prompt="p", temperature=0.0)
    finally:
        await client.close()


def test_a_call_that_succeeds_does_not_import_the_sdk_or_httpx(llm_server):
    # Importing openai costs ~0.3-0.8 s of CPU at every compile's start; it is needed only for
    # a failure's exception class or for the SDK client itself. httpx (~80 ms) only for a proxy.
    script = (
        "import asyncio, sys\n"
        "from compendium.engines.openai_client import OpenAIClient\n"
        "from compendium.engines.openai_embedder import OpenAIEmbedder\n"
        "from compendium.engines.usage import UsageMeter\n"
        "async def main():\n"
        "    c = OpenAIClient(base_url=sys.argv[1], model='test-chat', usage=UsageMeter(), api_key='k')\n"
        "    e = OpenAIEmbedder(OpenAIClient(base_url=sys.argv[1], model='test-embed', usage=UsageMeter(), api_key='k'))\n"
        "    try:\n"
        "        await c.complete_text(system='', prompt='Write.', temperature=0.0)\n"
        "        await e.embed(['IBM'])\n"
        "    finally:\n"
        "        await c.close(); await e.close()\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'httpx')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, llm_server.base_url], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert llm_server.calls["chat"] == 1 and llm_server.calls["embeddings"] == 1
