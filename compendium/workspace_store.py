"""The store a workspace's settings name, opened: shared by the compiler's operations and by
retrieval, which must not import the compiler to answer a question."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .errors import WorkspaceError
from .workspace import STATE_DIR, STORE_FILE

if TYPE_CHECKING:
    from .settings import Settings
    from .storage.base import Store


def store_url(settings: Settings) -> str:
    """The settings' store URL, else the SQLite file in the workspace's state folder."""
    if settings.store_url:
        return settings.store_url
    if settings.workspace is None:
        raise WorkspaceError("no workspace and no store URL", hint="run `compendium init DIR` or set COMPENDIUM_STORE")
    return f"sqlite:///{(settings.workspace / STATE_DIR / STORE_FILE).resolve()}"


@contextlib.asynccontextmanager
async def opened_store(settings: Settings) -> AsyncIterator[Store]:
    """That store, open, and closed afterwards (the state folder made first)."""
    from .storage.factory import open_store

    if settings.workspace is not None:
        (settings.workspace / STATE_DIR).mkdir(parents=True, exist_ok=True)
    store = await open_store(store_url(settings), settings.knowledge_base)
    try:
        yield store
    finally:
        await store.close()
