"""Request bodies bounded before the app reads them: refused by Content-Length at once, and
cut off while streaming when a chunked body passes the bound."""

from __future__ import annotations

import re
from typing import Any

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import error_response

UPLOAD_PATH = re.compile(r"^/knowledge-bases/[^/]+/documents/?$")
MAX_JSON_BYTES = 8 * 1024 * 1024  # a page edit is at most 1M characters, escaped in JSON
MULTIPART_OVERHEAD = 1024 * 1024  # part headers and the form's small fields


def upload_request_limit(max_file_bytes: int) -> int:
    """One upload request: a few files of the largest size (more go in more requests)."""
    return 5 * max_file_bytes + MULTIPART_OVERHEAD


class BodyLimit:
    """ASGI middleware: uploads may carry `upload_bytes`, every other body `json_bytes`."""

    def __init__(self, app: ASGIApp, *, upload_bytes: int, json_bytes: int = MAX_JSON_BYTES):
        self.app, self.upload_bytes, self.json_bytes = app, upload_bytes, json_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        upload = bool(UPLOAD_PATH.match(scope["path"]))
        limit = self.upload_bytes if upload else self.json_bytes
        length = _header(scope, b"content-length")
        if length is not None and not _DIGITS.fullmatch(length):
            await error_response(400, "bad_request", "Content-Length is not a number")(scope, receive, send)
            return
        if length is not None and int(length) > limit:
            await error_response(413, "too_large", _too_large(limit, upload))(scope, receive, send)
            return
        received = 0

        async def bounded() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:  # a chunked body: stop reading, answer 413
                    raise HTTPException(413, _too_large(limit, upload))
            return message

        await self.app(scope, bounded, send)


_DIGITS = re.compile(r"[0-9]{1,19}")


def _too_large(limit: int, upload: bool) -> str:
    advice = "send fewer or smaller files per request" if upload else "send a smaller body"
    return f"the request body is larger than {limit} bytes ({limit / 2**20:.0f} MiB); {advice}"


def _header(scope: Scope, name: bytes) -> Any:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1").strip()
    return None
