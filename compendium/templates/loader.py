"""Loads template YAML: safe parsing with line numbers, strict validation, sandboxed prompts."""

from __future__ import annotations

import operator
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from jinja2 import ChainableUndefined, nodes, pass_context
from jinja2 import TemplateError as JinjaError
from jinja2.filters import FILTERS as DEFAULT_FILTERS
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from pydantic import BaseModel, ValidationError
from yaml.constructor import ConstructorError

from ..errors import CompendiumError, TemplateError
from .render import _ENV as _RENDER_ENV
from .schema import Template

KeyPath = tuple[str | int, ...]
M = typing.TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class YamlDocument:
    """Parsed YAML plus, for every key and list item, the line (1-based) where it appears."""

    data: Any
    source: str
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_of(self, path: KeyPath) -> int | None:
        """Line of `path`, or of its nearest ancestor that appears in the file."""
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return None


def dotted(path: KeyPath) -> str:
    """("entity_types", 0, "name") -> "entity_types[0].name"."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def located(
    error: type[CompendiumError],
    message: str,
    *,
    file: str,
    line: int | None = None,
    key: str | None = None,
    hint: str | None = None,
) -> CompendiumError:
    """An error of class `error` whose message starts with `file:line: key:`."""
    if issubclass(error, TemplateError):
        return error(message, file=file, line=line, key=key, hint=hint)
    where = file + (f":{line}" if line is not None else "") + (f": {key}" if key else "")
    return error(f"{where}: {message}", hint=hint, field=key)


# ---- YAML with line numbers ----------------------------------------------------------------


def read_yaml(
    text: str, *, source: str, error: type[CompendiumError] = TemplateError
) -> YamlDocument:
    """Parse one YAML document with the safe loader, recording the line of every key."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = ": ".join(p for p in (exc.context, exc.problem) if p)
        label = "YAML tag not allowed" if isinstance(exc, ConstructorError) else "YAML syntax error"
        raise located(
            error,
            f"{label}: {problem}",
            file=source,
            line=mark.line + 1 if mark else None,
        ) from exc
    except yaml.YAMLError as exc:
        raise located(error, f"YAML error: {exc}", file=source) from exc
    finally:
        loader.dispose()
    lines: dict[KeyPath, int] = {}
    if node is not None:
        _walk(node, (), lines, source, error)
    return YamlDocument(data=data, source=source, lines=lines)


def _walk(
    node: yaml.Node,
    path: KeyPath,
    lines: dict[KeyPath, int],
    source: str,
    error: type[CompendiumError],
) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key == "<<":  # merge key: its entries are overridable, not duplicates
                continue
            child = (*path, key)
            line = key_node.start_mark.line + 1
            if child in lines:
                raise located(
                    error,
                    f"duplicate key (first set at line {lines[child]})",
                    file=source,
                    line=line,
                    key=dotted(child),
                )
            lines[child] = line
            _walk(value_node, child, lines, source, error)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[(*path, index)] = item.start_mark.line + 1
            _walk(item, (*path, index), lines, source, error)


def require_mapping(
    doc: YamlDocument, *, what: str, error: type[CompendiumError] = TemplateError
) -> dict[str, Any]:
    """The document's top level as a dict; empty files and lists or scalars are errors."""
    if doc.data is None:
        raise located(error, f"the file is empty; a {what} is a mapping of keys", file=doc.source)
    if not isinstance(doc.data, dict):
        raise located(
            error,
            f"the top level of a {what} must be a mapping of keys, not {_kind(doc.data)}",
            file=doc.source,
            line=1,
        )
    return doc.data


# ---- pydantic errors in the user's words ------------------------------------------------


