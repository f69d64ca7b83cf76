"""Loads template YAML: safe parsing with line numbers, strict validation, sandboxed prompts."""

from __future__ import annotations

import typing
from typing import Any

from ..errors import TemplateError
from .patterns import MAX_PATTERNS, PatternError, compile_pattern
from .prompt_check import check_prompt
from .sandbox import limits
from .schema import Template
from .yaml_document import (  # noqa: F401 (their home was here; importers keep these names)
    MAX_YAML_CHARS,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    KeyPath,
    YamlDocument,
    dotted,
    located,
    read_yaml,
    require_mapping,
    validate_model,
)

# ---- templates ------------------------------------------------------------------------------

# CPU seconds for the trial renders of all of a template's prompts (each has its own limits).
VALIDATE_SECONDS = 1.0

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


def own_prompts(template: Template) -> typing.Iterator[tuple[KeyPath, str]]:
    """The prompts `template` sets (non-blank), with their key paths."""
    for key in PROMPT_KEYS:
        value: Any = template
        for part in key:
            value = getattr(value, str(part))
        if isinstance(value, str) and value.strip():
            yield key, value


def parse_template(text: str, *, source: str, default_name: str | None = None) -> Template:
    """Validate template YAML `text`; every problem is a TemplateError naming `source`,
    the line and the key. `default_name` is used when the file sets no `name`."""
    doc = read_yaml(text, source=source)
    data = dict(require_mapping(doc, what="template"))
    if "name" not in data and default_name is not None:
        data["name"] = default_name
    template = validate_model(Template, data, doc)
    _check_types(template, doc)
    with limits(VALIDATE_SECONDS):  # every trial render ends by one deadline
        for key, value in own_prompts(template):
            check_prompt(value, file=source, line=doc.line_of(key), key=dotted(key))
    return template


def _check_types(template: Template, doc: YamlDocument) -> None:
    count = 0
    for group in ("entity_types", "relation_types"):
        for index, spec in enumerate(getattr(template, group)):
            count += len(spec.patterns)
            if count > MAX_PATTERNS:
                path = (group, index, "patterns")
                raise TemplateError(
                    f"more than {MAX_PATTERNS} patterns in the template; keep the ones that matter",
                    file=doc.source, line=doc.line_of(path), key=dotted(path),
                )  # fmt: skip
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
                    compile_pattern(pattern)
                except PatternError as exc:
                    path = (group, index, "patterns", p_index)
                    raise TemplateError(
                        f"{exc} (types.{spec.name}.patterns[{p_index}])",
                        file=doc.source,
                        line=doc.line_of(path),
                        key=dotted(path),
                    ) from exc
