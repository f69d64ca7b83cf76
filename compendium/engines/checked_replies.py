"""Replies that must pass their checks: asked again with the problem named, at a higher
temperature, and cached only once they pass (the OpenAI client's text and JSON calls)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import EngineError, ReplyError
from ..fingerprint import fingerprint
from .cache import ResponseCache
from .endpoint_failures import over_context, sdk_error
from .reply_schema import (
    EMPTY_REPLY,
    CutOff,
    holds_items,
    parse_reply,
    schema_errors,
    strict_schema,
    with_schema,
)
from .usage import UsageMeter

if TYPE_CHECKING:
    import openai

M = TypeVar("M", bound=BaseModel)

CACHE_NAMESPACE = "llm"
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


def repair_temperature(base: float, attempt: int) -> float:
    """The sampling temperature of repair `attempt` (1, 2...): raised, so a repair is not the
    same draw again (at temperature 0 a model repeats its reply nearly word for word)."""
    return round(min(1.0, max(base, 0.0) + 0.3 * attempt), 2)


def messages_of(system: str, prompt: str) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": system}] if system.strip() else []
    messages.append({"role": "user", "content": prompt})
    return messages


class CheckedReplies:
    """`complete_text` and `complete_json` over one chat call (`_chat`, the client's): the
    repair loops, the json_schema -> json_object fallback, and the response cache."""

    model: str
    cache: ResponseCache | None
    usage: UsageMeter
    repairs: int
    response_format: str
    json_schema_supported: bool
    reply_tokens: dict[str, list[int]]

    # the client's one chat call (retried, limited, counted) and its error translation
    _chat: Callable[..., Awaitable[Completion]]
    translate: Callable[[openai.OpenAIError], EngineError]

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
        messages = messages_of(system, prompt)
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
        repair_prompt: Callable[[str], str] | None = None,
    ) -> M:
        """A reply validated as `reply_type` and by `check`; one repair attempt, else ReplyError.

        The repair names the exact errors and is drawn at a higher temperature. With
        `split_on_cutoff`, a reply cut off at its token bound (or a prompt over the context)
        raises CutOff at once: the caller splits the work rather than have it repaired whole.
        `schema` replaces the reply type's own (e.g. bounds sized to the batch). With
        `repair_prompt`, a reply that failed `check` is asked afresh with `repair_prompt(problem)`
        as the prompt, not shown back to the model (a small model shown its reply writes it
        again); the ReplyError then holds the parsed replies that failed (`replies`).
        Only a reply that passed both is cached."""
        schema = schema if schema is not None else strict_schema(reply_type)
        schema_format = {
            "type": "json_schema",
            "json_schema": {"name": schema_name, "schema": schema, "strict": True},
        }
        messages = messages_of(system, prompt)
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
        failed: list[M] = []  # parsed replies that failed `check`
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
                    if split_on_cutoff and sdk_error(exc, "BadRequestError") and over_context(exc):
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
                        if grammar_gave_nothing and self.response_format == "auto" and holds_items(reply):
                            self.json_schema_supported = False  # the grammar route answers nothing here
                        self.reply_tokens.setdefault(schema_name, []).append(used)
                        await self._remember(key, content)
                        return reply
                    problem = found
                    failed.append(reply)
                    grammar_gave_nothing = found.startswith(EMPTY_REPLY) and self.json_schema_supported
                    instruction = f"That reply cannot be used: {problem}\nAnswer again with only the corrected JSON object."
                    if grammar_gave_nothing:
                        # Asked afresh with the schema in the prompt: an empty reply in the
                        # conversation only primes the model to write it again (measured).
                        asked = messages
                        continue
                    if repair_prompt is not None:
                        asked = messages_of(system, repair_prompt(problem))
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
        error.replies = failed
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
            with_schema(messages, schema_name, schema),
            temperature=temperature,
            response_format=None if self.response_format == "plain" else {"type": "json_object"},
            max_tokens=max_tokens,
        )
