"""The offline engine: a cited wiki from a real corpus with no network and no model."""

from __future__ import annotations

from .engine import OfflineEngine

__all__ = ["OfflineEngine"]
