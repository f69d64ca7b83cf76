"""One reused client per OpenAI-compatible endpoint: retries, rate limits, JSON replies, cache."""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Awaitable, Callable
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from .. import json_text
from ..errors import EngineError, EngineUnavailable, ReplyError
from ..fingerprint import fingerprint
from ..settings import LLMSettings
from .cache import ResponseCache
from .throttle import CallLimits
from .transport import Transport, openai_sdk
from .usage import UsageMeter

if TYPE_CHECKING:
    import openai

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

CACHE_NAMESPACE = "llm"
RETRY_AFTER_CAP = 60.0  # seconds; a server asking for longer is treated as failing
MAX_BACKOFF = 30.0
_ERROR_TEXT_LIMIT = 1500  # of a validation error sent back in the repair prompt
JSON_REPAIRS = 1  # a JSON reply that fails its schema or its check is asked again once
TEXT_REPAIRS = 2  # a page that cannot be published is asked again at most twice

# A reply's check: the problem that keeps it from being used, or None when it is fine. It runs
# before the reply is cached, so nothing that failed it is ever kept.
TextCheck = Callable[[str, str | None], str | None]  # (text, finish_reason)
JsonCheck = Callable[[Any], str | None]  # the parsed reply


class Completion(NamedTuple):
    text: str
    finish_reason: str | None  # "stop", "length" (cut off at max_tokens), ...
    completion_tokens: int = 0


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


# ---- structured output schema --------------------------------------------------------------


@cache
def strict_schema(reply_type: type[BaseModel]) -> dict[str, Any]:
    """The reply's JSON schema as strict structured outputs accept it: no extra keys, all required."""
    schema = reply_type.model_json_schema()
    _tighten(schema)
    return schema


DEFAULT_MAX_ITEMS = 64  # a list's bound when its type names none: a grammar cannot loop in it


def _tighten(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _tighten(item)
        return
    if not isinstance(node, dict):
        return
    node.pop("default", None)  # strict mode rejects defaults
    node.pop("title", None)  # words a grammar-only server never shows; a prompt-borne schema is shorter
    if node.get("type") == "array" and "maxItems" not in node:
        node["maxItems"] = DEFAULT_MAX_ITEMS
    properties = node.get("properties")
    if node.get("type") == "object" and isinstance(properties, dict):
        node["additionalProperties"] = False
        node["required"] = list(properties)
        for sub in properties.values():  # property names are not schema keywords
            _tighten(sub)
    for key, value in node.items():
        if key != "properties":
            _tighten(value)


def schema_errors(exc: ValidationError, limit: int = 8) -> str:
    """The exact errors of a reply, one per line, as `where: what` ("entities.0.name: Field
    required"), at most `limit` of them: what a repair asks the model to fix, and only that."""
    lines = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error.get("loc", ())) or "(the reply)"
        lines.append(f"- {where}: {error.get('msg', 'invalid')}")
    more = exc.error_count() - limit
    if more > 0:
        lines.append(f"- and {more} more like these")
    return "\n".join(lines)


def repair_temperature(base: float, attempt: int) -> float:
    """The sampling temperature of repair `attempt` (1, 2...): raised, so a repair is not the
    same draw again (at temperature 0 a model repeats its reply nearly word for word)."""
    return round(min(1.0, max(base, 0.0) + 0.3 * attempt), 2)


# How a check says a reply holds nothing at all. Under a json_schema grammar a small model
# that was never shown the schema closes every list at once; the repair of such a reply goes
# out with the schema in the prompt (json_object), and when that one holds something the
# client keeps to json_object for good (an endpoint profile found by its behaviour).
EMPTY_REPLY = "every list of the reply is empty"


class CutOff(ReplyError):
    """A reply cut off at its token bound (finish_reason length), or a prompt over the context:
    the work is too big for one call. The caller splits it; repairing it whole fails again."""


