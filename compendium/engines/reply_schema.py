"""The JSON shape a model's reply must fit: the strict schema sent, the reply parsed, the errors named."""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..errors import ReplyError

M = TypeVar("M", bound=BaseModel)


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


def holds_items(reply: BaseModel) -> bool:
    """Whether any list of the reply has an item."""
    return any(isinstance(v, list) and v for v in vars(reply).values())


def with_schema(
    messages: list[dict[str, str]], schema_name: str, schema: dict[str, Any]
) -> list[dict[str, str]]:
    """For servers without json_schema: the schema travels in the last user message."""
    out = copy.deepcopy(messages)
    out[-1]["content"] += (
        f'\n\nReply with one JSON object only, matching the JSON schema "{schema_name}":\n'
        + json.dumps(schema, separators=(",", ":"))
    )
    return out
