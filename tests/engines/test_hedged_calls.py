"""A stalled call costs seconds, not its timeout: past a multiple of its path's median latency
it is asked once more beside the first, and the first answer wins; a call's deadline follows
the reply it asks for."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from pydantic import BaseModel

from compendium.engines import transport as transport_module
from compendium.engines.openai_client import OpenAIClient
from compendium.engines.transport import Transport, deadline
from compendium.engines.usage import UsageMeter

OK = json.dumps({"ok": True}).encode()


def http_answer(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


class StallingServer:
    """Answers every request at once, except those numbered in `stall`, which wait until released."""

    def __init__(self, stall: set[int], answer: bytes = OK) -> None:
        self.stall, self.requests, self.released = stall, 0, asyncio.Event()
        self.answer = http_answer(answer)
        self.stalled_open = 0  # stalled requests still waiting: the caller did not wait for them
        self.stalled = asyncio.Condition()
        self.server: asyncio.Server | None = None

    async def start(self) -> StallingServer:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/v1"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length"))
                await reader.readexactly(length)
                self.requests += 1
                if self.requests in self.stall:
                    async with self.stalled:
                        self.stalled_open += 1
                        self.stalled.notify_all()
                    await self.released.wait()
                    self.stalled_open -= 1
                    return
                writer.write(self.answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()

    async def stop(self) -> None:
        self.released.set()
        assert self.server is not None
        self.server.close()


async def test_a_stalled_call_is_answered_by_its_hedge_without_waiting_for_the_stall():
    server = await StallingServer(stall={4, 9}).start()
    client = Transport(base_url=server.url, api_key="k", timeout=600.0)
    try:
        for _ in range(3):  # what a call of this path usually takes
            assert await client.post("/chat/completions", {"max_tokens": 10}) == OK
        assert await client.post("/chat/completions", {"max_tokens": 10}) == OK  # request 4 stalls; 5 answers
        assert server.requests == 5 and server.stalled_open == 1  # answered while the stall still waits
        for _ in range(3):
            assert await client.post("/chat/completions", {"max_tokens": 10}) == OK
        assert await client.post("/chat/completions", {"max_tokens": 10}) == OK  # request 9 stalls; 10 answers
        assert server.requests == 10 and server.stalled_open == 2
    finally:
        await client.close()
        await server.stop()


async def test_a_call_stalled_before_its_path_is_known_is_hedged_once_its_siblings_answer(monkeypatch):
    # A cold limit longer than the client's deadline: a call that waited it out would time out.
    monkeypatch.setattr(transport_module, "HEDGE_COLD", 3600.0)
    server = await StallingServer(stall={1}).start()
    client = Transport(base_url=server.url, api_key="k", timeout=30.0)
    try:
        first = asyncio.ensure_future(client.post("/chat/completions", {"max_tokens": 10}))
        async with server.stalled:
            await server.stalled.wait_for(lambda: server.stalled_open == 1)  # request 1 stalls
        for _ in range(3):  # requests 2-4: what a call of this path usually takes
            assert await client.post("/chat/completions", {"max_tokens": 10}) == OK
        assert await first == OK  # request 5, its hedge
        assert server.requests == 5 and server.stalled_open == 1  # answered while the stall still waits
        # The latency kept is the hedge's own, not the stall's wait before it.
        stats = client._latencies
        assert stats.kept["/chat/completions"][-1] < stats.hedge_after("/chat/completions")
    finally:
        await client.close()
        await server.stop()


def test_a_deadline_follows_the_reply_asked_for():
    assert deadline({"max_tokens": 100}, 600.0) == pytest.approx(
        transport_module.FIRST_BYTE_SECONDS + 100 / transport_module.SLOWEST_TOKENS_PER_SECOND)
    assert deadline({"max_tokens": 100_000}, 120.0) == 120.0
    assert deadline({}, 120.0) == 120.0


def test_at_most_a_share_of_the_calls_is_hedged():
    latencies = transport_module._Latencies()
    hedges = 0
    for _ in range(100):
        latencies.calls += 1
        if latencies.may_hedge():  # every call stalls
            latencies.hedged += 1
            hedges += 1
    assert hedges == int(transport_module.HEDGE_SHARE * 100) + 1


async def test_an_endpoint_asked_one_call_at_a_time_is_never_asked_twice(monkeypatch):
    # A local server computes one request at a time: a hedge would queue behind the stalled
    # call and be computed in full. The call waits for its own answer instead.
    monkeypatch.setattr(transport_module, "HEDGE_FACTOR", 0.0)  # a hedging client would hedge at once
    monkeypatch.setattr(transport_module, "HEDGE_FLOOR", 0.0)
    server = await StallingServer(stall={4}).start()
    client = Transport(base_url=server.url, api_key="k", timeout=600.0, hedge=False)
    try:
        for _ in range(3):
            assert await client.post("/chat/completions", {"max_tokens": 10}) == OK
        stalled = asyncio.ensure_future(client.post("/chat/completions", {"max_tokens": 10}))
        async with server.stalled:
            await server.stalled.wait_for(lambda: server.stalled_open == 1)
        server.released.set()  # the stall ends without an answer: the server closes it
        with pytest.raises(openai.APIConnectionError):
            await stalled  # no hedge answered it: the server closed the call
        assert server.requests == 4 and client._latencies.hedged == 0
    finally:
        await client.close()
        await server.stop()


class City(BaseModel):
    city: str


CITY = json.dumps({
    "choices": [{"message": {"role": "assistant", "content": json.dumps({"city": "Armonk"})}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 40, "completion_tokens": 6},
}).encode()


async def test_a_hedge_is_billed_and_reported_as_the_second_request_it_is(monkeypatch):
    monkeypatch.setattr(transport_module, "HEDGE_FACTOR", 0.0)
    monkeypatch.setattr(transport_module, "HEDGE_FLOOR", 0.0)
    server = await StallingServer(stall={4}, answer=CITY).start()
    usage = UsageMeter()
    client = OpenAIClient(base_url=server.url, model="m", usage=usage, timeout=600.0, max_retries=0)
    try:
        for _ in range(4):  # three to learn the path's latency; the fourth stalls and is hedged at once
            reply = await client.complete_json(system="s", prompt="Where is IBM based?", reply_type=City,
                                               schema_name="city", temperature=0.0)
            assert reply.city == "Armonk"
        assert server.requests == 5 and server.stalled_open == 1
    finally:
        await client.close()
        await server.stop()
    used = usage.get("other")
    # The provider bills both requests of the fourth call: the dropped one counts as its twin.
    assert (used.llm_calls, used.hedged_calls) == (4, 1)
    assert (used.prompt_tokens, used.completion_tokens) == (5 * 40, 5 * 6)
    assert usage.in_flight == 0


async def test_a_hedge_the_token_budget_cannot_hold_is_not_sent(monkeypatch):
    monkeypatch.setattr(transport_module, "HEDGE_FACTOR", 0.0)
    monkeypatch.setattr(transport_module, "HEDGE_FLOOR", 0.0)
    server = await StallingServer(stall={4}).start()
    client = Transport(base_url=server.url, api_key="k", timeout=600.0)
    try:
        for _ in range(3):
            assert await client.post("/chat/completions", {"max_tokens": 10}) == OK
        room_for_two = UsageMeter(budget_tokens=200)
        with room_for_two.reserve(100) as hedges:  # request 4 stalls, its hedge (5) answers
            assert await client.post("/chat/completions", {"max_tokens": 10}, may_hedge=hedges) == OK
            assert hedges.sent == 1 and room_for_two.in_flight == 200
        assert room_for_two.in_flight == 0
        server.stall.add(6)
        room_for_one = UsageMeter(budget_tokens=150)
        with room_for_one.reserve(100) as hedges:
            stalled = asyncio.ensure_future(client.post("/chat/completions", {"max_tokens": 10}, may_hedge=hedges))
            async with server.stalled:
                await server.stalled.wait_for(lambda: server.stalled_open == 2)  # request 6 stalls
            server.released.set()  # it ends unanswered: nothing else was sent to answer it
            with pytest.raises(openai.APIConnectionError):
                await stalled
        assert hedges.sent == 0 and server.requests == 6
    finally:
        await client.close()
        await server.stop()
