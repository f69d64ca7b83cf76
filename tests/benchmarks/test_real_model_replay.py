"""The real-model benchmark's replay: a request asked before gets the reply the model gave it,
through the real openai client; any other goes to the endpoint (the scripted server here)."""

from __future__ import annotations

import json
from pathlib import Path

from openai import OpenAI

from benchmarks.real_model_replay import ReplayProxy
from tests.support.llm_server import LLMServer

ASKED = [{"role": "system", "content": "You answer with JSON only."},
         {"role": "user", "content": "Extract knowledge from the chunks below."}]


def _dump(path: Path, *entries: dict) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


def test_a_request_asked_before_is_answered_from_the_dump_and_others_by_the_endpoint(tmp_path):
    # The server logged temperature 0 as written; the client sends 0.0: the same request.
    dump = _dump(tmp_path / "calls.jsonl",
                 {"request": {"model": "test-chat", "messages": ASKED, "temperature": 0, "max_tokens": 2048},
                  "reply": '{"claims": []}', "finish": "stop"})
    with LLMServer() as server, ReplayProxy(dump, server.base_url, 30) as proxy:
        client = OpenAI(base_url=proxy.base_url, api_key="x", max_retries=0)
        again = client.chat.completions.create(model="test-chat", messages=ASKED, temperature=0.0, max_tokens=1024)
        assert again.choices[0].message.content == '{"claims": []}'
        assert again.choices[0].finish_reason == "stop"
        assert len(server.requests) == 0
        # Sampled otherwise (a repair drawn hotter): the model is asked.
        other = client.chat.completions.create(model="test-chat", messages=ASKED, temperature=0.3, max_tokens=1024)
        assert len(server.requests) == 1 and other.choices[0].message.content != '{"claims": []}'
        assert (proxy.replayed, proxy.forwarded) == (1, 1)


def test_a_reply_cut_at_its_bound_is_replayed_only_under_the_same_bound(tmp_path):
    dump = _dump(tmp_path / "calls.jsonl",
                 {"request": {"model": "test-chat", "messages": ASKED, "temperature": 0, "max_tokens": 512},
                  "reply": '{"claims": [{"text": "cut', "finish": "length"})
    with LLMServer() as server, ReplayProxy(dump, server.base_url, 30) as proxy:
        client = OpenAI(base_url=proxy.base_url, api_key="x", max_retries=0)
        cut = client.chat.completions.create(model="test-chat", messages=ASKED, temperature=0, max_tokens=512)
        assert cut.choices[0].finish_reason == "length"
        client.chat.completions.create(model="test-chat", messages=ASKED, temperature=0, max_tokens=2048)
        assert (proxy.replayed, proxy.forwarded) == (1, 1) and len(server.requests) == 1


def test_a_streamed_request_asked_before_is_replayed_as_a_stream(tmp_path):
    # `ask` streams its answer: replayed as one JSON body, the client read no text at all, and
    # every replayed answer went to the repair.
    dump = _dump(tmp_path / "calls.jsonl",
                 {"request": {"model": "test-chat", "messages": ASKED, "temperature": 0, "max_tokens": 600,
                              "stream": True, "stream_options": {"include_usage": True}},
                  "reply": "Vacuum removes dead tuples [C1].", "finish": "stop"})
    with LLMServer() as server, ReplayProxy(dump, server.base_url, 30) as proxy:
        client = OpenAI(base_url=proxy.base_url, api_key="x", max_retries=0)
        stream = client.chat.completions.create(model="test-chat", messages=ASKED, temperature=0.0, max_tokens=600,
                                                stream=True, stream_options={"include_usage": True})
        chunks = list(stream)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Vacuum removes dead tuples [C1]."
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
        assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 5
        # The same asked whole (a server that refused to stream) is the same request.
        whole = client.chat.completions.create(model="test-chat", messages=ASKED, temperature=0.0, max_tokens=600)
        assert whole.choices[0].message.content == "Vacuum removes dead tuples [C1]."
        assert (proxy.replayed, proxy.forwarded) == (2, 0) and len(server.requests) == 0
