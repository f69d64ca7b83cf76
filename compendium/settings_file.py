"""The keys of compendium.yaml and their bounds, in one table, and their check.

Values already of their key's type and within its bounds (a file's strings and numbers, as
YAML gives them) are checked here without pydantic: a question's process does not import it.
Anything else (a string to read as a number, as the environment gives; an unknown key; a value
out of bounds; `groups:`) goes to pydantic models made from the same table, which convert the
value or say what is wrong in the words of templates/yaml_document.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"

# section -> key -> (type, bounds as pydantic's Field takes them); section "" is the top level
KEYS: dict[str, dict[str, tuple[type, dict[str, Any]]]] = {
    "": {
        "title": (str, {"min_length": 1, "max_length": 200}),
        "knowledge_base": (str, {"min_length": 1}),
        "default_template": (str, {"min_length": 1}),
        "store": (str, {"min_length": 1}),
        "token_budget": (int, {"ge": 1}),
    },
    "llm": {
        "base_url": (str, {}),
        "model": (str, {"min_length": 1}),
        "api_key_env": (str, {"pattern": _ENV_NAME}),
        "requests_per_minute": (int, {"ge": 1}),
        "tokens_per_minute": (int, {"ge": 1}),
        "timeout": (float, {"gt": 0}),
        "max_retries": (int, {"ge": 0}),
        "retry_wait": (float, {"ge": 0}),
        "max_concurrency": (int, {"ge": 1}),
        "max_reply_tokens": (int, {"ge": 16}),
        "response_format": (str, {"pattern": r"^(auto|json_schema|json_object|plain)$"}),
        "context_tokens": (int, {"ge": 512}),
        "hedge": (bool, {}),
        "price_per_1k_prompt": (float, {"ge": 0}),
        "price_per_1k_completion": (float, {"ge": 0}),
    },
    "embedding": {
        "base_url": (str, {}),
        "model": (str, {"min_length": 1}),
        "api_key_env": (str, {"pattern": _ENV_NAME}),
        "batch_size": (int, {"ge": 1}),
        "timeout": (float, {"gt": 0}),
        "max_retries": (int, {"ge": 0}),
        "retry_wait": (float, {"ge": 0}),
    },
    "distributed": {
        "broker": (str, {"pattern": r"^(redis|rediss)://"}),
        "visibility_timeout": (float, {"gt": 0}),
        "resend_after": (float, {"gt": 0}),
    },
}
SECTIONS = tuple(s for s in KEYS if s)
GROUPS = "groups"  # a list of template groups (templates/groups.py), checked by pydantic only


def checked(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """`data` (nested as in the file) without its None values, when every value is of its key's
    type and within its bounds; None when pydantic must convert or judge it (file_model)."""
    if GROUPS in data and data[GROUPS] is not None:
        return None
    return _section(data, KEYS[""], nested=True)


def _section(data: Any, keys: Mapping[str, tuple[type, dict[str, Any]]], *, nested: bool) -> dict[str, Any] | None:
    if not isinstance(data, Mapping):
        return None
    out: dict[str, Any] = {}
    for key, value in data.items():
        if value is None:
            continue
        if nested and key in SECTIONS:
            inner = _section(value, KEYS[key], nested=False)
            if inner is None:
                return None
            out[key] = inner
            continue
        spec = keys.get(key)
        if spec is None or not _fits(value, *spec):
            return None
        out[key] = float(value) if spec[0] is float else value
    return out


def _fits(value: Any, kind: type, bounds: Mapping[str, Any]) -> bool:
    if kind is bool:
        return type(value) is bool
    if kind is str:
        if type(value) is not str or ("pattern" in bounds and "\n" in value):
            return False  # a line break: pydantic's regex and Python's read `$` differently
        return (len(value) >= bounds.get("min_length", 0)
                and len(value) <= bounds.get("max_length", len(value))
                and ("pattern" not in bounds or re.search(bounds["pattern"], value) is not None))
    if type(value) is not int and not (kind is float and type(value) is float):
        return False
    return value >= bounds.get("ge", value) and ("gt" not in bounds or value > bounds["gt"])


def file_model(data: Mapping[str, Any]) -> type[BaseModel]:
    """The pydantic model of the settings file: with its groups checked as template groups
    when `data` has them."""
    return _model(with_groups=data.get(GROUPS) is not None)


@cache
def _model(*, with_groups: bool) -> type[BaseModel]:
    from pydantic import BaseModel, ConfigDict, Field, create_model

    class FileModel(BaseModel):
        model_config = ConfigDict(extra="forbid")

    def fields(keys: Mapping[str, tuple[type, dict[str, Any]]]) -> dict[str, Any]:
        return {k: (kind | None, Field(None, **bounds)) for k, (kind, bounds) in keys.items()}

    groups: Any = list[Any]
    if with_groups:
        from .templates.groups import TemplateGroup

        groups = list[TemplateGroup]
    top = fields(KEYS[""])
    budget = top.pop("token_budget")  # the keys in the file's order, as errors list them
    sections = {s: (create_model(s, __base__=FileModel, **fields(KEYS[s])) | None, None) for s in SECTIONS}
    return create_model("settings", __base__=FileModel, **top, **sections, token_budget=budget,
                        groups=(groups | None, None))
