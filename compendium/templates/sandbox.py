"""The guarded Jinja sandbox every template prompt renders in: no internals, bounded cost.

Templates come from strangers, so each render has a budget (limits() sets it): loop steps
and calls, CPU time, output characters, and the size of every value a prompt builds. A
render past its budget stops with a SecurityError naming the limit. What one C-level
operation costs cannot be interrupted from here; the worker process (worker.py) is the
last line of defence for that."""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import Iterator, Sized
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from jinja2 import Environment, Undefined, nodes, pass_context
from jinja2.compiler import CodeGenerator, Frame
from jinja2.filters import FILTERS as DEFAULT_FILTERS
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from jinja2.utils import generate_lorem_ipsum

# Numbers passed to calls and filters, and repetitions ('-' * 80), stay under this.
_MAX_SIZE = 100_000
# Every value a prompt builds (strings, lists, nested lists counted in full) stays under this.
MAX_VALUE = 1_000_000
# What one render may cost. A real prompt takes a few milliseconds and a few hundred steps.
MAX_STEPS = 100_000  # loop iterations, calls and filters
MAX_OUTPUT = 1_000_000  # characters, including text a prompt builds and throws away
RENDER_SECONDS = 0.25  # of CPU time; a compile's render holds up its event loop about that long
MAX_DEPTH = 50  # nesting of the lists and mappings a prompt builds
_LIPSUM_PARAGRAPHS = 10

# Widths or precisions past 99999 (or taken from an argument) in %-format or str.format.
_HUGE_WIDTH = re.compile(r"%[-#0 +]*(?:\*|\d{6,}|\d*\.(?:\*|\d{6,}))|\{[^{}]*:[^{}]*(?:\d{6,}|\{)")
_FORMAT = DEFAULT_FILTERS["format"]


class RenderLimit(SecurityError):
    """A render ran out of steps or CPU time: the costly kind of refusal, which a caller may
    remember so as not to pay it again."""


@dataclass
class Budget:
    """What is left of one render's allowance."""

    steps: int = MAX_STEPS
    output: int = MAX_OUTPUT
    seconds: float = RENDER_SECONDS
    deadline: float = 0.0  # on the thread's CPU clock
    next_look: float = 0.0  # on the wall clock

    def step(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise RenderLimit(f"the prompt runs more than {MAX_STEPS} loop steps and calls")
        # Every step, since a step may be one costly filter call; the CPU clock is a system
        # call (~1.5 µs), so it is read only when 10 ms of wall time passed since the last look.
        now = time.monotonic()
        if now >= self.next_look:
            self.next_look = now + 0.01
            if time.thread_time() > self.deadline:
                raise RenderLimit(f"the prompt takes more than {self.seconds:g} s of CPU time to render")

    def spend_output(self, chars: int) -> None:
        self.output -= chars
        if self.output < 0:
            raise SecurityError(f"the prompt writes more than {MAX_OUTPUT} characters")


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("prompt_budget", default=None)


@contextmanager
def limits(seconds: float = RENDER_SECONDS) -> Iterator[Budget]:
    """Renders inside this block share one budget of `seconds` of this thread's CPU time (or
    less: a block inside another ends by the outer block's deadline too). CPU time, not wall
    time, so that a busy machine does not fail an ordinary prompt; the worker's deadline
    (worker.py) is in wall time."""
    now = time.thread_time()
    outer = _BUDGET.get()
    deadline = min(now + seconds, outer.deadline) if outer is not None else now + seconds
    budget = Budget(seconds=round(deadline - now, 3), deadline=deadline)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def _budget() -> Budget:
    budget = _BUDGET.get()
    if budget is None:
        raise RuntimeError("a template prompt was rendered outside sandbox.limits()")
    return budget


# ---- sizes ---------------------------------------------------------------------------------

_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})
_DICT_ATTRIBUTES = frozenset(dir(dict))


def value_size(value: Any, limit: int = MAX_VALUE) -> int:
    """Characters plus items of `value`, nested lists and mappings counted in full (a list
    holding one list ten times counts it ten times). Stops counting once past `limit`."""
    kind = type(value)
    if kind is str:
        return len(value)
    if kind not in _CONTAINERS and not isinstance(value, list | tuple | dict | set | frozenset):
        return len(value) if isinstance(value, str) else 1
    seen: dict[int, int] = {}

    def size(item: Any, depth: int) -> int:
        key = id(item)
        if key in seen:
            return seen[key]
        if depth > MAX_DEPTH:
            raise SecurityError(f"the prompt builds values nested more than {MAX_DEPTH} deep")
        total = len(item)
        members = (x for pair in item.items() for x in pair) if isinstance(item, dict) else item
        for member in members:  # scalars inline: this runs for every list a prompt builds
            kind = type(member)
            if kind is str:
                total += len(member)
            elif kind in _CONTAINERS or isinstance(member, list | tuple | dict | set | frozenset):
                total += size(member, depth + 1)
            else:
                total += len(member) if isinstance(member, str) else 1
            if total > limit:
                break
        seen[key] = total
        return total

    return size(value, 0)


