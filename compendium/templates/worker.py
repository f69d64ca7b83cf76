"""Runs template jobs in child processes that are killed past a deadline and replaced, since
a thread cannot be stopped.

The sandbox's own limits stop almost every costly prompt with a clear error; the deadline
is for what they cannot interrupt (one C-level operation that runs for seconds). Children
are long-lived and fed through a pipe, so a job costs a round trip, not a process start.
Requests are pickled (we trust what we send); replies are JSON (a child runs strangers'
templates, so its words are data).

This module is the pool and the wire only: it imports nothing that does template work. A
child runs the job table in CHILD (worker_child.py), which imports the loader and the
renderer; callers name a job of that table (untrusted.py checks, render.py renders)."""

from __future__ import annotations

import atexit
import json
import time
from collections.abc import Callable
from typing import Any

from ..child_processes import Child, ChildGone, ChildPool, child_pipes, next_request, write_reply
from ..errors import TemplateError

STARTUP_DEADLINE = 60.0  # importing Compendium in a child; generous on a loaded machine
MEMORY_LIMIT = 2 << 30  # bytes of address space a child may map
POOL_SIZE = 2  # children working at once; more callers wait their turn
CHILD = "compendium.templates.worker_child"  # the module a child runs, as `python -m` would

_READY = b"compendium-template-worker ready\n"


class WorkerTimeout(TemplateError):
    """The child ran past its deadline and was killed."""


# ---- the parent side -----------------------------------------------------------------------


class Pool:
    """Template children, at most `size` at work; a killed child is replaced at once so that
    the next caller finds one warm."""

    def __init__(self, size: int, module: str = CHILD) -> None:
        self._children = ChildPool(
            size, lambda: Child(module, _READY, "the template worker", STARTUP_DEADLINE), replace=True
        )

    def ask(self, job: str, args: dict[str, Any], *, seconds: float, where: str, too_slow: str) -> Any:
        """The result of `job` run on `args` in a child. The TemplateError the job raised
        (file, line and key kept); WorkerTimeout(too_slow) naming `where` if it ran past
        `seconds` (the child is killed); TemplateError if the child crashed."""
        try:
            reply = self._ask((job, args), seconds)
        except ChildGone as exc:
            if exc.deadline:
                raise WorkerTimeout(too_slow, file=where) from exc
            raise TemplateError(f"{exc} (a crash, not the template's fault); try again", file=where) from exc
        return _result(reply)

    def _ask(self, request: tuple[str, dict[str, Any]], seconds: float) -> dict[str, Any]:
        child = self._children.take()
        try:
            child.send(request)
            reply = child.reply(time.monotonic() + seconds)
        except BaseException:  # ChildGone, or interrupted mid-request: the child's state is unknown
            self._children.give(child, dead=True)
            raise
        self._children.give(child)
        return reply

    def warm(self) -> None:
        """Start a child now, without waiting for it, if none is idle: its start-up then
        overlaps other work instead of holding up the first caller."""
        self._children.warm()

    def close(self) -> None:
        """Kill every child, busy ones too (at exit: a child must not outlive us)."""
        self._children.close()


# Checks run in threads of their own; renders are called from a compile's event loop. Apart,
# a render never waits behind a tenant's slow check.
CHECKS = Pool(POOL_SIZE)
RENDERS = Pool(POOL_SIZE)
atexit.register(CHECKS.close)
atexit.register(RENDERS.close)
_IN_CHILD = False  # set in the child: its own work runs in-process


def in_child() -> bool:
    """Whether this process is a worker child (whose template work runs in-process)."""
    return _IN_CHILD


def warm() -> None:
    """Start a checking child now, without waiting for it (a server at start-up), so that the
    first template a tenant sends does not wait for a worker to start."""
    CHECKS.warm()


def _result(reply: dict[str, Any]) -> Any:
    if "ok" in reply:
        return reply["ok"]
    if "template_error" in reply:
        e = reply["template_error"]
        err = TemplateError("", file=e["file"], line=e["line"], key=e["key"], hint=e["hint"])
        err.message, err.args = e["message"], (e["message"],)
        err.slow = bool(e.get("slow"))  # type: ignore[attr-defined]
        raise err
    raise TemplateError(f"the template worker failed: {reply.get('error')}")


# ---- the child side ------------------------------------------------------------------------


def serve(jobs: dict[str, Callable[[dict[str, Any]], Any]]) -> None:
    """Answer requests on stdin until the parent goes: each names one of `jobs`, whose result
    (JSON-able) is the reply. A TemplateError goes back whole (its `slow` flag too)."""
    global _IN_CHILD
    _IN_CHILD = True
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass
    stdin, stdout = child_pipes(_READY)
    while (request := next_request(stdin)) is not None:
        job, args = request
        try:
            reply: dict[str, Any] = {"ok": jobs[job](args)}
        except TemplateError as exc:
            reply = {"template_error": {"message": exc.message, "file": exc.file, "line": exc.line,
                                        "key": exc.key, "hint": exc.hint,
                                        "slow": bool(getattr(exc, "slow", False))}}  # fmt: skip
        except Exception as exc:  # reported, and the child goes on serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        write_reply(stdout, json.dumps(reply).encode())
