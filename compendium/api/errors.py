"""JSON errors with one stable shape: {"error": {"code", "message", "field"}}."""

from __future__ import annotations

from typing import Any

import yaml
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import (
    BudgetExceeded,
    CompendiumError,
    ConfigError,
    EngineError,
    InputError,
    NotFound,
    StoreError,
    TemplateError,
)
from ..tenancy import AlreadyExists


class ApiError(Exception):
    """An HTTP error raised by a route: status, a stable code, a message, the offending field."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field
        self.headers = headers


class ErrorDetail(BaseModel):
    code: str = Field(description="stable, machine-readable: not_found, invalid_input, ...")
    message: str = Field(description="what is wrong and what to do, for a person")
    field: str | None = Field(None, description="the offending input, when there is one")


class ErrorBody(BaseModel):
    error: ErrorDetail


_MEANING = {
    400: "the request cannot be read",
    401: "no API key, an unknown or revoked one, or a key in the URL (keys go in the Authorization header)",
    403: "this key may not do this (the admin key manages tenants; tenant keys the rest)",
    404: "no such resource for this tenant",
    409: "it exists already, or conflicts with the current state",
    413: "the body (an upload, or JSON over 8 MiB) is larger than the server accepts",
    415: "the file's type is not one a knowledge base takes",
    422: "a parameter or the body is invalid; `field` names it",
    429: "too many failed sign-ins from this address: wait the seconds Retry-After gives",
    502: "the language model or embedding service failed",
    503: "the server is starting or stopping, or its store is unreachable",
    507: "the server's disk is full: the message names the space needed",
}


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses=` for these error statuses, each with the error body's model."""
    return {status: {"model": ErrorBody, "description": _MEANING[status]} for status in statuses}


# What any route may answer: no or a wrong key, a bad parameter or body, the store away.
COMMON = errors(400, 401, 403, 413, 422, 429, 503)


def error_response(status: int, code: str, message: str, field: str | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"error": {"code": code, "message": message, "field": field}}
    return JSONResponse(body, status_code=status, headers=headers)


# Most specific first: NotFound is a StoreError, AlreadyExists an InputError.
_STATUS: list[tuple[type[CompendiumError], int, str]] = [
    (NotFound, 404, "not_found"),
    (AlreadyExists, 409, "already_exists"),
    (TemplateError, 422, "invalid_template"),
    (InputError, 422, "invalid_input"),
    (ConfigError, 422, "invalid_settings"),
    (BudgetExceeded, 409, "budget_exceeded"),
    (StoreError, 503, "store_unavailable"),
    (EngineError, 502, "engine_error"),
]

_HTTP_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
               405: "method_not_allowed", 409: "conflict", 413: "too_large",
               415: "unsupported_media_type", 422: "invalid_input", 429: "too_many_requests",
               507: "insufficient_storage"}


def _api_routes(routes: Any) -> Any:
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif hasattr(route, "original_router"):  # FastAPI keeps included routers nested
            yield from _api_routes(route.original_router.routes)


def allowed_methods(request: Request) -> list[str]:
    """The methods of the resource at the request's path. Routes are one per method; where a
    literal path and a template both match (/templates/validate, /templates/{name}), the
    literal one is the resource."""
    path = request.url.path
    matching = [r for r in _api_routes(request.app.router.routes) if r.path_regex.match(path)]
    literal = [r for r in matching if "{" not in r.path]
    methods = {m for r in (literal or matching) for m in r.methods}
    return sorted(methods | ({"HEAD"} if "GET" in methods else set()))


def document_errors(app: FastAPI) -> None:
    """Every 4xx/5xx in the OpenAPI schema is the JSON error body, also on routes that answer
    text or HTML (FastAPI would give an extra response the route's own media type)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()
        body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        for operations in schema.get("paths", {}).values():
            for operation in operations.values():
                for status, response in operation.get("responses", {}).items():
                    if str(status)[0] in "45":
                        response["content"] = body
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def yaml_problem(exc: yaml.YAMLError) -> str:
    """`<upload>:LINE: what is wrong` from any PyYAML error."""
    mark = getattr(exc, "problem_mark", None)
    if isinstance(exc, yaml.reader.ReaderError):
        char = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or "\0")
        return (f"<upload>: character U+{char:04X} at offset {exc.position} is not allowed "
                "in YAML; remove control characters")
    line = f":{mark.line + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"<upload>{line}: invalid YAML: {problem}"


def _field_of(loc: Any) -> str | None:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header", "form")]
    return ".".join(parts) or None


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.field, exc.headers)

    @app.exception_handler(CompendiumError)
    async def _ours(_: Request, exc: CompendiumError) -> JSONResponse:
        for kind, status, code in _STATUS:
            if isinstance(exc, kind):
                return error_response(status, code, str(exc), exc.field)
        return error_response(400, "bad_request", str(exc), exc.field)

    @app.exception_handler(yaml.YAMLError)
    async def _yaml(_: Request, exc: yaml.YAMLError) -> JSONResponse:
        # The template loader names file and line itself; this holds for any YAML error it lets
        # through (a control character, a broken document), so a bad template is never a 500.
        return error_response(422, "invalid_template", yaml_problem(exc), "yaml")

    @app.exception_handler(RecursionError)
    async def _deep(request: Request, exc: RecursionError) -> JSONResponse:
        # PyYAML's parser recurses per level of nesting: `[[[[...` deep enough overflows it.
        if request.url.path.startswith("/templates"):
            return error_response(422, "invalid_template", "<upload>: the YAML is nested too "
                                  "deeply to read; a template needs only a few levels", "yaml")
        return await _bug(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = exc.errors()
        first = problems[0] if problems else {"loc": (), "msg": "invalid request"}
        field = _field_of(first.get("loc", ()))
        message = f"{field}: {first.get('msg')}" if field else str(first.get("msg"))
        if len(problems) > 1:
            message += f" (and {len(problems) - 1} more problem(s))"
        return error_response(422, "invalid_input", message, field)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:  # Starlette names only the first route's methods
            headers["Allow"] = ", ".join(allowed_methods(request))
        return error_response(exc.status_code, code, str(exc.detail), None, headers or None)

    @app.exception_handler(Exception)
    async def _bug(_: Request, exc: Exception) -> JSONResponse:
        # Never leak internals; the message names the kind so a report can be matched to logs.
        return error_response(500, "internal_error", f"internal error ({type(exc).__name__})")
