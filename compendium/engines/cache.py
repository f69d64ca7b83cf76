"""The response cache an engine keeps replies in; whoever builds the engine supplies one.

A reply is kept with the passages it was drawn from (chunk ids), so that deleting a document
forgets every reply its text went into: a caller that knows what a request carries says so
with `drawn_from`, and the cache records `reply_sources()` beside each value it keeps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Protocol

SOURCES = "chunks"  # the field of a kept value naming the passages its request carried

_sources: ContextVar[frozenset[str]] = ContextVar("compendium_reply_sources", default=frozenset())


@contextlib.contextmanager
def drawn_from(chunk_ids: Iterable[str]) -> Iterator[None]:
    """Replies kept inside the block were drawn from these passages (as well as from those of
    an enclosing block). Tasks started inside inherit it, as they do any context variable."""
    token = _sources.set(_sources.get() | frozenset(c for c in chunk_ids if c))
    try:
        yield
    finally:
        _sources.reset(token)


def reply_sources() -> list[str]:
    """The passages a reply kept now was drawn from (sorted; empty outside `drawn_from`)."""
    return sorted(_sources.get())


class ResponseCache(Protocol):
    """Replies kept by key (a fingerprint of the request), so a repeated request costs nothing."""

    async def get(self, keys: Sequence[str]) -> dict[str, Any]:
        """The kept value of each key that has one; keys never kept are left out."""
        ...

    async def put(self, kind: str, values: Mapping[str, Any]) -> None:
        """Keep `values` by key; `kind` ("llm", "embedding") says which engine kept them. A value
        that is a mapping keeps `reply_sources()` under SOURCES too."""
        ...
