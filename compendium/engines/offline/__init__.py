"""The offline engine: a cited wiki from a real corpus with no network and no model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import OfflineEngine

__all__ = ["OfflineEngine"]


def __getattr__(name: str) -> Any:
    # The engine is imported when asked for, not with the package: phases use a few of its
    # rules (definitions, sentences), and the engine with its NLP rules costs ~40 ms to import.
    if name == "OfflineEngine":
        from .engine import OfflineEngine

        return OfflineEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
