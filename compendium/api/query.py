"""Query strings as the schema declares them: a parameter that takes one value, given twice,
is refused (FastAPI would silently keep the last)."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from ..errors import InputError


def _takes_many(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "array" or any(_takes_many(s) for s in schema.get("anyOf", []))


def _single_valued(app: Any) -> dict[tuple[str, str], set[str]]:
    """(METHOD, path template) -> its query parameters that take one value, from the schema."""
    found = getattr(app.state, "single_valued_query", None)
    if found is None:
        found = {}
        for path, operations in app.openapi().get("paths", {}).items():
            for method, operation in operations.items():
                found[(method.upper(), path)] = {
                    p["name"] for p in operation.get("parameters", [])
                    if p.get("in") == "query" and not _takes_many(p.get("schema", {}))
                }
        app.state.single_valued_query = found
    return found


async def one_value_each(request: Request) -> None:
    """An app-wide dependency: 422 naming the first parameter given more than once."""
    route = request.scope.get("route")
    names = _single_valued(request.app).get((request.method, getattr(route, "path_format", "")), set())
    for name in names:
        if len(request.query_params.getlist(name)) > 1:
            raise InputError(f"{name} takes one value; it was given more than once", field=name)
