"""YAML files read safely with the line of every key, and validated against a pydantic model
with errors in the user's words (file, line, dotted key). Shared by templates and the
workspace settings; it imports yaml, and pydantic only when a model is validated, so reading
settings costs no template schema, Jinja or prompt checks."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml
from yaml.constructor import ConstructorError

from ..errors import CompendiumError, TemplateError

KeyPath = tuple[str | int, ...]
if TYPE_CHECKING:
    from pydantic import BaseModel

M = typing.TypeVar("M", bound="BaseModel")


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


# A template is a few kilobytes; these bounds keep a stranger's file from costing more than
# a fraction of a second to parse (an alias "billion laughs" bomb is refused outright).
MAX_YAML_CHARS = 256 * 1024
MAX_YAML_NODES = 20_000
MAX_YAML_DEPTH = 40


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader with aliases and anchors refused and the node count and depth capped."""

    def __init__(self, text: str, source: str, error: type[CompendiumError]) -> None:
        super().__init__(text)
        self._source, self._error = source, error
        self._nodes = self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            self._refuse(event, f"YAML aliases (*{event.anchor}) are not allowed; write the value out")
        if getattr(event, "anchor", None) is not None:
            self._refuse(event, f"YAML anchors (&{event.anchor}) are not allowed; write the value out")
        self._nodes += 1
        if self._nodes > MAX_YAML_NODES:
            self._refuse(event, f"more than {MAX_YAML_NODES} YAML values; a template is far smaller")
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            self._refuse(event, f"YAML nested more than {MAX_YAML_DEPTH} levels deep")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def _refuse(self, event: Any, message: str) -> typing.NoReturn:
        raise located(self._error, message, file=self._source, line=event.start_mark.line + 1)


def read_yaml(
    text: str, *, source: str, error: type[CompendiumError] = TemplateError
) -> YamlDocument:
    """Parse one YAML document with the safe loader, recording the line of every key.
    Aliases and anchors are refused and the size, node count and depth are bounded."""
    if len(text) > MAX_YAML_CHARS:
        raise located(
            error,
            f"the file is {len(text)} characters; the limit is {MAX_YAML_CHARS}",
            file=source,
        )
    loader = None
    try:
        loader = _BoundedLoader(text, source, error)  # the reader checks characters here
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
    except yaml.reader.ReaderError as exc:
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
        raise located(
            error,
            f"control character U+{char:04X} is not allowed in YAML; remove it, or write it "
            f"as an escape (\\u{char:04x}) inside a double-quoted string",
            file=source,
            line=text.count("\n", 0, max(exc.position, 0)) + 1,
        ) from exc
    except yaml.YAMLError as exc:
        raise located(error, f"YAML error: {exc}", file=source) from exc
    finally:
        if loader is not None:
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
    from pydantic import ValidationError

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
    from pydantic import BaseModel

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
