"""Posts JSON to an OpenAI-compatible endpoint over reused connections; failures are the SDK's errors.

Requests go through http1.py, a small HTTP/1.1 client (~0.05 ms of CPU a call, httpx ~0.5 ms);
an endpoint reached through a proxy, or with credentials in its URL, goes through httpx,
which honours the proxy settings of the environment and the URL's basic auth.
The `openai` SDK is imported only when a request fails (to raise its exception classes,
which the retry rules and the error messages are written against) or when its client is
asked for: importing it costs ~0.3-0.8 s of CPU, and posting through it ~0.2 ms a call more.
"""

from __future__ import annotations

import json
import os
import ssl
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from . import http1

if TYPE_CHECKING:
    import httpx

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # built once, not per call
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")  # the ones httpx reads (trust_env)


@cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle costs ~80 ms of CPU each time."""
    import httpx

    return httpx.create_ssl_context()  # httpx's default: the certifi bundle, SSL_CERT_FILE/DIR


@cache
def openai_sdk() -> ModuleType:
    import openai

    return openai


def _needs_httpx(base_url: str, environ: os._Environ[str] | dict[str, str]) -> bool:
    """A proxy in the environment, or user:password in the URL: what only httpx handles here."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username is not None:
        return True
    if parts.query or parts.fragment:
        return True
    return any(name.lower() in _PROXY_VARIABLES and value for name, value in environ.items())


class Transport:
    """POST /<path> with a bearer key; the reply body as bytes, or an openai.APIError."""

    def __init__(self, *, base_url: str, api_key: str, timeout: float):
        self.base_url = base_url.rstrip("/") + "/"
        self._headers = {
            "Authorization": f"Bearer {api_key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "compendium",
        }
        self._timeout = timeout
        self._http: httpx.AsyncClient | None = None
        self._pool: http1.Pool | None = None
        # The environment is read here, as httpx reads it when its client is built.
        if _needs_httpx(self.base_url, os.environ):
            self._http = self._httpx_client()
        else:
            tls = _tls() if self.base_url.startswith("https:") else None
            self._pool = http1.Pool(
                self.base_url, self._headers, timeout=timeout, connect_timeout=min(timeout, 5.0), tls=tls
            )

    def _httpx_client(self) -> httpx.AsyncClient:
        import httpx

        return httpx.AsyncClient(
            base_url=self.base_url,
            # A plain-HTTP endpoint (a local server) has no certificate to check, and redirects
            # are not followed, so its client loads no CA bundle.
            verify=_tls() if self.base_url.startswith("https:") else False,
            timeout=httpx.Timeout(self._timeout, connect=min(self._timeout, 5.0)),
            headers=self._headers,
            # As the SDK's defaults: a compile's calls in flight never wait for a connection.
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
        )

    async def post(self, path: str, body: dict[str, Any]) -> bytes:
        content = _ENCODER.encode(body).encode("utf-8")
        if self._pool is None:
            return await self._post_httpx(path, content)
        try:
            reply = await self._pool.post(path, content)
        except http1.HTTPTimeout as exc:
            raise openai_sdk().APITimeoutError(request=self._request(path)) from exc
        except http1.HTTPFailure as exc:
            raise openai_sdk().APIConnectionError(message=str(exc), request=self._request(path)) from exc
        if reply.status >= 400:
            import httpx

            raise status_error(
                httpx.Response(reply.status, headers=reply.headers, content=reply.body, request=self._request(path))
            )
        return reply.body

    async def _post_httpx(self, path: str, content: bytes) -> bytes:
        import httpx

        assert self._http is not None
        try:
            response = await self._http.post(path.lstrip("/"), content=content)
        except httpx.TimeoutException as exc:
            raise openai_sdk().APITimeoutError(request=exc.request) from exc
        except httpx.TransportError as exc:
            raise openai_sdk().APIConnectionError(request=exc.request) from exc
        if response.status_code >= 400:
            raise status_error(response)
        return response.content

    def _request(self, path: str) -> httpx.Request:
        """The request as the SDK's errors carry it (built only when one is raised)."""
        import httpx

        return httpx.Request("POST", self.base_url + path.lstrip("/"))

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
        if self._http is not None:
            await self._http.aclose()


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
