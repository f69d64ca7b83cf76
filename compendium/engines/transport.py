"""Posts JSON to an OpenAI-compatible endpoint over one reused httpx client; failures are the SDK's errors.

The `openai` SDK is imported only when a request fails (to raise its exception classes,
which the retry rules and the error messages are written against) or when its client is
asked for: importing it costs ~0.3-0.8 s of CPU, and posting through it ~0.2 ms a call more.
"""

from __future__ import annotations

import json
import ssl
from functools import cache
from types import ModuleType
from typing import Any

import httpx

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # built once, not per call


@cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle costs ~80 ms of CPU each time."""
    return httpx.create_ssl_context()  # httpx's default: the certifi bundle


@cache
def openai_sdk() -> ModuleType:
    import openai

    return openai


class Transport:
    """POST /<path> with a bearer key; the reply body as bytes, or an openai.APIError."""

    def __init__(self, *, base_url: str, api_key: str, timeout: float):
        self.base_url = base_url.rstrip("/") + "/"
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            # A plain-HTTP endpoint (a local server) has no certificate to check, and redirects
            # are not followed, so its client loads no CA bundle.
            verify=_tls() if self.base_url.startswith("https:") else False,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)),
            headers={
                "Authorization": f"Bearer {api_key}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
            # As the SDK's defaults: a compile's calls in flight never wait for a connection.
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=100),
        )

    async def post(self, path: str, body: dict[str, Any]) -> bytes:
        try:
            response = await self._http.post(path.lstrip("/"), content=_ENCODER.encode(body).encode("utf-8"))
        except httpx.TimeoutException as exc:
            raise openai_sdk().APITimeoutError(request=exc.request) from exc
        except httpx.TransportError as exc:
            raise openai_sdk().APIConnectionError(request=exc.request) from exc
        if response.status_code >= 400:
            raise status_error(response)
        return response.content

    async def close(self) -> None:
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
