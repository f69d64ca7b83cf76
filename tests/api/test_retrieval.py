"""POST retrieve and ask over a knowledge base compiled through the API: shape, stream order,
heartbeats, SSE, tenant isolation and the knowledge base's token budget."""

from __future__ import annotations

import json

import pytest

from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import ChatRequest

from .conftest import parse_sse

QUESTION = "How does Vacuum use the Visibility Map?"


async def compiled(api, tenant: str = "acme", kb: str = "handbook") -> dict[str, str]:
    """A tenant's knowledge base holding the sample corpus, compiled offline; its headers."""
    key = await api.tenant_key(tenant)
    h = api.as_(key)
    r = await api.client.post("/knowledge-bases", json={"name": kb, "engine": "offline"}, headers=h)
    assert r.status_code == 201, r.text
    await api.upload_corpus(kb, key)
    job = (await api.client.post(f"/knowledge-bases/{kb}/compile", json={}, headers=h)).json()
    events = await api.follow(job["id"], key)
    assert events[-1][1]["status"] == "succeeded", events[-1]
    return h


def ndjson(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


async def test_retrieve_and_ask_over_the_api(make_api):
    async with make_api() as api:
        h = await compiled(api)
        r = await api.client.post("/knowledge-bases/handbook/retrieve",
                                  json={"question": QUESTION, "top_k": 5}, headers=h)
        assert r.status_code == 200, r.text
        data = r.json()
        assert list(data) == ["question", "entities", "relations", "pages", "topics", "chunks", "context"]
        assert data["chunks"][0]["document"].startswith("corpus/")
        assert {e["name"] for e in data["entities"]} >= {"Vacuum", "Visibility Map"}

        r = await api.client.post("/knowledge-bases/handbook/ask", json={"question": QUESTION}, headers=h)
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
        events = ndjson(r.text)
        kinds = [e["type"] for e in events]
        assert kinds[:2] == ["stage", "stage"] and kinds[-1] == "final"
        assert set(kinds[2:-1]) == {"note", "sentence"}  # offline: an extractive answer, said so
        final = events[-1]
        returned = {c["chunk_id"] for c in final["evidence"]["chunks"]}
        returned |= {e["id"] for e in final["evidence"]["entities"]}
        assert final["citations"] and all(c["id"] in returned for c in final["citations"])
        assert any(c["kind"] == "chunk" for c in final["citations"])

        r = await api.client.post("/knowledge-bases/handbook/ask", json={"question": QUESTION},
                                  headers={**h, "Accept": "text/event-stream"})
        assert r.headers["content-type"].startswith("text/event-stream")
        names = [name for name, _ in parse_sse(r.text)]
        assert names[0] == "stage" and names[-1] == "final" and "sentence" in names

        r = await api.client.post("/knowledge-bases/handbook/retrieve", headers=h,
                                  json={"question": QUESTION, "top_k": 5, "path_prefix": "corpus/storage/"})
        assert r.status_code == 200, r.text
        assert r.json()["chunks"] and all(c["document"].startswith("corpus/storage/") for c in r.json()["chunks"])

        bad = await api.client.post("/knowledge-bases/handbook/retrieve",
                                    json={"question": QUESTION, "mode": "everything"}, headers=h)
        assert bad.status_code == 422

        # no model behind an offline knowledge base: the fused order, and a note saying why
        r = await api.client.post("/knowledge-bases/handbook/retrieve", headers=h,
                                  json={"question": QUESTION, "top_k": 5, "rerank": "llm"})
        assert r.status_code == 200, r.text
        assert r.json()["chunks"] == data["chunks"]
        assert any("no model is configured" in note for note in r.json()["notes"])


async def test_another_tenant_sees_neither_endpoint(make_api):
    async with make_api() as api:
        await compiled(api, "acme", "handbook")
        other = api.as_(await api.tenant_key("globex"))
        for path in ("retrieve", "ask"):
            r = await api.client.post(f"/knowledge-bases/handbook/{path}", json={"question": QUESTION},
                                      headers=other)
            assert r.status_code == 404, (path, r.text)
            assert "Vacuum" not in r.text
        r = await api.client.post("/knowledge-bases/handbook/retrieve", json={"question": QUESTION})
        assert r.status_code == 401


async def test_ask_through_the_llm_sends_heartbeats_and_keeps_the_token_budget(make_api, llm_server):
    def respond(request: ChatRequest) -> str:
        if (request.schema_name or "") == "question_terms":
            return '{"names": ["Vacuum"], "keywords": ["visibility"]}'
        return "Vacuum reads the Visibility Map to skip pages that need no work [C1]."

    llm_server.responder = respond
    async with make_api(settings_for(llm_server)) as api:
        h = await compiled(api)
        r = await api.client.patch("/knowledge-bases/handbook", json={"engine": "auto"}, headers=h)
        assert r.status_code == 200, r.text
        api.app.state.heartbeat_seconds = 0.05
        llm_server.set_latency(0.3)
        r = await api.client.post("/knowledge-bases/handbook/ask", json={"question": QUESTION}, headers=h)
        events = ndjson(r.text)
        kinds = [e["type"] for e in events]
        assert "heartbeat" in kinds and kinds[-1] == "final", kinds
        assert events[-1]["answer"] == "Vacuum reads the Visibility Map to skip pages that need no work [C1]."
        assert [e["stage"] for e in events if e["type"] == "stage"] == ["retrieve", "answer"]
        llm_server.set_latency(0.0)

        await api.client.patch("/knowledge-bases/handbook", json={"token_budget": 300}, headers=h)
        r = await api.client.post("/knowledge-bases/handbook/ask",
                                  json={"question": "What does the checkpointer write?"}, headers=h)
        events = ndjson(r.text)
        assert events[-1]["type"] == "error", events[-1]
        assert "budget" in events[-1]["message"]


@pytest.mark.parametrize("body", [{"question": ""}, {"question": "x" * 2001}, {"question": "q", "top_k": 0},
                                  {"question": "q", "extra": 1}, {"question": "q", "rerank": "cosine"}])
async def test_bad_requests_are_422(make_api, body):
    async with make_api(run_worker=False) as api:
        h = api.as_(await api.tenant_key("acme"))
        await api.client.post("/knowledge-bases", json={"name": "kb"}, headers=h)
        r = await api.client.post("/knowledge-bases/kb/retrieve", json=body, headers=h)
        assert r.status_code == 422, r.text
