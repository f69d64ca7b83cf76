"""One reused client per OpenAI-compatible endpoint: retries, rate limits, token accounting.

Its checked text and JSON replies are checked_replies.py's; the reply schema is reply_schema.py's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from .. import json_text
from ..errors import EngineError, EngineUnavailable, ReplyError
from ..settings import LLMSettings
from .cache import ResponseCache
from .checked_replies import CheckedReplies, Completion, JsonCheck
from .endpoint_failures import (
    MAX_BACKOFF,
    RETRY_AFTER_CAP,
    jitter,
    retry_after,
    retryable,
    sdk_error,
)
from .reply_schema import EMPTY_REPLY, CutOff, strict_schema
from .throttle import CallLimits
from .transport import Transport, openai_sdk
from .usage import UsageMeter

if TYPE_CHECKING:
    import openai

# Imported from here by the LLM engine, MAP and the CLI.
__all__ = [
    "EMPTY_REPLY", "CutOff", "JsonCheck", "OpenAIClient", "count_tokens", "public_url", "sdk_error",
    "strict_schema",
]

T = TypeVar("T")

MESSAGE_OVERHEAD = 4  # tokens a chat template adds per message, reserved on top of the text
DEFAULT_MAX_REPLY_TOKENS = 8192


@cache
def _token_counter() -> Callable[[str], int]:
    try:  # compendium.tokens is the shared tokenizer when it is present
        from ..tokens import count_tokens  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return lambda text: len(text) // 4 + 1
    return count_tokens  # type: ignore[no-any-return,unused-ignore]


def count_tokens(text: str) -> int:
    return _token_counter()(text)


def public_url(url: str) -> str:
    """The URL without user:password, fit for messages and logs."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class OpenAIClient(CheckedReplies):
    """Talks to one OpenAI-compatible endpoint for one model, through one reused HTTP client.

    Requests are posted as JSON (transport.py) and replies read as plain JSON; failures raise
    the SDK's own exception classes, and `sdk` is an SDK client for anything else. Tenacity retries 429/5xx/timeouts/connection errors with
    exponential backoff and full jitter (honouring Retry-After up to a cap), and every
    attempt passes the concurrency and rate limits again.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        usage: UsageMeter,
        api_key: str | None = None,
        cache: ResponseCache | None = None,
        timeout: float = 120.0,
        max_retries: int = 5,
        retry_wait: float = 1.0,
        max_concurrency: int = 8,
        requests_per_minute: int | None = None,
        tokens_per_minute: int | None = None,
        max_reply_tokens: int = DEFAULT_MAX_REPLY_TOKENS,
        role: str = "LLM",
        response_format: str = "auto",
        context_tokens: int | None = None,
        hedge: bool = True,
    ):
        self.base_url = base_url
        self.model = model
        self.usage = usage
        self.cache = cache
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.retry_wait = retry_wait
        self.max_reply_tokens = max_reply_tokens  # for calls that set no max_tokens of their own
        self.role = role  # "LLM" or "EMBEDDING": names the endpoint and its variables in errors
        self.limits = CallLimits(
            max_concurrency=max_concurrency,
            requests_per_minute=requests_per_minute,
            tokens_per_minute=tokens_per_minute,
        )
        # What the endpoint supports: json_schema (structured outputs), json_object (a JSON
        # grammar only; the schema travels in the prompt) or plain (neither: the schema travels
        # in the prompt and the reply is read as JSON). auto: json_schema until the server
        # rejects it with a 400, then json_object for good.
        self.response_format = response_format
        self.json_schema_supported = response_format in ("auto", "json_schema")
        self.context_tokens = context_tokens  # the model's context window, when known
        self.reply_tokens: dict[str, list[int]] = {}  # completion tokens of accepted replies, by schema
        self.retries = 0  # attempts repeated after a transient failure, over the client's life
        self.repairs = 0  # replies asked again because they failed their schema or check
        self._api_key = api_key or ""
        # Local servers take any key; the SDK insists on one.
        self._transport = Transport(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                                    hedge=hedge and max_concurrency > 1)
        self._sdk: openai.AsyncOpenAI | None = None

    @classmethod
    def for_llm(
        cls, settings: LLMSettings, *, model: str, usage: UsageMeter, cache: ResponseCache | None = None
    ) -> OpenAIClient:
        if not settings.base_url:
            raise EngineUnavailable("no LLM endpoint configured", hint="set COMPENDIUM_LLM_BASE_URL")
        return cls(
            base_url=settings.base_url,
            api_key=settings.api_key,
            model=model,
            usage=usage,
            cache=cache,
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            retry_wait=settings.retry_wait,
            max_concurrency=settings.max_concurrency,
            requests_per_minute=settings.requests_per_minute,
            tokens_per_minute=settings.tokens_per_minute,
            max_reply_tokens=settings.max_reply_tokens,
            response_format=getattr(settings, "response_format", "auto"),
            context_tokens=getattr(settings, "context_tokens", None),
            hedge=getattr(settings, "hedge", True),
        )

    async def detect_context(self) -> int | None:
        """The model's context window where /v1/models states it (vLLM's max_model_len, LM
        Studio's context_length); else the configured value (llm.context_tokens). Asked once; a server that does not say costs one small GET."""
        if self.context_tokens is not None or getattr(self, "_detected", False):
            return self.context_tokens
        self._detected = True
        try:
            raw = await self._transport.get("/models")
            data = json_text.loads(raw)
        except Exception:  # detection is a courtesy: any failure means "not stated"
            return None
        self.context_tokens = _stated_context(data, self.model)
        return self.context_tokens

    @property
    def endpoint(self) -> str:
        return public_url(self.base_url)

    @property
    def sdk(self) -> openai.AsyncOpenAI:
        """An SDK client for the same endpoint, built when first asked for (its import is costly)."""
        if self._sdk is None:
            self._sdk = openai_sdk().AsyncOpenAI(
                base_url=self.base_url, api_key=self._api_key or "not-needed", timeout=self.timeout, max_retries=0
            )
        return self._sdk

    async def post(self, path: str, body: dict[str, Any], *, may_hedge: Callable[[], bool] | None = None) -> bytes:
        """POST a JSON body to the endpoint; the reply body. Failures raise the SDK's errors.
        `may_hedge` is asked before the call is sent again beside a stalled one."""
        return await self._transport.post(path, body, may_hedge=may_hedge)

    async def close(self) -> None:
        await self._transport.close()
        if self._sdk is not None:
            await self._sdk.close()

    # ---- transport -------------------------------------------------------------------------

    def _wait(self, state: RetryCallState) -> float:
        self.retries += 1  # tenacity asks for a wait only when it is about to retry
        after = retry_after(state.outcome.exception() if state.outcome else None)
        if after is not None:
            return min(after, RETRY_AFTER_CAP)
        # Full jitter: uniform in [0, min(cap, base * 2^(n-1))], so retrying clients spread out.
        ceiling = min(MAX_BACKOFF, self.retry_wait * 2 ** (state.attempt_number - 1))
        return jitter(ceiling)

    async def call(self, send: Callable[[], Awaitable[T]], *, estimated_tokens: int) -> T:
        """Run one request with retries under the limits; raises openai's own errors."""
        retrying = AsyncRetrying(
            retry=retry_if_exception(retryable),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self._wait,
            reraise=True,
        )
        return await retrying(self._attempt, send, estimated_tokens)

    async def _attempt(self, send: Callable[[], Awaitable[T]], estimated_tokens: int) -> T:
        async with self.limits.slot(estimated_tokens):
            return await send()

    async def request(self, send: Callable[[], Awaitable[T]], *, estimated_tokens: int) -> T:
        """`call`, with every failure translated into compendium.errors."""
        try:
            return await self.call(send, estimated_tokens=estimated_tokens)
        except Exception as exc:
            if not sdk_error(exc):
                raise
            raise self.translate(exc) from exc

    def translate(self, exc: openai.OpenAIError) -> EngineError:
        openai = openai_sdk()
        role = "LLM" if self.role == "LLM" else "embedding"
        var = "COMPENDIUM_LLM" if self.role == "LLM" else "COMPENDIUM_EMBED"  # as the settings read them
        attempts = self.max_retries + 1
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return EngineUnavailable(f"the {role} endpoint rejected the API key", hint=f"check {var}_API_KEY")
        if isinstance(exc, openai.NotFoundError):
            return EngineUnavailable(
                f"the {role} endpoint at {self.endpoint} has no model {self.model!r} (HTTP 404)",
                hint=f"check {var}_MODEL (or the template's models) and that the URL ends in /v1",
            )
        if isinstance(exc, openai.APITimeoutError):
            return EngineUnavailable(
                f"the {role} endpoint at {self.endpoint} did not answer within {self.timeout:g} s "
                f"({attempts} attempts)",
                hint=f"check {var}_BASE_URL or raise the timeout",
            )
        if isinstance(exc, openai.APIConnectionError):
            return EngineUnavailable(
                f"cannot reach the {role} endpoint at {self.endpoint} ({attempts} attempts)",
                hint=f"check {var}_BASE_URL",
            )
        if isinstance(exc, openai.APIStatusError):
            return EngineError(
                f"the {role} endpoint at {self.endpoint} answered HTTP {exc.status_code}"
                f"{' after ' + str(attempts) + ' attempts' if retryable(exc) else ''}: "
                f"{self._scrub(exc.message)}"
            )
        return EngineError(f"the {role} endpoint at {self.endpoint} failed: {self._scrub(str(exc))}")

    def default_reply_tokens(self) -> int:
        """The reply bound of a call that sets none: llm.max_reply_tokens, and on a model of
        known context at most a quarter of it (a looping reply stops there, not at the cap)."""
        if self.context_tokens:
            return max(256, min(self.max_reply_tokens, self.context_tokens // 4))
        return self.max_reply_tokens

    def counts_ahead(self) -> bool:
        """Must a call's tokens be estimated before it is sent? Only to check a budget or fill a
        tokens-per-minute bucket; otherwise the server's usage says what the call cost (counting
        a compile's prompts was ~3% of its CPU)."""
        return self.usage.budget_tokens is not None or self.limits.tokens is not None

    def _scrub(self, text: str) -> str:
        """Servers sometimes echo the key back; it never reaches our messages."""
        if self._api_key and len(self._api_key) >= 4:
            text = text.replace(self._api_key, "***")
        return text[:500]

    # ---- chat ------------------------------------------------------------------------------

    async def _chat(
        self,
        messages: list[dict[str, str]],
        *,
        temperature: float,
        response_format: dict[str, Any] | None,
        max_tokens: int | None = None,
    ) -> Completion:
        """One chat completion (retried); usage is recorded; returns the reply text."""
        estimated = sum(count_tokens(m["content"]) for m in messages) if self.counts_ahead() else 0
        # Every call states its reply bound: the budget reserves it, so a budget is a ceiling.
        reply_bound = max_tokens if max_tokens is not None else self.default_reply_tokens()
        body: dict[str, Any] = {
            "model": self.model, "messages": messages, "temperature": temperature, "max_tokens": reply_bound,
        }
        if response_format is not None:
            body["response_format"] = response_format

        with self.usage.reserve(estimated + MESSAGE_OVERHEAD * len(messages), reply_bound) as hedges:

            async def send() -> Any:
                # The body is already in its wire form: posting it skips the SDK's typed transform,
                # which walks every message and the whole JSON schema on each call (ms of CPU).
                # Raw bytes, read as plain JSON below: building the SDK's typed ChatCompletion for
                # each reply cost ~1 ms of CPU per call, and we use three fields of it.
                return await self.post("/chat/completions", body, may_hedge=hedges)

            raw = await self.call(send, estimated_tokens=estimated)
            content, used, finish = self._read_completion(raw)
            prompt_tokens = used.get("prompt_tokens") if used else None
            completion_tokens = used.get("completion_tokens") if used else None
            if not isinstance(prompt_tokens, int):  # a server that does not say: our estimate
                prompt_tokens = estimated or sum(count_tokens(m["content"]) for m in messages)
            if not isinstance(completion_tokens, int):
                completion_tokens = count_tokens(content)
            self.usage.record_llm(prompt_tokens, completion_tokens, hedged=hedges.sent)  # settles the reservation
        self.limits.settle(estimated, prompt_tokens + completion_tokens)
        return Completion(content, finish, completion_tokens)

    def _read_completion(self, raw: bytes) -> tuple[str, dict[str, Any] | None, str | None]:
        """The first choice's text, the usage block and the finish reason of a completion body."""
        try:
            data = json_text.loads(raw)
        except ValueError as exc:
            raise ReplyError(f"the LLM endpoint at {self.endpoint} answered with a body that is not JSON") from exc
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices, list):
            raise ReplyError(f"the LLM endpoint at {self.endpoint} returned no choices")
        first = choices[0] if isinstance(choices[0], dict) else {}
        message = first.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        usage = data.get("usage")
        finish = first.get("finish_reason")
        return (
            content if isinstance(content, str) else "",
            usage if isinstance(usage, dict) else None,
            finish if isinstance(finish, str) else None,
        )

def _stated_context(data: Any, model: str) -> int | None:
    """The context window a /v1/models answer states for `model` (or its only model)."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    mine = [e for e in entries if isinstance(e, dict) and e.get("id") == model] or (
        entries if len(entries) == 1 else [])
    for entry in mine:
        meta = entry.get("meta") if isinstance(entry.get("meta"), dict) else {}
        # Not llama.cpp's meta.n_ctx_train: the context the model was trained with, not the
        # one the server was started with (-c), which /v1/models does not state.
        for value in (entry.get("max_model_len"), entry.get("context_length"), entry.get("n_ctx"),
                      meta.get("n_ctx")):
            if isinstance(value, int) and value > 0:
                return value
    return None


