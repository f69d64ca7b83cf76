"""Fixtures shared by the backend contract modules: fresh knowledge-base names, server URLs."""

from __future__ import annotations

import os
import uuid

import pytest

from compendium.storage.records import RECORD_TYPES


def server_url(variable: str) -> str:
    """The test server URL in `variable`, or skip the module saying how to enable it."""
    url = os.environ.get(variable, "").strip()
    if not url:
        pytest.skip(f"{variable} is not set: no server to run this backend's contract tests on")
    return url


def fresh_kb() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


async def drop_kbs(store, kbs: list[str]) -> None:
    """Remove what a test wrote to a shared server, so runs do not pile up data."""
    for kb in kbs:
        scoped = store.for_kb(kb)
        for kind in RECORD_TYPES.values():
            await scoped.delete(kind, {})
