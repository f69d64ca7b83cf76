"""The engines' transport (aiohttp underneath), against a real socket server."""

from __future__ import annotations

import asyncio
import gzip
import json

import openai
import pytest

from compendium.engines.transport import Transport

OK = json.dumps({"ok": True}).encode()


class RawServer:
    """A TCP server on 127.0.0.1 answering each request with the next scripted bytes."""

    def __init__(self) -> None:
        self.replies: list[bytes | None] = []  # None: never answer; b"": hang up instead
        self.requests: list[bytes] = []
        self.connections = 0
        self.close_after_reply = False
        self.server: asyncio.Server | None = None

    async def start(self) -> RawServer:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
                )
                self.requests.append(head + await reader.readexactly(length))
                reply = self.replies.pop(0)
                if reply is None:
                    await asyncio.sleep(5)
                    return
                if not reply:
                    return
                writer.write(reply)
                await writer.drain()
                if self.close_after_reply:
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()


@pytest.fixture
async def raw_server():
    server = await RawServer().start()
    yield server
    await server.stop()


def reply(body: bytes, *headers: str, status: str = "200 OK", length: bool = True) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", *headers]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def post(url: str, wait: float = 5.0) -> bytes:
    transport = Transport(base_url=url, api_key="k", timeout=wait)
    try:
        return await transport.post("/chat/completions", {"model": "m"})
    finally:
        await transport.close()


async def test_a_request_is_one_post_with_its_length_key_and_path(raw_server):
    raw_server.replies = [reply(OK)]
    assert json.loads(await post(raw_server.url)) == {"ok": True}
    sent = raw_server.requests[0]
    assert sent.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"\r\nAuthorization: Bearer k\r\n" in sent and sent.endswith(b'\r\n\r\n{"model":"m"}')


async def test_a_chunked_gzipped_reply_is_read_whole_and_decoded(raw_server):
    packed = gzip.compress(b'{"text": "' + b"x" * 5000 + b'"}')
    chunks = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(packed[i : i + 700]), packed[i : i + 700]) for i in range(0, len(packed), 700))
    raw_server.replies = [
        reply(chunks + b"0\r\nX-Trailer: t\r\n\r\n", "Transfer-Encoding: chunked", "Content-Encoding: gzip", length=False)
    ]
    assert json.loads(await post(raw_server.url)) == {"text": "x" * 5000}


async def test_a_reply_without_a_length_ends_with_the_connection(raw_server):
    raw_server.replies = [reply(OK, "Connection: close", length=False)]
    raw_server.close_after_reply = True
    assert json.loads(await post(raw_server.url)) == {"ok": True}


async def test_connections_are_kept_and_one_the_server_closed_is_replaced(raw_server):
    transport = Transport(base_url=raw_server.url, api_key="k", timeout=5.0)
    try:
        raw_server.replies = [reply(OK), reply(OK), reply(OK)]
        await transport.post("chat/completions", {})
        await transport.post("chat/completions", {})
        assert raw_server.connections == 1
        raw_server.close_after_reply = True  # the server drops the next connection once idle
        await transport.post("chat/completions", {})
        raw_server.close_after_reply = False
        raw_server.replies = [reply(OK)]
        await asyncio.sleep(0.05)
        assert json.loads(await transport.post("chat/completions", {})) == {"ok": True}
        assert raw_server.connections == 2
        # It hangs up as the request arrives on a kept connection: a POST is not sent again on its
        # own (it may have been acted on, RFC 9112 9.3.1); the caller's retries decide, and the next
        # request goes out on a new connection.
        raw_server.replies = [b"", reply(OK)]
        with pytest.raises(openai.APIConnectionError):
            await transport.post("chat/completions", {})
        assert json.loads(await transport.post("chat/completions", {})) == {"ok": True}
        assert raw_server.connections == 3 and len(raw_server.requests) == 6
    finally:
        await transport.close()


async def test_a_new_connection_hung_up_on_is_a_connection_error(raw_server):
    raw_server.replies = [b""]
    with pytest.raises(openai.APIConnectionError, match="closed the connection"):
        await post(raw_server.url)


async def test_an_error_status_is_the_sdks_error_with_the_servers_headers(raw_server):
    raw_server.replies = [reply(b'{"error": {"message": "slow down"}}', "Retry-After: 7", status="429 Too Many Requests")]
    with pytest.raises(openai.RateLimitError) as caught:
        await post(raw_server.url)
    assert caught.value.response.headers["retry-after"] == "7" and "slow down" in caught.value.message


async def test_no_reply_in_time_is_a_timeout(raw_server):
    raw_server.replies = [None]
    with pytest.raises(openai.APITimeoutError):
        await asyncio.wait_for(post(raw_server.url, wait=0.2), 3)  # bounded: fails, never hangs


async def test_a_reply_that_is_not_http_is_a_connection_error(raw_server):
    raw_server.replies = [b"SSH-2.0-OpenSSH_9.2\r\n\r\n"]
    with pytest.raises(openai.APIConnectionError, match="not valid HTTP"):
        await post(raw_server.url)


async def test_a_refused_connection_is_a_connection_error(raw_server):
    url = raw_server.url
    await raw_server.stop()
    await asyncio.sleep(0.05)
    with pytest.raises(openai.APIConnectionError, match="cannot connect"):
        await post(url)


async def test_a_proxy_in_the_environment_is_honoured(raw_server, monkeypatch):
    # The raw server plays the proxy: a request sent through it names the whole target URL.
    monkeypatch.setenv("HTTP_PROXY", raw_server.url.removesuffix("/v1"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    raw_server.replies = [reply(OK)]
    assert json.loads(await post("http://model.invalid:8000/v1")) == {"ok": True}
    assert raw_server.requests[0].startswith(b"POST http://model.invalid:8000/v1/chat/completions HTTP/1.1")

