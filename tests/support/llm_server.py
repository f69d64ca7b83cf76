"""A scripted OpenAI-compatible server on 127.0.0.1 for tests: real HTTP, faults on demand."""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from compendium.engines.offline_embedder import OfflineEmbedder

from .llm_responder import KnowledgeResponder

SCHEMA_SUFFIX = "\n\nReply with one JSON object only, matching the JSON schema"
FAULTS = ("429", "500", "timeout", "malformed", "reject_json_schema", "auth", "not_json")


def count_tokens(text: str) -> int:
    try:
        from compendium.tokens import count_tokens as shared  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return len(text) // 4 + 1
    return int(shared(text))


@dataclass
class ChatRequest:
    """What the responder sees of one chat call."""

    model: str
    messages: list[dict[str, Any]]
    response_format: dict[str, Any] | None
    schema_name: str | None  # from json_schema, or parsed from a json_object prompt
    temperature: float | None = None
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """The last user message: where our prompts put the task."""
        users = [m for m in self.messages if m.get("role") == "user"]
        text = str(users[-1]["content"]) if users else ""
        return text.split(SCHEMA_SUFFIX, 1)[0]  # the json_object fallback's appended schema

    @property
    def system(self) -> str:
        return "\n".join(str(m["content"]) for m in self.messages if m.get("role") == "system")


Responder = Callable[[ChatRequest], str]