def validate_model(
    model: type[M],
    data: Any,
    doc: YamlDocument,
    *,
    at: KeyPath = (),
    error: type[CompendiumError] = TemplateError,
) -> M:
    """model.model_validate(data); the first error (in file order) becomes `error` with
    file, line and dotted key, and the others are summarised after it."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for item in exc.errors(include_url=False):
            path = (*at, *_clean_loc(item["loc"]))
            message, path = _describe(item, model, path[len(at) :], doc, at)
            # An unknown key explains a "missing" one on the same line (a misspelling).
            rank = 0 if item["type"] == "extra_forbidden" else 1
            problems.append((doc.line_of(path) or 0, rank, dotted(path), message))
        problems.sort(key=lambda p: (p[0], p[1]))
        line, _, key, message = problems[0]
        if len(problems) > 1:
            others = "; ".join(f"line {ln}: {k}" for ln, _, k, _ in problems[1:6])
            more = f" and {len(problems) - 6} more" if len(problems) > 6 else ""
            message += f" [{len(problems) - 1} more problem(s): {others}{more}]"
        raise located(error, message, file=doc.source, line=line or None, key=key) from exc


def _clean_loc(loc: tuple[Any, ...]) -> KeyPath:
    # Drop pydantic's internal markers such as 'function-after[...]'.
    return tuple(p for p in loc if isinstance(p, int) or "[" not in str(p))


def _describe(
    item: Any, model: type[BaseModel], rel: KeyPath, doc: YamlDocument, at: KeyPath
) -> tuple[str, KeyPath]:
    kind, ctx, got = item["type"], item.get("ctx") or {}, item.get("input")
    path = (*at, *rel)
    if kind == "extra_forbidden":
        valid = ", ".join(_fields_at(model, rel[:-1])) or "none"
        return f"unknown key (valid keys: {valid})", path
    if kind == "missing":
        return "required key is missing", path
    bounds = {
        "greater_than_equal": ("≥", "ge"),
        "greater_than": (">", "gt"),
        "less_than_equal": ("≤", "le"),
        "less_than": ("<", "lt"),
    }
    if kind in bounds:
        sign, name = bounds[kind]
        return f"must be {sign} {ctx.get(name)} (got {got!r})", path
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')} (got {got!r})", path
    if kind == "string_pattern_mismatch":
        return f"must match {ctx.get('pattern')} (got {got!r})", path
    if kind == "string_too_short":
        return "must not be empty", path
    if kind in ("too_long", "too_short"):
        return f"{item['msg'].lower()} (got {got!r})", path
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"must be a mapping of keys, not {_kind(got)}", path
    if kind in ("list_type", "tuple_type"):
        return f"must be a list, not {_kind(got)}", path
    if kind.startswith(("int_", "float_", "bool_", "string_")):
        wanted = {"int": "an integer", "float": "a number", "bool": "true or false"}
        return f"must be {wanted.get(kind.split('_')[0], 'a string')} (got {got!r})", path
    if kind == "value_error":
        message = str(ctx.get("error", item["msg"]))
        # A model-level check names its field first: point at that field's line.
        first = message.split(" ", 1)[0]
        if isinstance(got, dict) and first in got:
            path = (*path, first)
            message = message.split(" ", 1)[1] if " " in message else message
        return message, path
    return f"{item['msg']} (got {got!r})", path


def _fields_at(model: type[BaseModel], rel: KeyPath) -> list[str]:
    """Field names of the model found at `rel` inside `model` (lists and tuples unwrapped)."""
    current: Any = model
    for part in rel:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", {})
        if part not in fields:
            return []
        current = _model_in(fields[part].annotation)
    return list(getattr(current, "model_fields", {}))


def _model_in(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    return f"{type(value).__name__} {value!r}"


# ---- templates ------------------------------------------------------------------------------

# Every Jinja prompt a template may set, as key paths.
PROMPT_KEYS: tuple[KeyPath, ...] = (
    ("map", "system"),
    ("map", "prompt"),
    ("reduce", "prompt"),
    ("reduce", "summary_prompt"),
    ("plan", "prompt"),
    ("refine", "system"),
    ("refine", "writer_prompt"),
    ("refine", "page_template"),
)


def parse_template(text: str, *, source: str, default_name: str | None = None) -> Template:
    """Validate template YAML `text`; every problem is a TemplateError naming `source`,
    the line and the key. `default_name` is used when the file sets no `name`."""
    doc = read_yaml(text, source=source)
    data = dict(require_mapping(doc, what="template"))
    if "name" not in data and default_name is not None:
        data["name"] = default_name
    template = validate_model(Template, data, doc)
    _check_types(template, doc)
    for key in PROMPT_KEYS:
        value = template
        for part in key:
            value = getattr(value, str(part))
        if isinstance(value, str) and value.strip():
            check_prompt(value, file=source, line=doc.line_of(key), key=dotted(key))
    return template


def load_template_file(path: Path) -> Template:
    """Read and validate a template file; its name defaults to the file's stem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise TemplateError("no such template file", file=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise TemplateError(f"not UTF-8 text ({exc.reason})", file=str(path)) from exc
    except OSError as exc:
        raise TemplateError(f"cannot read: {exc.strerror}", file=str(path)) from exc
    return parse_template(text, source=str(path), default_name=path.stem)


