"""A small HTTP/1.1 client that posts JSON to one endpoint over kept-alive connections.

httpx, with httpcore, h11 and anyio beneath it, spends ~0.5 ms of CPU on each request (some
3,000 Python calls through its layers); a compile posts thousands, and this client spends
~0.05 ms on one. It does only what those posts need: POST of a body of known length; replies
framed by Content-Length, chunked, or the connection's end; gzip and deflate bodies; a
timeout on each wait; TLS. Endpoints behind a proxy or with credentials in the URL go
through httpx instead (transport.py decides).
"""

from __future__ import annotations

import asyncio
import ssl
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

_MAX_HEAD = 1 << 16  # bytes of status line and headers a reply may have
_MAX_IDLE = 100  # connections kept open between calls, as httpx's keep-alive limit


class HTTPFailure(Exception):
    """The request got no usable reply: refused, reset, cut off or malformed."""


class HTTPTimeout(HTTPFailure):
    """Connecting, sending or a wait for the reply's next bytes took longer than allowed."""


class _Stale(Exception):
    """A kept-alive connection the server had closed before our request reached it."""


@dataclass(slots=True)
class Reply:
    status: int
    headers: list[tuple[str, str]]  # names in lower case, in the order received
    body: bytes  # decoded from its Content-Encoding


