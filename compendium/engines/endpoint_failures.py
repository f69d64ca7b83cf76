"""How an OpenAI-compatible endpoint's failures are read: which are retried, after how long,
and which say the prompt is longer than the model's context."""

from __future__ import annotations

import random

from .transport import openai_sdk

RETRY_AFTER_CAP = 60.0  # seconds; a server asking for longer is treated as failing
MAX_BACKOFF = 30.0


def sdk_error(exc: BaseException, kind: str = "OpenAIError") -> bool:
    """Is `exc` the SDK's error `kind`? Asked without importing the SDK for anything else."""
    return type(exc).__module__.startswith("openai") and isinstance(exc, getattr(openai_sdk(), kind))


def retryable(exc: BaseException) -> bool:
    if not sdk_error(exc):
        return False
    openai = openai_sdk()
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def retry_after(exc: BaseException | None) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = response.headers.get(header)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None


def over_context(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "context_length_exceeded" in text or "maximum context length" in text or "context length" in text


def jitter(ceiling: float) -> float:
    return random.uniform(0.0, ceiling)  # spreading retries out needs no secure randomness
