"""Renders template prompts in the Jinja2 sandbox; a stranger's prompts render in a worker
process with a deadline (worker.py), the built-in ones in this process."""

from __future__ import annotations

from collections import OrderedDict
from functools import lru_cache
from importlib import resources
from typing import Any

from jinja2 import StrictUndefined
from jinja2 import TemplateError as JinjaError
from jinja2.sandbox import SecurityError

from ..errors import TemplateError
from ..fingerprint import fingerprint
from . import worker
from .sandbox import MAX_OUTPUT, limits, make_builtin_environment, make_environment

RENDER_DEADLINE = 2.0  # wall seconds for one prompt in a worker (sandbox: 0.25 s of CPU)

_ENV = make_environment(StrictUndefined)
# The prompts shipped in the package are our code, not a stranger's: they render without the
# sandbox's per-step and per-value checks (the same output; a page prompt's evidence loop spent
# most of its render on them), but within the same output limit.
_BUILTIN_ENV = make_builtin_environment(StrictUndefined)
# Prompts that ran out of steps or time once: refused at once after that, so that a prompt
# that stalls does not stall every MAP batch and page of a compile in turn. Bounded: the
# oldest are forgotten first (each one cost a full render budget to learn, so few arrive).
_STALLED: OrderedDict[str, None] = OrderedDict()
STALLED_REMEMBERED = 4096


@lru_cache(maxsize=256)
def _compile(source: str):  # type: ignore[no-untyped-def]
    return _ENV.from_string(source)


@lru_cache(maxsize=64)
def _compile_builtin(source: str):  # type: ignore[no-untyped-def]
    return _BUILTIN_ENV.from_string(source)


def renders_here(source: str) -> bool:
    """Whether render() draws `source` in this process (a built-in prompt, or any prompt in a
    worker child) rather than in a worker with a deadline, which a caller waits for off its
    event loop."""
    return worker.in_child() or source in _builtin_prompts()


def render(source: str, *, where: str = "prompt", **variables: Any) -> str:
    """Render `source` with `variables`; any failure is a TemplateError naming `where`."""
    if renders_here(source):
        return render_here(source, where=where, **variables)
    key = fingerprint(source)
    if key in _STALLED:
        raise TemplateError(
            "this prompt ran past its step or time limit earlier and is not rendered again; "
            "simplify its loops", file=where,
        )  # fmt: skip
    try:
        return render_untrusted(source, where=where, variables=variables)
    except TemplateError as exc:
        if isinstance(exc, worker.WorkerTimeout) or getattr(exc, "slow", False):
            _STALLED[key] = None
            while len(_STALLED) > STALLED_REMEMBERED:
                _STALLED.popitem(last=False)
        raise


def render_untrusted(source: str, *, where: str, variables: dict[str, Any]) -> str:
    """render_here in a worker child with RENDER_DEADLINE; TemplateError on any failure."""
    return str(worker.RENDERS.ask(
        "render", {"source": source, "where": where, "variables": variables}, seconds=RENDER_DEADLINE,
        where=where, too_slow=f"the prompt took longer than {RENDER_DEADLINE:g} s to render and was stopped",
    ))  # fmt: skip


def render_here(source: str, *, where: str = "prompt", **variables: Any) -> str:
    """Render in this process, within the sandbox's limits (a built-in prompt: its output limit)."""
    try:
        if source in _builtin_prompts():
            text = _compile_builtin(source).render(**variables)
            if len(text) > MAX_OUTPUT:
                raise SecurityError(f"the prompt writes more than {MAX_OUTPUT} characters")
            return text
        with limits():
            return _compile(source).render(**variables)
    except JinjaError as exc:  # includes SecurityError and UndefinedError
        line = getattr(exc, "lineno", None)
        raise TemplateError(str(exc), file=where, line=line) from exc
    except RecursionError as exc:
        raise TemplateError("the prompt calls itself too deeply", file=where) from exc
    except Exception as exc:  # a stranger's prompt may fail in any way (e.g. 1/0)
        raise TemplateError(f"the prompt fails to render: {type(exc).__name__}: {exc}", file=where) from exc


@lru_cache(maxsize=1)
def _builtin_prompts() -> frozenset[str]:
    folder = resources.files("compendium.templates") / "builtin" / "prompts"
    return frozenset(p.read_text(encoding="utf-8") for p in folder.iterdir() if p.name.endswith(".j2"))


@lru_cache(maxsize=64)
def default_prompt(name: str) -> str:
    """A built-in prompt shipped in templates/builtin/prompts/NAME.j2."""
    ref = resources.files("compendium.templates") / "builtin" / "prompts" / f"{name}.j2"
    return ref.read_text(encoding="utf-8")


def prompt_source(configured: str, default_name: str) -> str:
    """The template's own prompt if it sets one, else the built-in default."""
    return configured if configured.strip() else default_prompt(default_name)
