"""Posts JSON to an OpenAI-compatible endpoint over reused connections; failures are the SDK's errors.

Requests go through aiohttp (its C parser spends ~0.15 ms of CPU a call; httpx, under the
`openai` SDK, ~0.8 ms and the SDK ~1.1 ms, measured on one machine), which honours the
environment's proxy settings. The `openai` SDK is imported only when a request fails (to raise
its exception classes, which the retry rules and the error messages are written against) or
when its client is asked for: importing it costs ~0.3-0.8 s of CPU.
"""

from __future__ import annotations

import asyncio
import json
import ssl
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

    def __init__(self, *, base_url: str, api_key: str, timeout: float):
        self.base_url = _without_credentials(base_url.rstrip("/") + "/")
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

    async def post(self, path: str, body: dict[str, Any]) -> bytes:
        import aiohttp

        content = _ENCODER.dumps_bytes(body)
        url = self.base_url + path.lstrip("/")
        try:
            async with self._session().post(url, data=content, proxy=self._proxy, proxy_auth=self._proxy_auth) as response:
                payload = await response.read()
                status = response.status
                headers = list(response.headers.items()) if status >= 400 else []  # for the error only
        except TimeoutError as exc:
            raise openai_sdk().APITimeoutError(request=_request(url)) from exc
        except aiohttp.ClientError as exc:
            raise openai_sdk().APIConnectionError(message=_failure(exc), request=_request(url)) from exc
        if status >= 400:
            import httpx

            raise status_error(httpx.Response(status, headers=headers, content=payload, request=_request(url)))
        return payload

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