class _Connection:
    __slots__ = ("loop", "reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.loop = asyncio.get_running_loop()

    def usable(self) -> bool:
        return (
            self.loop is asyncio.get_running_loop()
            and not self.reader.at_eof()
            and not self.writer.transport.is_closing()
        )

    def close(self) -> None:
        if self.loop is asyncio.get_running_loop():
            self.writer.close()
        elif not self.loop.is_closed():  # made on another loop: closed there
            self.loop.call_soon_threadsafe(self.writer.close)


class Pool:
    """POST to `base_url` + path; connections are reused while the server keeps them."""

    def __init__(
        self, base_url: str, headers: dict[str, str], *, timeout: float, connect_timeout: float,
        tls: ssl.SSLContext | None = None,
    ):
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {base_url}")
        self.url = base_url
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.tls = tls if parts.scheme == "https" else None
        self.timeout, self.connect_timeout = timeout, connect_timeout
        self._prefix = (parts.path.rstrip("/") + "/").encode("ascii")
        fixed = {"Host": parts.netloc, "Accept-Encoding": "gzip, deflate", "Connection": "keep-alive", **headers}
        self._fixed = "".join(f"{name}: {value}\r\n" for name, value in fixed.items()).encode("latin-1")
        self._idle: list[_Connection] = []
        self._closed = False

    async def post(self, path: str, body: bytes) -> Reply:
        request = b"".join((
            b"POST ", self._prefix, path.lstrip("/").encode("ascii"), b" HTTP/1.1\r\n", self._fixed,
            b"Content-Length: %d\r\n\r\n" % len(body), body,
        ))
        while True:
            conn, reused = await self._connection()
            kept = False
            try:
                reply, kept = await self._exchange(conn, request, reused)
            except _Stale:
                continue  # the server had closed it while idle: another one, or a new one
            finally:
                if kept and not self._closed and len(self._idle) < _MAX_IDLE:
                    self._idle.append(conn)
                else:  # an error, a cancelled call or a server that closes: never reused
                    conn.close()
            return reply

    async def close(self) -> None:
        self._closed = True  # a call still in flight closes its connection when it ends
        idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    async def _connection(self) -> tuple[_Connection, bool]:
        while self._idle:
            conn = self._idle.pop()
            if conn.usable():
                return conn, True
            conn.close()
        try:
            async with asyncio.timeout(self.connect_timeout):
                reader, writer = await asyncio.open_connection(
                    self.host, self.port, ssl=self.tls, server_hostname=self.host if self.tls else None,
                    limit=_MAX_HEAD,
                )
        except TimeoutError as exc:
            raise HTTPTimeout(f"connecting to {self.host}:{self.port} took over {self.connect_timeout:g} s") from exc
        except OSError as exc:  # refused, unknown host, TLS handshake
            raise HTTPFailure(f"cannot connect to {self.host}:{self.port}: {exc}") from exc
        return _Connection(reader, writer), False

    async def _exchange(self, conn: _Connection, request: bytes, reused: bool) -> tuple[Reply, bool]:
        reader = conn.reader
        try:
            conn.writer.write(request)
            async with asyncio.timeout(self.timeout):
                await conn.writer.drain()
                head = await reader.readuntil(b"\r\n\r\n")
            status, version, headers = _head(head)
            while 100 <= status < 200:  # an interim reply (100 Continue, 103 Early Hints)
                async with asyncio.timeout(self.timeout):
                    head = await reader.readuntil(b"\r\n\r\n")
                status, version, headers = _head(head)
            fields = dict(headers)
            tokens = {t.strip().lower() for t in fields.get("connection", "").split(",")}
            keep = "close" not in tokens if version == "HTTP/1.1" else "keep-alive" in tokens
            if status in (204, 304):
                body = b""
            elif "chunked" in fields.get("transfer-encoding", "").lower():
                body = await self._chunked(reader)
            elif "content-length" in fields:
                body = await self._exactly(reader, int(fields["content-length"]))
            else:  # the body ends with the connection
                body, keep = await self._until_end(reader), False
            return Reply(status, headers, _decoded(body, fields.get("content-encoding", ""))), keep
        except asyncio.IncompleteReadError as exc:
            if reused and not exc.partial and reader.at_eof():
                raise _Stale from exc
            raise HTTPFailure("the server closed the connection before its reply was complete") from exc
        except (ConnectionResetError, BrokenPipeError) as exc:
            if reused:
                raise _Stale from exc
            raise HTTPFailure(f"the connection was reset: {exc}") from exc
        except TimeoutError as exc:
            raise HTTPTimeout(f"no reply within {self.timeout:g} s") from exc
        except (asyncio.LimitOverrunError, ValueError, zlib.error) as exc:
            raise HTTPFailure(f"the reply is not valid HTTP/1.1: {exc}") from exc
        except OSError as exc:
            raise HTTPFailure(f"the connection failed: {exc}") from exc

    async def _exactly(self, reader: asyncio.StreamReader, size: int) -> bytes:
        if size < 0:
            raise ValueError(f"Content-Length {size}")
        parts, left = [], size
        while left:  # the timeout is on each wait, as httpx's read timeout
            async with asyncio.timeout(self.timeout):
                part = await reader.read(left)
            if not part:
                raise asyncio.IncompleteReadError(b"".join(parts), size)
            parts.append(part)
            left -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    async def _line(self, reader: asyncio.StreamReader) -> bytes:
        async with asyncio.timeout(self.timeout):
            return await reader.readuntil(b"\r\n")

    async def _chunked(self, reader: asyncio.StreamReader) -> bytes:
        parts = []
        while True:
            size = int((await self._line(reader)).split(b";", 1)[0].strip(), 16)
            if size == 0:
                while await self._line(reader) != b"\r\n":  # trailers, unused
                    pass
                return b"".join(parts)
            parts.append(await self._exactly(reader, size))
            if await self._exactly(reader, 2) != b"\r\n":
                raise ValueError("a chunk does not end with CRLF")

    async def _until_end(self, reader: asyncio.StreamReader) -> bytes:
        parts = []
        while True:
            async with asyncio.timeout(self.timeout):
                part = await reader.read(1 << 20)
            if not part:
                return b"".join(parts)
            parts.append(part)


def _head(head: bytes) -> tuple[int, str, list[tuple[str, str]]]:
    """Status, HTTP version and headers of a reply's head (its status line and header lines)."""
    lines = head[:-4].decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise ValueError(f"status line {lines[0][:80]!r}")
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"header line {line[:80]!r}")
        headers.append((name.strip().lower(), value.strip()))
    return int(code), version, headers


def _decoded(body: bytes, encoding: str) -> bytes:
    for coding in reversed([c.strip().lower() for c in encoding.split(",") if c.strip()]):
        if coding in ("gzip", "x-gzip"):
            body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
        elif coding == "deflate":
            try:
                body = zlib.decompress(body)
            except zlib.error:  # some servers send raw deflate without the zlib wrapper
                body = zlib.decompress(body, -zlib.MAX_WBITS)
        # identity, or a coding we did not ask for: the body as sent (httpx does the same)
    return body