def _check_size(size: int, what: str) -> None:
    if size > MAX_VALUE:
        raise SecurityError(f"{what} would be larger than {MAX_VALUE} characters")


def _guard_binop(operator: str, left: Any, right: Any) -> None:
    if operator == "**" and isinstance(right, int | float) and abs(right) > 64:
        raise SecurityError(f"exponent {right} is too large")
    if operator == "**" and isinstance(left, int) and isinstance(right, int) and left.bit_length() * abs(right) > 4096:
        raise SecurityError("number is too large")  # powers of powers grow without bound
    if operator == "*":
        count, items = (left, right) if isinstance(left, int) else (right, left)
        if isinstance(count, int) and isinstance(items, str | list | tuple):
            if count * len(items) > _MAX_SIZE:
                raise SecurityError("repetition is too large")
            if count > 1 and not isinstance(items, str):
                _check_size(count * value_size(items), "the repeated list")
        if isinstance(left, int) and isinstance(right, int) and max(abs(left), abs(right)) > 2**64:
            raise SecurityError("number is too large")
    if operator == "+" and isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
        _check_size(value_size(left) + value_size(right), "the sum")
    if operator == "%" and isinstance(left, str):
        _guard_format(left)


def _guard_format(text: str) -> None:
    if _HUGE_WIDTH.search(text):
        raise SecurityError("format width is too large")


def _guard_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_SIZE:
            raise SecurityError(f"argument {value} is too large")


def _replaced_size(text: str, old: Any, new: Any) -> int:
    if not isinstance(old, str) or not isinstance(new, str):
        return len(text)
    times = text.count(old) if old else len(text) + 1
    return len(text) + times * max(len(new) - len(old), 0)


def _joined(items: Any, separator: Any) -> Any:
    """`items` as a list (generators are read once here) after checking the joined size."""
    listed = items if isinstance(items, Sized) else list(items)
    gaps = len(listed) * (len(separator) if isinstance(separator, str) else 1)
    _check_size(gaps + value_size(listed), "the joined text")
    return listed


