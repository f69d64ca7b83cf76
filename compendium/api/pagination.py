"""Cursor pagination shared by every list: {"items": [...], "next_cursor": str | null}."""

from __future__ import annotations

import base64
import binascii
import contextlib
from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any, Generic, TypeVar

from fastapi import Query
from pydantic import BaseModel

from ..errors import InputError

T = TypeVar("T")

MAX_LIMIT = 500
# base64url without padding: every string of this shape decodes, so a schema-valid cursor is
# never refused (one this API did not return just starts the page at an arbitrary key).
CURSOR = r"^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2,3})?$"


class Paged(BaseModel, Generic[T]):
    items: list[T]
    next_cursor: str | None = None


class PageParams:
    """`limit` and `cursor` query parameters; the cursor is opaque to clients."""

    def __init__(
        self,
        limit: int = Query(50, ge=1, le=MAX_LIMIT, description="items per page"),
        cursor: str | None = Query(None, max_length=2000, pattern=CURSOR,
                                   description="next_cursor of the previous page"),
    ):
        self.limit = limit
        self.after = decode_cursor(cursor) if cursor else None


def encode_cursor(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True)
        text = raw.decode("utf-8", "surrogateescape")  # keys are compared, never stored
    except (binascii.Error, ValueError) as exc:
        raise InputError("the cursor is not one this API returned", field="cursor") from exc
    if not text:
        raise InputError("the cursor is not one this API returned", field="cursor")
    return text


def page_of(items: Iterable[T], key: Callable[[T], str], params: PageParams) -> dict[str, Any]:
    """One page of `items` already sorted by `key`."""
    out: list[T] = []
    for item in items:
        if params.after is not None and key(item) <= params.after:
            continue
        if len(out) == params.limit:
            return {"items": out, "next_cursor": encode_cursor(key(out[-1]))}
        out.append(item)
    return {"items": out, "next_cursor": None}


async def page_of_scan(
    records: AsyncIterable[Any], params: PageParams, keep: Callable[[Any], bool] | None = None,
    render: Callable[[Any], Any] | None = None,
) -> dict[str, Any]:
    """One page of a store scan (ordered by id), filtered by `keep`, each item `render`ed."""
    out: list[Any] = []
    last = ""
    closing = contextlib.aclosing(records) if hasattr(records, "aclose") else contextlib.nullcontext()
    async with closing:  # an early return closes the scan at once
        async for record in records:
            if params.after is not None and record.id <= params.after:
                continue
            if keep is not None and not keep(record):
                continue
            if len(out) == params.limit:
                return {"items": out, "next_cursor": encode_cursor(last)}
            out.append(render(record) if render else record)
            last = record.id
    return {"items": out, "next_cursor": None}
