"""Which task a backend's open transaction belongs to: its calls join it, other tasks' calls wait."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager


class TransactionOwner:
    """The transaction open on one shared connection, and the task (with the tasks it spawned)
    inside it. Every kb-scoped store on the connection shares one owner."""

    def __init__(self, name: str):
        self._current: contextvars.ContextVar[object | None] = contextvars.ContextVar(name, default=None)
        self.active: object | None = None

    def inside(self) -> bool:
        """Whether the calling task is inside the open transaction."""
        return self.active is not None and self._current.get() is self.active

    @contextmanager
    def held(self) -> Iterator[None]:
        """Mark the calling task as inside a transaction just begun; unmarked on leaving, before
        the caller commits or rolls back."""
        tx = object()
        self.active = tx
        token = self._current.set(tx)
        try:
            yield
        finally:
            self.active = None
            self._current.reset(token)