def _check_types(template: Template, doc: YamlDocument) -> None:
    for group in ("entity_types", "relation_types"):
        seen: dict[str, int] = {}
        for index, spec in enumerate(getattr(template, group)):
            if spec.name in seen:
                raise TemplateError(
                    f"duplicate type {spec.name!r} (also {group}[{seen[spec.name]}])",
                    file=doc.source,
                    line=doc.line_of((group, index, "name")),
                    key=f"{group}[{index}].name",
                )
            seen[spec.name] = index
            for p_index, pattern in enumerate(spec.patterns):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    path = (group, index, "patterns", p_index)
                    raise TemplateError(
                        f"not a valid regular expression: {exc}",
                        file=doc.source,
                        line=doc.line_of(path),
                        key=dotted(path),
                    ) from exc


# ---- prompts ---------------------------------------------------------------------------------


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


# Validation may run on uploaded templates, so the trial render itself must stay cheap: loops
# share a step budget, and huge powers and repetitions are refused.
TRIAL_STEPS = 100_000
_MAX_SIZE = 100_000
# Widths or precisions past 99999 (or taken from an argument) in %-format or str.format.
_HUGE_WIDTH = re.compile(r"%[-#0 +]*(?:\*|\d{6,}|\d*\.(?:\*|\d{6,}))|\{[^{}]*:[^{}]*(?:\d{6,}|\{)")
_FORMAT = DEFAULT_FILTERS["format"]


class _TrialEnvironment(ImmutableSandboxedEnvironment):
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


class _BudgetedRange:
    """range() for the trial render: every step of every loop spends one shared budget."""

    def __init__(self) -> None:
        self.steps = TRIAL_STEPS

    def __call__(self, *args: int) -> _Steps:
        return _Steps(self, range(*args))


class _Steps:
    def __init__(self, budget: _BudgetedRange, numbers: range) -> None:
        self.budget, self.numbers = budget, numbers

    def __len__(self) -> int:
        return len(self.numbers)

    def __iter__(self) -> typing.Iterator[int]:
        for number in self.numbers:
            self.budget.steps -= 1
            if self.budget.steps < 0:
                raise SecurityError(f"prompt loops more than {TRIAL_STEPS} times")
            yield number


# The options of the environment prompts are rendered in (render.py), so syntax agrees.
_TRIAL_ENV = _TrialEnvironment(
    undefined=_TrialUndefined,
    autoescape=_RENDER_ENV.autoescape,
    trim_blocks=_RENDER_ENV.trim_blocks,
    lstrip_blocks=_RENDER_ENV.lstrip_blocks,
)
_TRIAL_ENV.filters = {name: _guarded_filter(f) for name, f in _TRIAL_ENV.filters.items()}

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
# during the trial render too. Names follow what engines/llm.py renders (and the fields of
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
        trial = _TRIAL_ENV.from_string(source, globals={"range": _BudgetedRange()})
        trial.render(**SAMPLE_VARIABLES)
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
