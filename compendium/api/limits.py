"""Request bodies bounded before the app reads them: refused by Content-Length at once, and
cut off while streaming when a chunked body passes the bound."""

from __future__ import annotations

import math
import re
import time
from typing import Any
from urllib.parse import unquote_plus

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


# Query parameters that carry a credential: refused (keys go in the Authorization header) and
# never written to a log.
CREDENTIAL_PARAMETERS = frozenset({"api_key", "apikey", "api-key", "key", "token", "access_token",
                                   "auth", "authorization", "password", "secret", "session"})
# The shape of the keys `compendium keys create` makes (tenancy.create_key): redacted wherever
# a URL holds one, whatever the parameter's name.
_KEY_SHAPE = re.compile(r"cmp_[0-9a-fA-F]{16}_[A-Za-z0-9_-]+")


def redact_query(text: str) -> str:
    """`text` (a path with its query string, or the query alone) with every credential's
    value replaced by 'REDACTED': a parameter named as one however its name is written
    ('api%5Fkey', 'API_Key', after ';'), and any value or path holding one of our keys."""
    path, sep, query = text.partition("?")
    if not sep:
        if "=" not in text:
            return _redact_key(text)
        path, query = "", text
    out = []
    for part in re.split(r"([&;])", query):
        name, eq, _ = part.partition("=")
        # The name as the server reads it: percent-decoded; "api_key%3D…" hides its '='.
        decoded, _, _ = unquote_plus(name).partition("=")
        if decoded.strip().lower() in CREDENTIAL_PARAMETERS:
            part = f"{name}=REDACTED" if eq else f"{decoded.strip()}=REDACTED"
        out.append(_redact_key(part))
    return f"{_redact_key(path)}{sep}{''.join(out)}"


def _redact_key(text: str) -> str:
    if _KEY_SHAPE.search(text):
        return _KEY_SHAPE.sub("REDACTED", text)
    if "%" in text and _KEY_SHAPE.search(unquote_plus(text)):  # a key written percent-encoded
        return "REDACTED"
    return text


class FailedLogins:
    """Failed authentications per client address: a burst of `burst` is let through, then one
    per `every` seconds; past that an address is answered 429 with the seconds to wait, even
    with a right key, so guessing costs time. At most `addresses` are remembered (the longest
    quiet ones are forgotten first)."""

    def __init__(self, burst: int = 20, every: float = 3.0, addresses: int = 10_000) -> None:
        self.burst, self.every, self.addresses = burst, every, addresses
        self._debt: dict[str, tuple[float, float]] = {}  # address -> (failures owed, as of when)

    def _owed(self, address: str, now: float) -> float:
        owed, since = self._debt.get(address, (0.0, now))
        return max(owed - (now - since) / self.every, 0.0)

    def retry_after(self, address: str, now: float | None = None) -> int:
        """Whole seconds `address` must wait before trying again; 0 when it may try now."""
        now = time.monotonic() if now is None else now
        over = self._owed(address, now) - (self.burst - 1)
        return math.ceil(over * self.every) if over > 0 else 0

    def failed(self, address: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        owed = self._owed(address, now) + 1
        self._debt.pop(address, None)
        self._debt[address] = (owed, now)  # the newest last: the first are the quietest
        while len(self._debt) > self.addresses:
            del self._debt[next(iter(self._debt))]
