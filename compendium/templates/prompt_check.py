"""Validates template prompts: compiles them in the sandbox and renders them once on samples."""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

from jinja2 import ChainableUndefined, nodes
from jinja2 import TemplateError as JinjaError
from jinja2.sandbox import SecurityError

from ..errors import TemplateError
from .sandbox import _guard_args, _guard_binop, _guard_format, limits, make_environment


class _TrialUndefined(ChainableUndefined):
    """Tolerates variables the trial render does not supply, but never a sandbox refusal."""

    def __init__(
        self,
        hint: str | None = None,
        obj: Any = None,
        name: str | None = None,
        exc: type[Exception] = JinjaError,
    ) -> None:
        if exc is SecurityError:
            raise SecurityError(hint or f"access to {name!r} is unsafe")
        super().__init__(hint=hint, name=name, exc=exc)  # type: ignore[arg-type]


_TRIAL_ENV = make_environment(_TrialUndefined)

_EVIDENCE = {
    "ref": 1,
    "source": "notes.md > Storage",
    "text": "The Buffer Manager caches pages.",
    "chunk_id": "c1",
    "document": "notes.md",
    "heading_path": ["Storage"],
    "support": 2,
    "about": ["buffer-manager"],
}
_SKETCH = {
    "name": "Buffer Manager",
    "type": "component",
    "description": "Caches pages.",
    "aliases": ["BufMgr"],
    "evidence": ["The Buffer Manager caches pages."],
}

# Representative values for the variables prompts are rendered with, so that loop bodies run
# during the trial render too. Names follow what engines/llm_prompts.py lists (and the fields of
# engines/tasks.py) and the variables of the offline page layout.
SAMPLE_VARIABLES: Mapping[str, Any] = {
    "chunks": [
        {
            "label": "c1",
            "header": "Notes > Storage",
            "text": "The Buffer Manager caches pages.",
            "heading_path": ["Storage"],
            "document_title": "Notes",
        }
    ],
    "entity_types": [{"name": "component", "description": "A part", "patterns": []}],
    "relation_types": [{"name": "uses", "description": "A uses B", "patterns": []}],
    "max_items": 40,
    "max_items_per_chunk": 40,
    "pairs": [{"label": "p1", "a": _SKETCH, "b": _SKETCH, "similarity": 0.9}],
    "questions": [
        {
            "label": "q1",
            "candidate": _SKETCH,
            "page_title": "Buffer Manager",
            "page_summary": "Caches pages.",
            "similarity": 0.9,
        }
    ],
    "members": [_SKETCH],
    "claims": ["The Buffer Manager caches pages."],
    "descriptions": ["Caches pages.", "Keeps hot pages in memory."],
    "max_chars": 800,
    "name": "Buffer Manager",
    "type": "component",
    "slug": "buffer-manager",
    "title": "Buffer Manager",
    "kind": "entity",
    "description": "Caches pages.",
    "aliases": ["BufMgr"],
    "evidence": [_EVIDENCE],
    "links": [{"slug": "page-cache", "title": "Page Cache"}],
    "existing_markdown": "# Buffer Manager\n",
    "removed_refs": ["c9"],
    "max_tokens": 1200,
    "lead": {"text": "The Buffer Manager caches pages.", "ref": 1},
    "sections": [{"heading": "Design", "sentences": [{"text": "It uses a clock.", "ref": 1}]}],
    "related": [{"slug": "page-cache", "title": "Page Cache"}],
    "writer_example": "# Example\n",
}


def check_prompt(source: str, *, file: str, line: int | None, key: str) -> None:
    """Compile `source` in the sandbox and render it once with sample variables; a syntax
    error or any reach for Python internals is a TemplateError naming the prompt's key."""
    try:
        parsed = _TRIAL_ENV.parse(source)
    except JinjaError as exc:
        raise _prompt_error(f"Jinja syntax error: {exc}", exc, file, line, key) from exc
    # Static checks: they cover branches the trial render does not take, and the constant
    # expressions render.py's environment evaluates while compiling.
    for node in parsed.find_all(nodes.Expr):
        problem = _static_problem(node)
        if problem:
            raise TemplateError(
                f"unsafe prompt: {problem} (prompt line {node.lineno})",
                file=file,
                line=line,
                key=key,
            )
    try:
        with limits():
            _TRIAL_ENV.from_string(source).render(**SAMPLE_VARIABLES)
    except SecurityError as exc:
        raise _prompt_error(f"unsafe prompt: {exc}", exc, file, line, key) from exc
    except TemplateError as exc:
        raise TemplateError(exc.message, file=file, line=line, key=key) from exc
    except JinjaError as exc:
        # Missing variables are tolerated above; what remains is an error in the prompt.
        raise _prompt_error(f"prompt fails to render: {exc}", exc, file, line, key) from exc
    except Exception as exc:  # a trial render may fail in any way (e.g. 1/0)
        raise _prompt_error(
            f"prompt fails to render: {type(exc).__name__}: {exc}", exc, file, line, key
        ) from exc


def _static_problem(node: nodes.Expr) -> str | None:
    if isinstance(node, nodes.Getattr | nodes.Getitem):
        attr = node.attr if isinstance(node, nodes.Getattr) else _constant(node.arg)
        if isinstance(attr, str) and attr.startswith("_"):
            return f"reaches for {attr!r}: attributes starting with '_' are not allowed"
        return None
    try:
        if isinstance(node, nodes.Pow | nodes.Mul | nodes.Mod):
            operator = {nodes.Pow: "**", nodes.Mul: "*", nodes.Mod: "%"}[type(node)]
            _guard_binop(operator, _constant(node.left), _constant(node.right))
        elif isinstance(node, nodes.Filter | nodes.Call):
            _guard_args(tuple(_constant(a) for a in node.args),
                        {k.key: _constant(k.value) for k in node.kwargs})  # fmt: skip
            if isinstance(node, nodes.Filter) and node.name == "format":
                value = _constant(node.node) if node.node is not None else None
                if isinstance(value, str):
                    _guard_format(value)
            if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr):
                value = _constant(node.node.node)
                if isinstance(value, str) and node.node.attr in ("format", "format_map"):
                    _guard_format(value)
    except SecurityError as exc:
        return str(exc)
    return None


def _constant(node: nodes.Node) -> Any:
    """The value of a constant number or string expression, computed under the same guards
    as the trial render; None when it is not constant."""
    if isinstance(node, nodes.Const):
        return node.value
    if isinstance(node, nodes.Neg):
        value = _constant(node.node)
        return -value if isinstance(value, int | float) else None
    if type(node) in _FOLDED:
        symbol, apply = _FOLDED[type(node)]
        left, right = _constant(node.left), _constant(node.right)
        if left is None or right is None:
            return None
        _guard_binop(symbol, left, right)
        try:
            return apply(left, right)
        except (TypeError, ValueError, ArithmeticError):
            return None
    return None


_FOLDED: dict[type, tuple[str, Any]] = {
    nodes.Pow: ("**", operator.pow),
    nodes.Mul: ("*", operator.mul),
    nodes.Add: ("+", operator.add),
    nodes.Sub: ("-", operator.sub),
}


def _prompt_error(
    message: str, exc: Exception, file: str, line: int | None, key: str
) -> TemplateError:
    inner = getattr(exc, "lineno", None)
    if inner:
        message += f" (prompt line {inner})"
    return TemplateError(message, file=file, line=line, key=key)
