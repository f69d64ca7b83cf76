"""Posts JSON to an OpenAI-compatible endpoint over reused connections; failures are the SDK's errors.

Requests go through aiohttp (its C parser spends ~0.15 ms of CPU a call; httpx, under the
`openai` SDK, ~0.8 ms and the SDK ~1.1 ms, measured on one machine), which honours the
environment's proxy settings. The `openai` SDK is imported only when a request fails (to raise
its exception classes, which the retry rules and the error messages are written against) or
when its client is asked for: importing it costs ~0.3-0.8 s of CPU.

A stalled call costs seconds, not the whole timeout: a call's deadline follows the reply it
asks for (max_tokens), and a call still unanswered past HEDGE_FACTOR times the median latency
of its path is sent once more beside the first (a hedge; at most HEDGE_SHARE of the calls):
the first answer wins and the other is dropped. Until a path's median is known (its first
calls), a waiting call looks again as its siblings answer, rather than waiting out a fixed
cold limit; a latency is the answering request's own, so stalls do not raise the median.
Calls are idempotent: the same request asked twice is the same work, cached by its
fingerprint above. A client asking one call at a time (llm.max_concurrency: 1, a local server)
neither hedges nor shortens a call's deadline: there a second request only waits behind the
first and is computed in full. A hedge is a request the provider bills: the caller may refuse
it (`may_hedge`, e.g. when the token budget cannot hold it) and counts the ones sent.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from .. import json_text

if TYPE_CHECKING:
    import aiohttp
    import httpx

_ENCODER = json_text.JsonText()
MAX_CONNECTIONS = 1000  # as the SDK's default: a compile's calls in flight never wait for one
# Hedging (see the module's docstring). 3x the median is where a call is well past its usual
# time (a real endpoint's median is seconds: that rule decides there). The floor keeps a fast
# local server from being hedged by scheduling noise; measured with benchmarks/stalls.py on 2
# loaded cores (load 6-7), the sample corpus through the scripted server (median call 17 ms,
# slowest 114 ms): floors of 0.1, 0.25, 0.5 and 1 s hedged no clean call (290 requests clean
# each time) and cost x1.27-1.44, x1.28-1.42, x1.41-2.53 and x2.42-3.64 the clean wall time
# with 20% of calls stalling 30 s; 0.25 s keeps a margin over the slowest clean call under
# more load. At most three calls in ten are hedged, so an endpoint slow for everyone is not
# sent twice the load.
HEDGE_FACTOR = 3.0
HEDGE_FLOOR = 0.25  # seconds
HEDGE_SHARE = 0.3
HEDGE_SAMPLES = 3  # latencies of a path known before its median is used
HEDGE_COLD = 10.0  # seconds: before that, a call is hedged past this (a local model's first call may load it)
HEDGE_RECHECK = 0.25  # seconds: while its path is cold, a waiting call looks again this often (others may answer)
LATENCIES_KEPT = 64  # per path, the most recent
# A call's deadline: the time to a reply's first byte plus its tokens at the slowest decoding
# speed planned for (a small model on a CPU), within the client's timeout.
FIRST_BYTE_SECONDS = 30.0
SLOWEST_TOKENS_PER_SECOND = 5.0


class _Latencies:
    """Recent latencies of each path, and how many calls were hedged."""

    def __init__(self) -> None:
        self.kept: dict[str, list[float]] = {}
        self.calls = 0
        self.hedged = 0

    def add(self, path: str, seconds: float) -> None:
        kept = self.kept.setdefault(path, [])
        kept.append(seconds)
        del kept[:-LATENCIES_KEPT]

    def cold(self, path: str) -> bool:
        """Too few latencies of `path` are known yet for their median to say when to hedge."""
        return len(self.kept.get(path, ())) < HEDGE_SAMPLES

    def hedge_after(self, path: str) -> float:
        """Seconds after which a call of `path` is hedged."""
        kept = self.kept.get(path, [])
        if len(kept) < HEDGE_SAMPLES:
            return HEDGE_COLD
        ordered = sorted(kept)
        return max(HEDGE_FLOOR, HEDGE_FACTOR * ordered[len(ordered) // 2])

    def may_hedge(self) -> bool:
        return self.hedged + 1 <= HEDGE_SHARE * self.calls + 1


def deadline(body: dict[str, Any], timeout: float) -> float:
    """Seconds a call asking for `body` may take: what its reply's size needs, at most `timeout`."""
    tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    if not isinstance(tokens, int) or tokens <= 0:
        return timeout
    return min(timeout, FIRST_BYTE_SECONDS + tokens / SLOWEST_TOKENS_PER_SECOND)


@cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle costs ~80 ms of CPU each time."""
    import httpx

    return httpx.create_ssl_context()  # the certifi bundle, SSL_CERT_FILE/DIR, as the SDK checks


@cache
def openai_sdk() -> ModuleType:
    import openai

    return openai


def _env_proxy(url: str) -> tuple[str | None, Any]:
    """The proxy HTTP(S)_PROXY/ALL_PROXY name for this URL (None when NO_PROXY exempts it or none
    is set). Read once per endpoint: asking aiohttp to look per request (trust_env) costs two
    thread hops a call, and its netrc lookup clashes with the bearer key's header."""
    from aiohttp.helpers import get_env_proxy_for_url
    from yarl import URL

    try:
        proxy, auth = get_env_proxy_for_url(URL(url))
    except LookupError:
        return None, None
    return str(proxy), auth


def _without_credentials(url: str) -> str:
    """The URL without user:password (the key goes in the Authorization header; never in errors)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    return urlunsplit(parts._replace(netloc=f"{netloc}:{parts.port}" if parts.port else netloc))


class Transport:
    """POST /<path> with a bearer key; the reply body as bytes, or an openai.APIError."""

    def __init__(self, *, base_url: str, api_key: str, timeout: float, hedge: bool = True):
        self.base_url = _without_credentials(base_url.rstrip("/") + "/")
        # An endpoint asked one call at a time (a local server computing one request at a
        # time) gains nothing from a hedge: it queues behind the stalled call, which the server
        # still computes, and costs the whole call again. Such a call waits out its timeout.
        self._hedge = hedge
        self._headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "compendium",
        }
        self._timeout = timeout
        self._proxy, self._proxy_auth = _env_proxy(self.base_url)  # read once, not per call
        # A session belongs to the event loop it was made on: one per loop that posts.
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
        self._latencies = _Latencies()

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            import aiohttp

            self._forget_other_loops(loop)
            session = self._sessions[loop] = aiohttp.ClientSession(
                headers=self._headers,
                cookie_jar=aiohttp.DummyCookieJar(),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=min(self._timeout, 5.0), sock_read=self._timeout),
                connector=aiohttp.TCPConnector(
                    limit=MAX_CONNECTIONS, ssl=_tls() if self.base_url.startswith("https:") else False
                ),
            )
        return session

    def _forget_other_loops(self, current: asyncio.AbstractEventLoop) -> None:
        """Sessions of loops that have ended are closed without their loop (nothing is left to wait for)."""
        for loop in [lp for lp in self._sessions if lp is not current and lp.is_closed()]:
            connector = self._sessions.pop(loop).connector
            if connector is not None:
                connector._close()  # its loop is closed: the public close() would schedule on it

    async def post(self, path: str, body: dict[str, Any], *, may_hedge: Callable[[], bool] | None = None) -> bytes:
        """The reply body. `may_hedge` is asked before a hedge is sent; False keeps the call alone."""
        import aiohttp

        content = _ENCODER.dumps_bytes(body)
        url = self.base_url + path.lstrip("/")
        try:
            if self._hedge:
                status, payload, headers = await asyncio.wait_for(
                    self._hedged(path, url, content, may_hedge), deadline(body, self._timeout))
            else:
                status, payload, headers = await asyncio.wait_for(self._post_once(url, content), self._timeout)
        except TimeoutError as exc:
            raise openai_sdk().APITimeoutError(request=_request(url)) from exc
        except aiohttp.ClientError as exc:
            raise openai_sdk().APIConnectionError(message=_failure(exc), request=_request(url)) from exc
        if status >= 400:
            import httpx

            raise status_error(httpx.Response(status, headers=headers, content=payload, request=_request(url)))
        return payload

    async def _hedged(self, path: str, url: str, content: bytes,
                      may_hedge: Callable[[], bool] | None) -> tuple[int, bytes, list[tuple[str, str]]]:
        """The first answer of the call, or of its hedge when it stalls (see the module's docstring)."""
        stats = self._latencies
        stats.calls += 1
        loop = asyncio.get_running_loop()
        started = {asyncio.ensure_future(self._post_once(url, content)): loop.time()}
        tasks = set(started)
        try:
            while True:  # until answered, or hedged: the hedge time is asked again while the path is cold
                wait = stats.hedge_after(path) - (loop.time() - min(started.values()))
                if wait <= 0:
                    if stats.may_hedge() and (may_hedge is None or may_hedge()):
                        stats.hedged += 1
                        hedge = asyncio.ensure_future(self._post_once(url, content))
                        started[hedge] = loop.time()
                        tasks.add(hedge)
                    break
                done, _ = await asyncio.wait(tasks, timeout=min(wait, HEDGE_RECHECK) if stats.cold(path) else wait)
                if done:
                    break
            while True:
                done, tasks = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                failed = [t for t in done if t.exception() is not None]
                answered = [t for t in done if t.exception() is None]
                if answered:
                    first = answered[0]
                    status, payload, headers = first.result()
                    if status < 400:  # the answering request's own time: a stall's wait is not a latency
                        stats.add(path, loop.time() - started[first])
                    return status, payload, headers
                if not tasks:  # every try failed: the first failure is the call's
                    raise failed[0].exception()  # type: ignore[misc]
        finally:
            for task in tasks:
                task.cancel()
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _post_once(self, url: str, content: bytes) -> tuple[int, bytes, list[tuple[str, str]]]:
        async with self._session().post(url, data=content, proxy=self._proxy, proxy_auth=self._proxy_auth) as response:
            payload = await response.read()
            status = response.status
            return status, payload, list(response.headers.items()) if status >= 400 else []  # for the error only

    async def get(self, path: str) -> bytes:
        """GET /<path> (e.g. /models); the reply body, or an openai.APIError."""
        import aiohttp

        url = self.base_url + path.lstrip("/")
        try:
            async with self._session().get(url, proxy=self._proxy, proxy_auth=self._proxy_auth) as response:
                payload = await response.read()
                status = response.status
        except TimeoutError as exc:
            raise openai_sdk().APITimeoutError(request=_request(url)) from exc
        except aiohttp.ClientError as exc:
            raise openai_sdk().APIConnectionError(message=_failure(exc), request=_request(url)) from exc
        if status >= 400:
            import httpx

            raise status_error(httpx.Response(status, content=payload, request=_request(url)))
        return payload

    async def close(self) -> None:
        current = asyncio.get_running_loop()
        for loop, session in list(self._sessions.items()):
            if loop is current:
                await session.close()
            elif loop.is_running():
                loop.call_soon_threadsafe(lambda s=session: asyncio.ensure_future(s.close()))
        self._forget_other_loops(current)
        self._sessions.clear()


def _failure(exc: Exception) -> str:
    """What went wrong, in the words of the request rather than of aiohttp's classes."""
    import aiohttp

    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection before it replied"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"cannot connect to {exc.host}:{exc.port}: {exc.os_error or exc}"
    if isinstance(exc, aiohttp.ClientResponseError | aiohttp.ClientPayloadError):
        return f"the reply is not valid HTTP: {exc}"
    return f"{type(exc).__name__}: {exc}"


def _request(url: str) -> httpx.Request:
    """The request as the SDK's errors carry it (built only when one is raised)."""
    import httpx

    return httpx.Request("POST", url)


def status_error(response: httpx.Response) -> Exception:
    """The SDK's exception for an error status, with the message and body it would give."""
    errors = openai_sdk()
    text = response.text.strip()
    body: Any = text
    try:
        body = json.loads(text)
        message = f"Error code: {response.status_code} - {body}"
    except ValueError:
        message = text or f"Error code: {response.status_code}"
    data = body.get("error", body) if isinstance(body, dict) else body
    kinds = {
        400: errors.BadRequestError,
        401: errors.AuthenticationError,
        403: errors.PermissionDeniedError,
        404: errors.NotFoundError,
        409: errors.ConflictError,
        422: errors.UnprocessableEntityError,
        429: errors.RateLimitError,
    }
    kind = kinds.get(response.status_code)
    if kind is None:
        kind = errors.InternalServerError if response.status_code >= 500 else errors.APIStatusError
    return kind(message, response=response, body=data)  # type: ignore[arg-type]
