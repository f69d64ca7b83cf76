"""A local endpoint that answers a chat request asked before with the reply a model gave it then.

The real-model server logs every request and reply (`--dump`, JSON lines). Its sampling seed is
fixed, so the same request gets the same reply: a benchmark re-run after a change to the checks
can take the recorded replies and send only the requests that changed (a repair, a page whose
evidence moved) to the model. A request is the same when its messages, response format,
temperature and, for a reply cut at its bound, its bound are.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_BODY_LIMIT = 16 * 1024 * 1024  # a request larger than any prompt the benchmark makes is refused
_JSON = "application/json"
_EVENTS = "text/event-stream"


def request_key(request: dict[str, Any], cut: bool) -> str:
    """What makes two requests the same for a model with a fixed seed."""
    fields = {k: request.get(k) for k in ("messages", "response_format")}
    temperature = request.get("temperature")
    fields["temperature"] = float(temperature) if isinstance(temperature, (int, float)) else temperature  # 0 is 0.0
    if cut:
        fields["max_tokens"] = request.get("max_tokens")
    return json.dumps(fields, sort_keys=True)


def load_replies(dump: Path) -> dict[str, dict[str, Any]]:
    """The dump's replies by request key (the first one of a repeated request)."""
    replies: dict[str, dict[str, Any]] = {}
    for line in dump.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        entry = json.loads(line)
        cut = entry.get("finish") == "length"
        replies.setdefault(request_key(entry["request"], cut), {"reply": entry["reply"], "finish": entry["finish"]})
    return replies


def _completion(model: str, reply: str, finish: str) -> dict[str, Any]:
    words = len(reply.split())
    return {"id": "chatcmpl-replay", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 0, "completion_tokens": words, "total_tokens": words}}


def _streamed(model: str, reply: str, finish: str) -> bytes:
    """The reply as server-sent events, as an endpoint streams it (stream=True): one delta with
    the text, one with the finish reason, the usage, then [DONE]."""
    words = len(reply.split())
    base = {"id": "chatcmpl-replay", "object": "chat.completion.chunk", "created": 0, "model": model}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": reply}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        {**base, "choices": [], "usage": {"prompt_tokens": 0, "completion_tokens": words, "total_tokens": words}},
    ]
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"


class ReplayProxy:
    """`with ReplayProxy(dump, upstream, timeout) as proxy:` serves `proxy.base_url` until the
    block ends; `replayed` and `forwarded` count the requests answered each way."""

    def __init__(self, dump: Path, upstream: str, timeout: float,
                 log_misses: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.replies = load_replies(dump)
        self.log_misses = log_misses
        self.upstream = upstream.rstrip("/")
        self.timeout = timeout
        self.replayed = 0
        self.forwarded = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ReplayProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, body: bytes | None) -> tuple[int, bytes, str]:
        """The recorded reply for a chat request asked before, else the upstream's answer; with
        its content type (a streamed request is answered as a stream: answered as one JSON body,
        the client read an empty reply, and `ask` went to its repair)."""
        if body is not None and path.endswith("/chat/completions"):
            request = json.loads(body)
            for cut in (False, True):
                recorded = self.replies.get(request_key(request, cut))
                if recorded is not None and (recorded["finish"] == "length") == cut:
                    with self._lock:
                        self.replayed += 1
                    model = request.get("model", "")
                    if request.get("stream"):
                        return 200, _streamed(model, recorded["reply"], recorded["finish"]), _EVENTS
                    return 200, json.dumps(_completion(model, recorded["reply"], recorded["finish"])).encode(), _JSON
        with self._lock:
            self.forwarded += body is not None
        if body is not None and self.log_misses:
            self.log_misses(json.loads(body))
        target = self.upstream + path.removeprefix("/v1")
        outgoing = urllib.request.Request(target, data=body, method="POST" if body is not None else "GET",
                                          headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(outgoing, timeout=self.timeout) as got:
                return got.status, got.read(), got.headers.get("Content-Type") or _JSON
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), _JSON
        except OSError as exc:  # the endpoint is down: the client sees a server error, not a reset
            return 502, json.dumps({"error": {"message": f"replay: upstream unreachable: {exc}"}}).encode(), _JSON

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def _send(self, status: int, data: bytes, kind: str = _JSON) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(*proxy.answer(self.path, None))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > _BODY_LIMIT:
                    self._send(413, b'{"error": {"message": "request too large"}}')
                    return
                self._send(*proxy.answer(self.path, self.rfile.read(length)))

            def log_message(self, *args: object) -> None:
                pass

        return Handler