def _guard_method(owner: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Checks the size a str method would produce; returns its arguments (join's read once)."""
    if name in ("format", "format_map"):
        _guard_format(owner)
        biggest = max((value_size(a) for a in (*args, *kwargs.values())), default=0)
        _check_size(len(owner) + owner.count("{") * biggest, "the formatted text")
    elif name == "replace" and len(args) >= 2:
        _check_size(_replaced_size(owner, args[0], args[1]), "the replaced text")
    elif name == "join" and args:
        return (_joined(args[0], owner), *args[1:])
    elif name == "expandtabs":
        tab = args[0] if args and isinstance(args[0], int) else 8
        _check_size(len(owner) + owner.count("\t") * tab, "the expanded text")
    elif name in ("translate", "maketrans"):
        raise SecurityError(f"str.{name}() is not available in prompts")
    return args


def _guard_filter(name: str, value: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Checks the size a filter would produce; returns the value (join's read once)."""
    if name == "join":
        separator = args[0] if args else kwargs.get("d", "")
        return _joined(value, separator)
    if name == "replace" and isinstance(value, str) and len(args) >= 2:
        _check_size(_replaced_size(value, args[0], args[1]), "the replaced text")
    elif name == "indent" and isinstance(value, str):
        width = args[0] if args else kwargs.get("width", 4)
        per_line = len(width) if isinstance(width, str) else int(width or 0)
        _check_size(len(value) + (value.count("\n") + 1) * per_line, "the indented text")
    elif name == "wordwrap" and isinstance(value, str):
        wrap = args[2] if len(args) > 2 else kwargs.get("wrapstring")
        if isinstance(wrap, str):
            _check_size(len(value) + (len(value) + 1) * len(wrap), "the wrapped text")
    elif name == "sum":
        start = args[1] if len(args) > 1 else kwargs.get("start", 0)
        if not isinstance(start, int | float):
            raise SecurityError("sum() adds numbers only in prompts")
    elif name == "format" and isinstance(value, str):
        _guard_format(value)
        biggest = max((value_size(a) for a in (*args, *kwargs.values())), default=0)
        _check_size(len(value) + value.count("%") * biggest, "the formatted text")
    elif name in ("string", "tojson", "pprint", "list", "unique", "sort", "dictsort", "batch", "slice"):
        _check_size(value_size(value), f"the value given to |{name}")
    return value


# ---- the environment ----------------------------------------------------------------------


# The first statement of every loop body: spends one step of the budget.
_STEP = "spend_step"


class _BudgetedCode(CodeGenerator):
    """Jinja's code generator with the budget checks compiled in: every loop iteration spends
    a step, literal text is counted as output, and `~` and [...] literals are size-checked."""

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        if not (node.body and _is_step(node.body[0])):
            step = nodes.ExprStmt(nodes.EnvironmentAttribute(_STEP), lineno=node.lineno)
            node.body = [step, *node.body]
        super().visit_For(node, frame)

    def visit_ExprStmt(self, node: nodes.ExprStmt, frame: Frame) -> None:
        if _is_step(node):
            self.writeline(f"environment.{_STEP}()")
        else:
            super().visit_ExprStmt(node, frame)

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        literal = sum(len(child.data) for child in node.nodes if isinstance(child, nodes.TemplateData))
        if literal:
            self.writeline(f"environment.spend_output({literal})")
        super().visit_Output(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.join_checked((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def _checked(self, visit: Any, node: nodes.Node, frame: Frame) -> None:
        if getattr(node, "ctx", "load") != "load":
            visit(node, frame)
            return
        self.write("environment.checked(")
        visit(node, frame)
        self.write(")")

    def visit_List(self, node: nodes.List, frame: Frame) -> None:
        self._checked(super().visit_List, node, frame)

    def visit_Tuple(self, node: nodes.Tuple, frame: Frame) -> None:
        self._checked(super().visit_Tuple, node, frame)

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self._checked(super().visit_Dict, node, frame)


def _is_step(node: nodes.Node) -> bool:
    return (isinstance(node, nodes.ExprStmt) and isinstance(node.node, nodes.EnvironmentAttribute)
            and node.node.name == _STEP)  # fmt: skip


@pass_context
def _finalize(context: Any, value: Any) -> Any:
    # Every {{ ... }} passes here: the common kinds take the short way.
    budget = _BUDGET.get() or _budget()
    kind = type(value)
    if kind is str:
        budget.output -= len(value)
    elif kind in _CONTAINERS:
        budget.output -= value_size(value, budget.output + 1)
    else:
        budget.output -= 1
    if budget.output < 0:
        budget.spend_output(0)  # raises, naming the limit
    return value



class _DictFields:
    """`e.text` on a plain dict names its key (a dict takes no attributes of its own but its
    methods): read at once, not after getattr() has raised AttributeError, which costs more
    than the lookup and happens for every field of every evidence item."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)  # type: ignore[misc]


class GuardedSandbox(_DictFields, ImmutableSandboxedEnvironment):
    # Intercepted operators and context filters are also never folded at compile time.
    intercepted_binops = frozenset({"**", "*", "%", "+"})
    code_generator_class = _BudgetedCode

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        _budget().step()
        _guard_binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def call(self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        _budget().step()
        _guard_args(args, kwargs)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str):
            args = _guard_method(owner, getattr(__obj, "__name__", ""), args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    # Called by the code _BudgetedCode generates, once per loop step and per literal text.
    def spend_step(self) -> None:
        (_BUDGET.get() or _budget()).step()

    def spend_output(self, chars: int) -> None:
        budget = _BUDGET.get() or _budget()
        budget.output -= chars
        if budget.output < 0:
            budget.spend_output(0)  # raises, naming the limit

    def join_checked(self, parts: tuple[Any, ...]) -> str:
        _check_size(sum(value_size(p) for p in parts), "the joined text (~)")
        return "".join(map(str, parts))

    def checked(self, value: Any) -> Any:
        # Only a literal that holds two or more lists or mappings can multiply sizes
        # ([a, a, a]); one with scalars and at most one of them adds to what exists.
        members = value.values() if type(value) is dict else value
        if sum(1 for m in members if type(m) in _CONTAINERS) > 1:
            _check_size(value_size(value), "the list or mapping")
        return value


def _guarded_filter(name: str, func: Any) -> Any:
    passes = getattr(getattr(func, "jinja_pass_arg", None), "name", None)

    @pass_context
    def guarded(context: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
        _budget().step()
        if args or kwargs:
            _guard_args(args, kwargs)
        value = _guard_filter(name, value, args, kwargs)
        if passes is None:
            return func(value, *args, **kwargs)
        first = context if passes == "context" else (
            context.eval_ctx if passes == "eval_context" else context.environment)
        return func(first, value, *args, **kwargs)

    return guarded


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    if n > _LIPSUM_PARAGRAPHS or max > 100 or min > max:
        raise SecurityError(f"lipsum() writes at most {_LIPSUM_PARAGRAPHS} paragraphs of 100 words")
    return generate_lorem_ipsum(n=n, html=html, min=min, max=max)


class BuiltinEnvironment(_DictFields, Environment):
    """Jinja without the sandbox, for the prompts shipped in the package only (render.py)."""


def make_builtin_environment(undefined: type[Undefined]) -> BuiltinEnvironment:
    """The environment built-in prompts render in: make_environment's options, no guards."""
    return BuiltinEnvironment(undefined=undefined, autoescape=False, trim_blocks=True, lstrip_blocks=True)


def make_environment(undefined: type[Undefined]) -> GuardedSandbox:
    """The environment prompts render in (render.py) and are validated in (prompt_check.py);
    render its templates inside limits()."""
    env = GuardedSandbox(undefined=undefined, autoescape=False, trim_blocks=True,
                         lstrip_blocks=True, finalize=_finalize)  # fmt: skip
    env.filters = {name: _guarded_filter(name, f) for name, f in env.filters.items()}
    env.globals["lipsum"] = _lipsum
    return env
