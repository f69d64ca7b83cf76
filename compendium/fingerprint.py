"""Fingerprints: xxh3_128 over canonical JSON, the one hash used for every cache key."""

from __future__ import annotations

import json
from typing import Any

import xxhash


def _default(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot fingerprint {type(value).__name__}")


# Built once: json.dumps with options builds a new encoder on every call (most of a short id's cost).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_default)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text."""
    return _CANONICAL.encode(value)


def fingerprint(*parts: Any) -> str:
    """32 hex digits identifying exactly these inputs."""
    return xxhash.xxh3_128_hexdigest(canonical_json(parts).encode("utf-8"))


def text_hash(text: str) -> str:
    """Fingerprint of a plain string, cheaper than going through JSON."""
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8"))


def short_id(*parts: Any, length: int = 16) -> str:
    """A stable record id derived from its identifying parts."""
    return fingerprint(*parts)[:length]