class LLMServer:
    """Start with `start()`, stop with `stop()`; `base_url` ends in /v1.

    Scripting: `fail_next(n, kind)` queues faults for the next n requests (chat or embeddings);
    `supports_json_schema = False` makes every json_schema request a 400; `api_key` set makes
    any other bearer key a 401; `set_latency(s)` delays every answer; `responder` decides the
    content of chat replies (default: KnowledgeResponder, which answers Compendium's prompts).
    """

    def __init__(self, *, api_key: str | None = None, embedding_dimensions: int = 64):
        self.api_key = api_key
        self.responder: Responder = KnowledgeResponder()
        self.supports_json_schema = True
        self.timeout_sleep = 2.0  # "timeout" faults sleep this long: longer than test timeouts
        self.latency = 0.0
        self.embedding_dimensions = embedding_dimensions
        self.model_names = ["test-chat", "test-embed"]
        self._embedder = OfflineEmbedder(dimensions=embedding_dimensions)
        self._faults: deque[str] = deque()
        self._lock = threading.Lock()
        self.requests: list[ChatRequest] = []
        self.reset()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- scripting ---------------------------------------------------------------------

    def fail_next(self, n: int, kind: str) -> None:
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; expected one of {', '.join(FAULTS)}")
        with self._lock:
            self._faults.extend([kind] * n)

    def set_latency(self, seconds: float) -> None:
        self.latency = seconds

    def reset(self) -> None:
        """Zero the counters and drop queued faults (the responder and flags stay)."""
        with self._lock:
            self.calls: Counter[str] = Counter()
            self.prompt_tokens = 0
            self.completion_tokens = 0
            self.requests = []
            self._faults.clear()

    def _next_fault(self) -> str | None:
        with self._lock:
            return self._faults.popleft() if self._faults else None

    # ---- lifecycle ---------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LLMServer:
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- answers -----------------------------------------------------------------------

    def _count(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self.calls[key] += 1

    def _tokens(self, prompt: int, completion: int) -> None:
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion

    def chat(self, body: dict[str, Any], fault: str | None) -> tuple[int, dict[str, Any]]:
        response_format = body.get("response_format")
        kind = (response_format or {}).get("type", "text")
        messages = body.get("messages") or []
        if kind == "json_schema" and (fault == "reject_json_schema" or not self.supports_json_schema):
            self._count("chat", "rejected_json_schema")
            return 400, _error(
                "response_format of type 'json_schema' is not supported by this model",
                "invalid_request_error",
                param="response_format",
            )
        schema_name = None
        if kind == "json_schema":
            schema_name = response_format["json_schema"]["name"]  # type: ignore[index]
        elif kind == "json_object":
            found = re.search(r'matching the JSON schema "(\w+)"', str(messages[-1].get("content", "")))
            schema_name = found.group(1) if found else "json"
        request = ChatRequest(
            model=str(body.get("model", "")),
            messages=messages,
            response_format=response_format,
            schema_name=schema_name,
            temperature=body.get("temperature"),
            body=body,
        )
        self._count("chat", kind, *([schema_name] if schema_name else []))
        with self._lock:
            self.requests.append(request)
        content = '{"entities": [' if fault == "malformed" else self.responder(request)
        prompt_tokens = sum(count_tokens(str(m.get("content", ""))) for m in messages)
        completion_tokens = count_tokens(content)
        self._tokens(prompt_tokens, completion_tokens)
        return 200, {
            "id": f"chatcmpl-{self.calls['chat']}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def embeddings(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, _error("input must be a string or a list of strings", "invalid_request_error")
        self._count("embeddings")
        vectors = self._embedder.embed_sync(texts)
        as_base64 = body.get("encoding_format") == "base64"
        tokens = sum(count_tokens(t) for t in texts)
        self._tokens(tokens, 0)
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode() if as_base64 else v.tolist(),
            }
            for i, v in enumerate(vectors)
        ]
        return 200, {
            "object": "list",
            "data": data,
            "model": body.get("model", ""),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def _error(message: str, type_: str, *, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The client hung up on a "timeout" fault: expected, nothing to report.
        return None


class _Handler(BaseHTTPRequestHandler):
    server_state: LLMServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small replies otherwise wait ~40 ms for a delayed ACK

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _send(self, status: int, payload: dict[str, Any] | str, headers: dict[str, str] | None = None) -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        expected = self.server_state.api_key
        if expected is None:
            return True
        return self.headers.get("Authorization", "") == f"Bearer {expected}"

    def do_GET(self) -> None:
        state = self.server_state
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, _error(f"no route {self.path}", "invalid_request_error"))
            return
        if not self._authorised():
            self._send(401, _error("Incorrect API key provided", "invalid_request_error", code="invalid_api_key"))
            return
        state._count("models")
        self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "test"} for m in state.model_names]})

    def do_POST(self) -> None:
        state = self.server_state
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, _error("request body is not JSON", "invalid_request_error"))
            return
        route = self.path.rstrip("/")
        if route not in ("/v1/chat/completions", "/v1/embeddings"):
            self._send(404, _error(f"no route {self.path}", "invalid_request_error"))
            return
        if state.latency:
            time.sleep(state.latency)
        if not self._authorised():
            self._send(401, _error("Incorrect API key provided", "invalid_request_error", code="invalid_api_key"))
            return
        if body.get("model") not in state.model_names:
            self._send(404, _error(f"The model `{body.get('model')}` does not exist", "invalid_request_error", code="model_not_found"))
            return
        fault = state._next_fault()
        if fault == "429":
            state._count("faults", "fault_429")
            self._send(429, _error("Rate limit reached", "requests", code="rate_limit_exceeded"), {"Retry-After": "0"})
            return
        if fault == "500":
            state._count("faults", "fault_500")
            self._send(500, _error("The server had an error", "server_error"))
            return
        if fault == "auth":
            state._count("faults", "fault_auth")
            self._send(401, _error("Incorrect API key provided", "invalid_request_error", code="invalid_api_key"))
            return
        if fault == "not_json":  # a proxy's error page with a 200 status
            state._count("faults", "fault_not_json")
            self._send(200, "<html><body>Bad gateway</body></html>")
            return
        if fault == "timeout":
            state._count("faults", "fault_timeout")
            time.sleep(state.timeout_sleep)
            self.close_connection = True  # the client gave up long ago: answer nothing
            return
        if route == "/v1/embeddings":
            status, payload = state.embeddings(body)
        else:
            if fault == "malformed":
                state._count("faults", "fault_malformed")
            status, payload = state.chat(body, fault)
        self._send(status, payload)
