"""JSON errors with one stable shape: {"error": {"code", "message", "field"}}."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
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

    def __init__(self, status: int, code: str, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.field = status, code, message, field


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
               415: "unsupported_media_type", 422: "invalid_input"}


def _field_of(loc: Any) -> str | None:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header", "form")]
    return ".".join(parts) or None


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.field)

    @app.exception_handler(CompendiumError)
    async def _ours(_: Request, exc: CompendiumError) -> JSONResponse:
        for kind, status, code in _STATUS:
            if isinstance(exc, kind):
                return error_response(status, code, str(exc), exc.field)
        return error_response(400, "bad_request", str(exc), exc.field)

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
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, str(exc.detail), None, getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _bug(_: Request, exc: Exception) -> JSONResponse:
        # Never leak internals; the message names the kind so a report can be matched to logs.
        return error_response(500, "internal_error", f"internal error ({type(exc).__name__})")
