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
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import TemplateError

STARTUP_DEADLINE = 60.0  # importing Compendium in a child; generous on a loaded machine
MEMORY_LIMIT = 2 << 30  # bytes of address space a child may map
POOL_SIZE = 2  # children working at once; more callers wait their turn
CHILD = "compendium.templates.worker_child"  # the module a child runs, as `python -m` would

_HEADER = struct.Struct(">I")
# A child imports this package from the parent's copy, without running its __init__ (which
# loads the whole application): it starts in about half the time. Then it runs CHILD as
# __main__, which is what `python -m CHILD` does.
_BOOT = (
    "import runpy, sys, types; package = types.ModuleType('compendium'); package.__path__ = [sys.argv[1]]; "
    "sys.modules['compendium'] = package; runpy.run_module(sys.argv[2], run_name='__main__')"
)
_READY = b"compendium-template-worker ready\n"


class WorkerTimeout(TemplateError):
    """The child ran past its deadline and was killed."""


# ---- the parent side -----------------------------------------------------------------------


class _Child:
    """One child process and its pipes."""

    def __init__(self, module: str) -> None:
        # One BLAS thread: a child never multiplies matrices, and many threads' buffers would
        # count against its memory limit on a machine with many cores.
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(Path(__file__).resolve().parents[1]), module],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
        )  # fmt: skip
        self.ready = False

    def ask(self, payload: bytes, seconds: float) -> dict[str, Any]:
        """Send one pickled request and wait for its reply; raises _Gone if the child died or
        ran past `seconds` (it is killed then)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        if not self.ready:
            try:
                started = self._read(len(_READY), time.monotonic() + STARTUP_DEADLINE)
            except _Gone as exc:
                raise _Gone("the template worker did not start") from exc
            if started != _READY:
                self.kill()
                raise _Gone("the template worker did not start")
            self.ready = True
        try:
            self.process.stdin.write(_HEADER.pack(len(payload)) + payload)
            self.process.stdin.flush()
        except OSError as exc:
            raise _Gone("the template worker stopped") from exc
        deadline = time.monotonic() + seconds
        size = _HEADER.unpack(self._read(_HEADER.size, deadline))[0]
        return json.loads(self._read(size, deadline))

    def _read(self, count: int, deadline: float) -> bytes:
        assert self.process.stdout is not None
        fd, out = self.process.stdout.fileno(), b""
        while len(out) < count:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.kill()
                raise _Deadline("deadline")
            chunk = os.read(fd, count - len(out))
            if not chunk:
                self.kill()
                raise _Gone("the template worker stopped")
            out += chunk
        return out

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


class _Gone(Exception):
    """The child died or was killed; the message says why."""


class _Deadline(_Gone):
    """The child ran past its deadline and was killed."""


class Pool:
    """Idle children, started on demand, at most `size` at work; a killed child is replaced
    at once so that the next caller finds one warm."""

    def __init__(self, size: int, module: str = CHILD) -> None:
        self._size = size
        self._module = module
        self._idle: list[_Child] = []
        self._all: set[_Child] = set()
        self._busy = 0
        self._ready = threading.Condition()

    def ask(self, job: str, args: dict[str, Any], *, seconds: float, where: str, too_slow: str) -> Any:
        """The result of `job` run on `args` in a child. The TemplateError the job raised
        (file, line and key kept); WorkerTimeout(too_slow) naming `where` if it ran past
        `seconds` (the child is killed); TemplateError if the child crashed."""
        try:
            reply = self._ask((job, args), seconds)
        except _Deadline as exc:
            raise WorkerTimeout(too_slow, file=where) from exc
        except _Gone as exc:
            raise TemplateError(f"{exc} (a crash, not the template's fault); try again", file=where) from exc
        return _result(reply)

    def _ask(self, request: tuple[str, dict[str, Any]], seconds: float) -> dict[str, Any]:
        payload = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        child = self._take()
        try:
            reply = child.ask(payload, seconds)
        except BaseException:  # _Gone, or interrupted mid-request: the child's state is unknown
            child.kill()
            self._give(child, dead=True)
            raise
        self._give(child)
        return reply

    def _take(self) -> _Child:
        with self._ready:
            while self._busy >= self._size:
                self._ready.wait()
            self._busy += 1
            if self._idle:
                return self._idle.pop()
        try:
            return self._start()
        except BaseException:
            with self._ready:
                self._busy -= 1
                self._ready.notify()
            raise

    def _start(self) -> _Child:
        child = _Child(self._module)
        with self._ready:
            self._all.add(child)
        return child

    def _give(self, child: _Child, *, dead: bool = False) -> None:
        if dead:
            with self._ready:
                self._all.discard(child)
            child = self._start()  # the replacement starts while nobody waits for it
        with self._ready:
            self._busy -= 1
            self._idle.append(child)
            self._ready.notify()

    def warm(self) -> None:
        """Start a child now, without waiting for it, if none is idle: its start-up then
        overlaps other work instead of holding up the first caller."""
        with self._ready:
            if self._idle or self._busy >= self._size:
                return
        child = self._start()
        with self._ready:
            self._idle.append(child)

    def close(self) -> None:
        """Kill every child, busy ones too (at exit: a child must not outlive us)."""
        with self._ready:
            children, self._all, self._idle = list(self._all), set(), []
        for child in children:
            child.kill()


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
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which ends us
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass
    # Replies go to a copy of stdout; anything printed goes to stderr, never into a reply.
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    stdout.write(_READY)
    stdout.flush()
    while True:
        header = stdin.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return  # the parent is gone
        job, args = pickle.loads(stdin.read(_HEADER.unpack(header)[0]))
        try:
            reply: dict[str, Any] = {"ok": jobs[job](args)}
        except TemplateError as exc:
            reply = {"template_error": {"message": exc.message, "file": exc.file, "line": exc.line,
                                        "key": exc.key, "hint": exc.hint,
                                        "slow": bool(getattr(exc, "slow", False))}}  # fmt: skip
        except Exception as exc:  # reported, and the child goes on serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        data = json.dumps(reply).encode()
        stdout.write(_HEADER.pack(len(data)) + data)
        stdout.flush()