def parse_reply(content: str, reply_type: type[M]) -> M:
    """Validate a model's JSON reply, tolerating a Markdown code fence around it."""
    text = content.strip()
    fenced = re.match(r"^```(?:json)?\s*\n(.*)\n```$", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    return reply_type.model_validate_json(text)


# ---- retries -------------------------------------------------------------------------------


def sdk_error(exc: BaseException, kind: str = "OpenAIError") -> bool:
    """Is `exc` the SDK's error `kind`? Asked without importing the SDK for anything else."""
    return type(exc).__module__.startswith("openai") and isinstance(exc, getattr(openai_sdk(), kind))


def _retryable(exc: BaseException) -> bool:
    if not sdk_error(exc):
        return False
    openai = openai_sdk()
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def _retry_after(exc: BaseException | None) -> float | None:
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


class OpenAIClient:
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

    async def post(self, path: str, body: dict[str, Any]) -> bytes:
        """POST a JSON body to the endpoint; the reply body. Failures raise the SDK's errors."""
        return await self._transport.post(path, body)

    async def close(self) -> None:
        await self._transport.close()
        if self._sdk is not None:
            await self._sdk.close()

    # ---- transport -------------------------------------------------------------------------

    def _wait(self, state: RetryCallState) -> float:
        self.retries += 1  # tenacity asks for a wait only when it is about to retry
        after = _retry_after(state.outcome.exception() if state.outcome else None)
        if after is not None:
            return min(after, RETRY_AFTER_CAP)
        # Full jitter: uniform in [0, min(cap, base * 2^(n-1))], so retrying clients spread out.
        ceiling = min(MAX_BACKOFF, self.retry_wait * 2 ** (state.attempt_number - 1))
        return _jitter(ceiling)

    async def call(self, send: Callable[[], Awaitable[T]], *, estimated_tokens: int) -> T:
        """Run one request with retries under the limits; raises openai's own errors."""
        retrying = AsyncRetrying(
            retry=retry_if_exception(_retryable),
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
                f"{' after ' + str(attempts) + ' attempts' if _retryable(exc) else ''}: "
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

        async def send() -> Any:
            # The body is already in its wire form: posting it skips the SDK's typed transform,
            # which walks every message and the whole JSON schema on each call (ms of CPU).
            # Raw bytes, read as plain JSON below: building the SDK's typed ChatCompletion for
            # each reply cost ~1 ms of CPU per call, and we use three fields of it.
            return await self.post("/chat/completions", body)

        with self.usage.reserve(estimated + MESSAGE_OVERHEAD * len(messages), reply_bound):
            raw = await self.call(send, estimated_tokens=estimated)
            content, used, finish = self._read_completion(raw)
            prompt_tokens = used.get("prompt_tokens") if used else None
            completion_tokens = used.get("completion_tokens") if used else None
            if not isinstance(prompt_tokens, int):  # a server that does not say: our estimate
                prompt_tokens = estimated or sum(count_tokens(m["content"]) for m in messages)
            if not isinstance(completion_tokens, int):
                completion_tokens = count_tokens(content)
            self.usage.record_llm(prompt_tokens, completion_tokens)  # settles the reservation
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

    async def _cached(self, key: str) -> str | None:
        if self.cache is None:
            return None
        value = (await self.cache.get([key])).get(key)
        return value.get("content") if isinstance(value, dict) else None

    async def _remember(self, key: str, content: str) -> None:
        if self.cache is not None:
            await self.cache.put(CACHE_NAMESPACE, {key: {"content": content}})

    async def complete_text(
        self,
        *,
        system: str,
        prompt: str,
        temperature: float,
        max_tokens: int | None = None,
        check: TextCheck | None = None,
        repair: Callable[[str], str] | None = None,
        repairs: int = TEXT_REPAIRS,
        what: str = "text",
    ) -> str:
        """Free text (page writing). A reply that fails `check` is asked again (at most
        `repairs` times, with `repair(problem)` as the instruction and a higher temperature),
        is never cached, and in the end is a ReplyError naming the problem. The same problem
        twice in a row ends the repairs: asking a third time would only cost time."""
        messages = _messages(system, prompt)
        key = fingerprint(self.model, messages, None, temperature, max_tokens)
        cached = await self._cached(key)
        if cached is not None and (check is None or check(cached, None) is None):
            self.usage.record_cached()
            return cached
        asked, problem, problems = messages, "", []
        replies: list[str] = []
        try:
            for attempt in range(repairs + 1):
                if attempt:
                    self.repairs += 1
                text, finish, _used = await self._chat(
                    asked, temperature=repair_temperature(temperature, attempt) if attempt else temperature,
                    response_format=None, max_tokens=max_tokens,
                )
                text = text.strip()
                replies.append(text if finish != "length" else "")
                found = check(text, finish) if check is not None else None
                if found is None:
                    await self._remember(key, text)
                    return text
                problem = found
                problems.append(found)
                if len(problems) >= 2 and problems[-1] == problems[-2]:
                    break  # two identical failures: the model cannot do this one
                instruction = repair(problem) if repair else f"That reply cannot be used: {problem}. Answer again."
                asked = [*messages, {"role": "assistant", "content": text}, {"role": "user", "content": instruction}]
        except Exception as exc:
            if not sdk_error(exc):
                raise
            raise self.translate(exc) from exc
        tries = len(problems) - 1
        same = len(problems) >= 2 and problems[-1] == problems[-2] and len(problems) <= repairs
        error = ReplyError(
            f"the model's {what} was not usable after {tries} repair{'s' if tries != 1 else ''}"
            f"{' (the same failure twice)' if same else ''}: {problem}",
            hint="try a stronger model, or a lower temperature",
            field=what,
        )
        error.problem = problem
        error.replies = replies  # what the model wrote, for a caller that can keep part of it
        raise error

    async def complete_json(
        self,
        *,
        system: str,
        prompt: str,
        reply_type: type[M],
        schema_name: str,
        temperature: float,
        check: JsonCheck | None = None,
        schema: dict[str, Any] | None = None,
        split_on_cutoff: bool = False,
        max_tokens: int | None = None,
    ) -> M:
        """A reply validated as `reply_type` and by `check`; one repair attempt, else ReplyError.

        The repair names the exact errors and is drawn at a higher temperature. With
        `split_on_cutoff`, a reply cut off at its token bound (or a prompt over the context)
        raises CutOff at once: the caller splits the work rather than have it repaired whole.
        `schema` replaces the reply type's own (e.g. bounds sized to the batch).
        Only a reply that passed both is cached."""
        schema = schema if schema is not None else strict_schema(reply_type)
        schema_format = {
            "type": "json_schema",
            "json_schema": {"name": schema_name, "schema": schema, "strict": True},
        }
        messages = _messages(system, prompt)
        # Keyed on what was asked, not on how it was sent, so the json_object fallback shares it.
        key = fingerprint(self.model, messages, schema_format, temperature)
        cached = await self._cached(key)
        if cached is not None:
            try:
                reply = parse_reply(cached, reply_type)
            except ValidationError:
                pass  # written by an older reply type: ask again
            else:
                if check is None or check(reply) is None:
                    self.usage.record_cached()
                    return reply
        asked, problem = messages, ""
        grammar_gave_nothing = False
        try:
            for attempt in range(JSON_REPAIRS + 1):
                if attempt:
                    self.repairs += 1
                try:
                    content, finish, used = await self._json_call(
                        asked, schema_name, schema, schema_format,
                        repair_temperature(temperature, attempt) if attempt else temperature, max_tokens,
                        in_prompt=grammar_gave_nothing,
                    )
                except Exception as exc:
                    if split_on_cutoff and sdk_error(exc, "BadRequestError") and _over_context(exc):
                        raise CutOff(f"the prompt for {schema_name!r} is longer than the model's context",
                                     field=schema_name) from exc
                    raise
                if finish == "length" and split_on_cutoff:
                    error = CutOff(f"the reply for {schema_name!r} was cut off at {used} tokens "
                                   "(finish_reason: length)", field=schema_name)
                    error.problem = "cut off"
                    raise error
                try:
                    reply = parse_reply(content, reply_type)
                except ValidationError as exc:
                    problem = schema_errors(exc)
                    if finish == "length":
                        problem = f"- the reply was cut off at the token limit (finish_reason: length)\n{problem}"
                    instruction = (
                        f"That reply is not valid for the required JSON shape. The errors:\n{problem}\n"
                        "Fix exactly these and answer again with only the whole corrected JSON object "
                        "(shorter if it was cut off)."
                    )
                else:
                    found = check(reply) if check is not None else None
                    if found is None:  # kept as it came: it parses to this reply (no re-encoding)
                        if grammar_gave_nothing and self.response_format == "auto" and _holds_items(reply):
                            self.json_schema_supported = False  # the grammar route answers nothing here
                        self.reply_tokens.setdefault(schema_name, []).append(used)
                        await self._remember(key, content)
                        return reply
                    problem = found
                    grammar_gave_nothing = found.startswith(EMPTY_REPLY) and self.json_schema_supported
                    instruction = f"That reply cannot be used: {problem}\nAnswer again with only the corrected JSON object."
                    if grammar_gave_nothing:
                        # Asked afresh with the schema in the prompt: an empty reply in the
                        # conversation only primes the model to write it again (measured).
                        asked = messages
                        continue
                asked = [*messages, {"role": "assistant", "content": content}, {"role": "user", "content": instruction}]
        except Exception as exc:
            if not sdk_error(exc):
                raise
            raise self.translate(exc) from exc
        error = ReplyError(
            f"the model's reply for {schema_name!r} is not usable, even after one repair: "
            f"{problem.splitlines()[0].lstrip('- ') if problem else 'no reply'}",
            hint="try a stronger model, or a lower temperature",
            field=schema_name,
        )
        error.problem = problem
        raise error

    async def _json_call(
        self,
        messages: list[dict[str, str]],
        schema_name: str,
        schema: dict[str, Any],
        schema_format: dict[str, Any],
        temperature: float,
        max_tokens: int | None = None,
        in_prompt: bool = False,
    ) -> Completion:
        if self.json_schema_supported and not in_prompt:
            try:
                return await self._chat(messages, temperature=temperature, response_format=schema_format,
                                        max_tokens=max_tokens)
            except Exception as exc:
                if not sdk_error(exc, "BadRequestError"):
                    raise
                text = str(exc).lower()
                if "response_format" not in text and "json_schema" not in text:
                    raise
                self.json_schema_supported = False
        return await self._chat(
            _with_schema(messages, schema_name, schema),
            temperature=temperature,
            response_format=None if self.response_format == "plain" else {"type": "json_object"},
            max_tokens=max_tokens,
        )


def _holds_items(reply: BaseModel) -> bool:
    return any(isinstance(v, list) and v for v in vars(reply).values())


def _over_context(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "context_length_exceeded" in text or "maximum context length" in text or "context length" in text


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


def _messages(system: str, prompt: str) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": system}] if system.strip() else []
    messages.append({"role": "user", "content": prompt})
    return messages


def _with_schema(
    messages: list[dict[str, str]], schema_name: str, schema: dict[str, Any]
) -> list[dict[str, str]]:
    """For servers without json_schema: the schema travels in the last user message."""
    out = copy.deepcopy(messages)
    out[-1]["content"] += (
        f'\n\nReply with one JSON object only, matching the JSON schema "{schema_name}":\n'
        + json.dumps(schema, separators=(",", ":"))
    )
    return out


def _jitter(ceiling: float) -> float:
    return random.uniform(0.0, ceiling)  # spreading retries out needs no secure randomness

