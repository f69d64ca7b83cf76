"""A scripted OpenAI-compatible server on 127.0.0.1 for tests: real HTTP, faults on demand."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.fingerprint import fingerprint

from .llm_responder import KnowledgeResponder

SCHEMA_SUFFIX = "\n\nReply with one JSON object only, matching the JSON schema"
# Faults of the transport: any request (chat or embeddings) may meet them.
HTTP_FAULTS = ("429", "500", "timeout", "reject_json_schema", "auth", "not_json")
# Faults of the reply's content: a 200 whose text is wrong; only chat requests meet them.
#   truncated       the body of a JSON reply cut off mid-object ("malformed" is its old name)
#   garbage         Markdown prose that cites nothing and names no chunk
#   refusal         "I'm sorry, but I can't help with that."
#   empty           no text at all
#   length          the right answer cut in half, with finish_reason "length"
#   unknown_labels  MAP: every item names a chunk label the batch does not have
#   label_variants  MAP: labels written as models write them ("[c1]", "C1", "chunk c1", "c1:")
#   bad_item        a grouped page update: its first page's item is prose citing nothing
#   lost_item       a grouped page update: its first page's item is left out
CONTENT_FAULTS = ("truncated", "malformed", "garbage", "refusal", "empty", "length", "unknown_labels",
                  "label_variants", "bad_item", "lost_item")
MAP_FAULTS = ("unknown_labels", "label_variants")
GROUP_FAULTS = ("bad_item", "lost_item")  # queued, they wait for a grouped page update
FAULTS = HTTP_FAULTS + CONTENT_FAULTS
TRUNCATED_JSON = '{"entities": [ {"name": "Trunc'
GARBAGE_MARKDOWN = "# Notes\n\nLorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n- item one\n- item two\n"
REFUSAL = "I'm sorry, but I can't help with that request."
LABEL_SHAPES = ("[{}]", "{}", "chunk {}", "{}:", "({})", "{}.", " {} ")


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
        """The first user message: where our prompts put the task (a repair follows it)."""
        users = [m for m in self.messages if m.get("role") == "user"]
        text = str(users[0]["content"]) if users else ""
        return text.split(SCHEMA_SUFFIX, 1)[0]  # the json_object fallback's appended schema

    @property
    def repair(self) -> str:
        """The last user message when the client asks again after a bad reply, else ""."""
        users = [m for m in self.messages if m.get("role") == "user"]
        return str(users[-1]["content"]).split(SCHEMA_SUFFIX, 1)[0] if len(users) > 1 else ""

    @property
    def task_key(self) -> str:
        """Names the task whatever the attempt: a retry or a repair of it has the same key."""
        return fingerprint(self.model, self.system, self.prompt, self.schema_name)

    @property
    def system(self) -> str:
        return "\n".join(str(m["content"]) for m in self.messages if m.get("role") == "system")


Responder = Callable[[ChatRequest], str]


class LLMServer:
    """Start with `start()`, stop with `stop()`; `base_url` ends in /v1.

    Scripting: `fail_next(n, kind)` queues faults for the next n requests (chat or embeddings;
    a content fault waits for a chat request); `fault_rate(kind, rate, seed)` faults that share
    of the tasks (every 1/rate-th task first seen, counted from `seed`), each on its first
    attempt only, so its retry or repair gets the clean answer: the answers, and so the
    compile's output, do not change, only what it costs to get them;
    `supports_json_schema = False` makes every json_schema request a 400; `api_key` set makes
    any other bearer key a 401; `set_latency(s)` makes every answer take that long (counted from
    the request, the answer's own work included); `responder` decides the
    content of chat replies (default: KnowledgeResponder, which answers Compendium's prompts);
    `embeddings_as_floats = True` answers float lists whatever `encoding_format` asks, as some
    servers do; `reports_usage = False` leaves the usage block out of every reply, as some
    servers do. `most_in_flight` is the most requests (of each route) answered at once.

    Streaming (a chat request with "stream": true) answers server-sent events, one chunk a
    word, `stream_delay` seconds apart; with `stream_hold` set, the stream stops after the word
    that completes that text until `stream_release` is set. `streams_ended` counts streams
    whose last event was sent.
    """

    def __init__(self, *, api_key: str | None = None, embedding_dimensions: int = 64):
        self.api_key = api_key
        self.responder: Responder = KnowledgeResponder()
        self.supports_json_schema = True
        self.timeout_sleep = 2.0  # "timeout" faults sleep this long: longer than test timeouts
        self.latency = 0.0
        self.embedding_dimensions = embedding_dimensions
        self.embeddings_as_floats = False
        self.reports_usage = True
        self.model_names = ["test-chat", "test-embed"]
        self.stream_delay = 0.0
        self.stream_hold: str | None = None
        self.stream_release = threading.Event()
        self.streams_ended = 0
        self.refuses_streams = False  # a chat request with "stream": true gets a 400, as some local servers answer
        self._embedder = OfflineEmbedder(dimensions=embedding_dimensions)
        self._faults: deque[str] = deque()
        self._rate: tuple[str, float, int] | None = None
        self._seen: set[str] = set()  # tasks already asked under a fault rate: asked again, clean
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

    def fault_rate(self, kind: str | None, rate: float = 0.0, seed: int = 0) -> None:
        """Fault `rate` of the tasks with `kind` (None: no more rate faults)."""
        if kind is not None and kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; expected one of {', '.join(FAULTS)}")
        with self._lock:
            self._rate = (kind, rate, seed) if kind else None
            self._seen.clear()

    def set_latency(self, seconds: float) -> None:
        self.latency = seconds

    def reset(self) -> None:
        """Zero the counters and drop queued faults (the responder and flags stay)."""
        with self._lock:
            self.calls: Counter[str] = Counter()
            self.in_flight: Counter[str] = Counter()
            self.most_in_flight: Counter[str] = Counter()
            self.prompt_tokens = 0
            self.completion_tokens = 0
            self.requests = []
            self._faults.clear()
            self._rate = None
            self._seen.clear()

    def _next_fault(self, route: str, body: dict[str, Any]) -> str | None:
        """The fault this request meets: the queue first, then the rate (chat content faults
        wait in the queue for a chat request; MAP faults count MAP requests only)."""
        chat = route == "/v1/chat/completions"
        with self._lock:
            if self._faults and self._faults[0] in GROUP_FAULTS:
                if chat and self.chat_request(body).schema_name == "page_additions":
                    return self._faults.popleft()
            elif self._faults and (chat or self._faults[0] in HTTP_FAULTS):
                return self._faults.popleft()
            if self._rate is None:
                return None
            kind, rate, seed = self._rate
            if kind in CONTENT_FAULTS and not chat:
                return None
            if kind in MAP_FAULTS and self.chat_request(body).schema_name != "extraction":
                return None
            if kind in GROUP_FAULTS and self.chat_request(body).schema_name != "page_additions":
                return None
            task = self.task_of(route, body)
            if task in self._seen:
                return None
            # Every 1/rate-th new task, counted from `seed`: exactly that share of the tasks.
            n = len(self._seen) + seed
            self._seen.add(task)
            if int((n + 1) * rate) == int(n * rate):
                return None
            return kind

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

    @contextlib.contextmanager
    def answering(self, route: str) -> Iterator[None]:
        """Counts the requests of a route being answered at once (during the latency)."""
        with self._lock:
            self.in_flight[route] += 1
            self.most_in_flight[route] = max(self.most_in_flight[route], self.in_flight[route])
        try:
            yield
        finally:
            with self._lock:
                self.in_flight[route] -= 1

    def _count(self, *keys: str) -> None:
        with self._lock:
            for key in keys:
                self.calls[key] += 1

    def _tokens(self, prompt: int, completion: int) -> None:
        with self._lock:
            self.prompt_tokens += prompt
            self.completion_tokens += completion

    def chat_request(self, body: dict[str, Any]) -> ChatRequest:
        response_format = body.get("response_format")
        kind = (response_format or {}).get("type", "text")
        messages = body.get("messages") or []
        schema_name = None
        if kind == "json_schema":
            schema_name = response_format["json_schema"]["name"]  # type: ignore[index]
        elif kind == "json_object":
            found = re.search(r'matching the JSON schema "(\w+)"', str(messages[-1].get("content", "")))
            schema_name = found.group(1) if found else "json"
        return ChatRequest(
            model=str(body.get("model", "")),
            messages=messages,
            response_format=response_format,
            schema_name=schema_name,
            temperature=body.get("temperature"),
            body=body,
        )

    def task_of(self, route: str, body: dict[str, Any]) -> str:
        if route == "/v1/chat/completions":
            return self.chat_request(body).task_key
        return fingerprint(body.get("model"), body.get("input"))

    def chat(self, body: dict[str, Any], fault: str | None) -> tuple[int, dict[str, Any]]:
        request = self.chat_request(body)
        kind = (request.response_format or {}).get("type", "text")
        if kind == "json_schema" and (fault == "reject_json_schema" or not self.supports_json_schema):
            self._count("chat", "rejected_json_schema")
            return 400, _error(
                "response_format of type 'json_schema' is not supported by this model",
                "invalid_request_error",
                param="response_format",
            )
        schema_name = request.schema_name
        self._count("chat", kind, *([schema_name] if schema_name else []))
        with self._lock:
            self.requests.append(request)
        content, finish = self._content(request, fault)
        prompt_tokens = sum(count_tokens(str(m.get("content", ""))) for m in request.messages)
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
                    "finish_reason": finish,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _content(self, request: ChatRequest, fault: str | None) -> tuple[str, str]:
        """The reply's text and finish_reason, spoiled as the fault says."""
        if fault in ("truncated", "malformed"):
            return TRUNCATED_JSON, "stop"
        if fault == "garbage":
            return GARBAGE_MARKDOWN, "stop"
        if fault == "refusal":
            return REFUSAL, "stop"
        if fault == "empty":
            return "", "stop"
        answer = self.responder(request)
        if fault == "length":
            return answer[: max(1, len(answer) // 2)], "length"
        if fault in ("unknown_labels", "label_variants") and request.schema_name == "extraction":
            return _relabel(answer, fault), "stop"
        if fault in GROUP_FAULTS and request.schema_name == "page_additions":
            return _spoil_first_item(answer, fault), "stop"
        return answer, "stop"

    def embeddings(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, _error("input must be a string or a list of strings", "invalid_request_error")
        self._count("embeddings")
        vectors = self._embedder.embed_sync(texts)
        as_base64 = body.get("encoding_format") == "base64" and not self.embeddings_as_floats
        if as_base64:
            self._count("embeddings_base64")
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


def _relabel(answer: str, fault: str) -> str:
    """A MAP reply whose chunk labels are unknown ("x1") or written in other shapes."""
    try:
        reply = json.loads(answer)
    except ValueError:
        return answer
    n = 0
    for items in reply.values() if isinstance(reply, dict) else ():
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and isinstance(item.get("chunk"), str):
                label = item["chunk"]
                if fault == "unknown_labels":
                    item["chunk"] = "x" + label.lstrip("cC")
                else:
                    shape = LABEL_SHAPES[n % len(LABEL_SHAPES)]
                    item["chunk"] = shape.format(label.upper() if n % 2 else label)
                n += 1
    return json.dumps(reply)


def _spoil_first_item(answer: str, fault: str) -> str:
    """A grouped update whose first item cites nothing (bad_item) or is missing (lost_item)."""
    reply = json.loads(answer)
    items = reply.get("pages") or []
    if items:
        if fault == "lost_item":
            items.pop(0)
        else:
            items[0]["markdown"] = GARBAGE_MARKDOWN
    return json.dumps(reply)


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
    _due = 0.0  # monotonic time before which the answer being written is not sent
    disable_nagle_algorithm = True  # small replies otherwise wait ~40 ms for a delayed ACK

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def _send(self, status: int, payload: dict[str, Any] | str, headers: dict[str, str] | None = None) -> None:
        if isinstance(payload, dict) and not self.server_state.reports_usage:
            payload = {k: v for k, v in payload.items() if k != "usage"}
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        wait = self._due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
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
        # The latency is the time to the answer, as an endpoint's is: the answer is written
        # first, then sent once the latency has passed since the request came in.
        self._due = time.monotonic() + state.latency
        with state.answering(route.rsplit("/", 1)[-1]):
            self._answer(state, route, body)

    def _answer(self, state: LLMServer, route: str, body: dict[str, Any]) -> None:
        if not self._authorised():
            self._send(401, _error("Incorrect API key provided", "invalid_request_error", code="invalid_api_key"))
            return
        if body.get("model") not in state.model_names:
            self._send(404, _error(f"The model `{body.get('model')}` does not exist", "invalid_request_error", code="model_not_found"))
            return
        fault = state._next_fault(route, body)
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
            if fault in CONTENT_FAULTS:
                state._count("faults", f"fault_{fault}")
            if body.get("stream") and state.refuses_streams:
                state._count("faults", "stream_refused")
                self._send(400, {"error": {"message": "stream is not supported", "type": "invalid_request_error"}})
                return
            status, payload = state.chat(body, fault)
            if status == 200 and body.get("stream"):
                self._stream(state, payload, body)
                return
        self._send(status, payload)

    def _stream(self, state: LLMServer, payload: dict[str, Any], body: dict[str, Any]) -> None:
        """The completion as server-sent events: a chunk a word, then usage, then [DONE]."""
        wait = self._due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        content = payload["choices"][0]["message"]["content"]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def event(data: dict[str, Any] | str) -> None:
            text = data if isinstance(data, str) else json.dumps(data)
            self.wfile.write(f"data: {text}\n\n".encode())
            self.wfile.flush()

        base = {"id": payload["id"], "object": "chat.completion.chunk", "created": payload["created"],
                "model": payload["model"]}
        sent = ""
        held = False
        for piece in re.findall(r"\S+\s*|\s+", content):
            event({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
            sent += piece
            if state.stream_hold and not held and state.stream_hold in sent:
                held = True
                state.stream_release.wait(30)
            elif state.stream_delay:
                time.sleep(state.stream_delay)
        event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": payload["choices"][0]["finish_reason"]}]})
        if (body.get("stream_options") or {}).get("include_usage") and state.reports_usage:
            event({**base, "choices": [], "usage": payload["usage"]})
        event("[DONE]")
        with state._lock:
            state.streams_ended += 1
