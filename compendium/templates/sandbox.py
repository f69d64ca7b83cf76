"""The guarded Jinja sandbox every template prompt renders in: no internals, no resource bombs."""

from __future__ import annotations

import re
from typing import Any

from jinja2 import Undefined, pass_context
from jinja2.filters import FILTERS as DEFAULT_FILTERS
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

# Templates can be uploaded, so rendering must stay cheap: huge powers, repetitions and
# format widths are refused.
_MAX_SIZE = 100_000
# Widths or precisions past 99999 (or taken from an argument) in %-format or str.format.
_HUGE_WIDTH = re.compile(r"%[-#0 +]*(?:\*|\d{6,}|\d*\.(?:\*|\d{6,}))|\{[^{}]*:[^{}]*(?:\d{6,}|\{)")
_FORMAT = DEFAULT_FILTERS["format"]


class GuardedSandbox(ImmutableSandboxedEnvironment):
    # Intercepted operators and context filters are also never folded at compile time.
    intercepted_binops = frozenset({"**", "*", "%"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _guard_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _guard_args(args, kwargs)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and getattr(__obj, "__name__", "") in ("format", "format_map"):
            _guard_format(owner)
        return super().call(__context, __obj, *args, **kwargs)

def _guard_binop(operator: str, left: Any, right: Any) -> None:
    if operator == "**" and isinstance(right, int | float) and abs(right) > 64:
        raise SecurityError(f"exponent {right} is too large")
    if operator == "*":
        count, items = (left, right) if isinstance(left, int) else (right, left)
        if isinstance(count, int) and isinstance(items, str | list | tuple):
            if count * len(items) > _MAX_SIZE:
                raise SecurityError("repetition is too large")
        if isinstance(left, int) and isinstance(right, int) and max(abs(left), abs(right)) > 2**64:
            raise SecurityError("number is too large")
    if operator == "%" and isinstance(left, str):
        _guard_format(left)


def _guard_format(text: str) -> None:
    if _HUGE_WIDTH.search(text):
        raise SecurityError("format width is too large")


def _guard_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_SIZE:
            raise SecurityError(f"argument {value} is too large")


def _guarded_filter(func: Any) -> Any:
    passes = getattr(getattr(func, "jinja_pass_arg", None), "name", None)

    @pass_context
    def guarded(context: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        _guard_args(args, kwargs)
        if isinstance(value, str) and func is _FORMAT:
            _guard_format(value)
        first = {"context": context, "eval_context": context.eval_ctx,
                 "environment": context.environment}.get(passes or "")  # fmt: skip
        return func(first, value, *args, **kwargs) if passes else func(value, *args, **kwargs)

    return guarded



def make_environment(undefined: type[Undefined]) -> GuardedSandbox:
    """The environment prompts render in (render.py) and are validated in (prompt_check.py)."""
    env = GuardedSandbox(undefined=undefined, autoescape=False, trim_blocks=True, lstrip_blocks=True)
    env.filters = {name: _guarded_filter(f) for name, f in env.filters.items()}
    return env
