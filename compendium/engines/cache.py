"""The response cache an engine keeps replies in; whoever builds the engine supplies one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class ResponseCache(Protocol):
    """Replies kept by key (a fingerprint of the request), so a repeated request costs nothing."""

    async def get(self, keys: Sequence[str]) -> dict[str, Any]:
        """The kept value of each key that has one; keys never kept are left out."""
        ...

    async def put(self, kind: str, values: Mapping[str, Any]) -> None:
        """Keep `values` by key; `kind` ("llm", "embedding") says which engine kept them."""
        ...
