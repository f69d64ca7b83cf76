"""Long-lived child processes fed through a pipe, and a pool of them: what runs a stranger's
template or reads a stranger's document where it can cost a child, never the parent.

Requests are pickled (we trust what we send); replies are JSON (a child handles strangers'
bytes, so its words are data), each framed by its length and read under a deadline. A child
imports this package from the parent's copy without running its __init__ (which loads the
whole application), so it starts in about half the time, then runs its module as __main__,
which is what `python -m MODULE` does.
"""

from __future__ import annotations

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
from typing import Any, BinaryIO

HEADER = struct.Struct(">I")
_BOOT = (
    "import runpy, sys, types; package = types.ModuleType('compendium'); package.__path__ = [sys.argv[1]]; "
    "sys.modules['compendium'] = package; runpy.run_module(sys.argv[2], run_name='__main__')"
)


class ChildGone(Exception):
    """The child ended or was killed; the message says why (`deadline`: it ran past one)."""

    def __init__(self, message: str, *, deadline: bool = False) -> None:
        super().__init__(message)
        self.deadline = deadline


class Child:
    """One child process running `module`, and its pipes. `name` is how messages call it
    ("the document reader"); `ready` is the line the child writes once it has started."""

    def __init__(self, module: str, ready: bytes, name: str, startup_seconds: float) -> None:
        # One BLAS thread: a child never multiplies matrices, and many threads' buffers would
        # count against its memory limit on a machine with many cores.
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(Path(__file__).resolve().parent), module],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True,
        )  # fmt: skip
        self.name = name
        self.ready = False
        self.killed_on_deadline = False
        self._ready_line = ready
        self._startup_seconds = startup_seconds

    def send(self, request: Any) -> None:
        """Send one request, once the child said it is ready; ChildGone if it did not start or stopped."""
        assert self.process.stdin is not None
        if not self.ready:
            try:
                started = self.read(len(self._ready_line), time.monotonic() + self._startup_seconds)
            except ChildGone as exc:
                raise ChildGone(f"{self.name} did not start") from exc
            if started != self._ready_line:
                self.kill()
                raise ChildGone(f"{self.name} did not start")
            self.ready = True
        payload = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.process.stdin.write(HEADER.pack(len(payload)) + payload)
            self.process.stdin.flush()
        except OSError as exc:
            self.kill()
            raise ChildGone(f"{self.name} stopped") from exc

    def reply(self, deadline: float, max_bytes: int | None = None) -> dict[str, Any]:
        """The next reply, read by the monotonic `deadline`; one over `max_bytes` kills the child."""
        size = HEADER.unpack(self.read(HEADER.size, deadline))[0]
        if max_bytes is not None and size > max_bytes + 4096:
            self.kill()
            raise ChildGone(f"its reply is larger than the {max_bytes >> 20} MB limit")
        return json.loads(self.read(size, deadline))

    def read(self, count: int, deadline: float) -> bytes:
        assert self.process.stdout is not None
        fd, parts, got = self.process.stdout.fileno(), [], 0
        while got < count:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.killed_on_deadline = True
                self.kill()
                raise ChildGone("deadline", deadline=True)
            part = os.read(fd, min(count - got, 1 << 20))
            if not part:
                self.kill()
                raise ChildGone(f"{self.name} stopped")
            parts.append(part)
            got += len(part)
        return b"".join(parts)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


class ChildPool:
    """Idle children, started on demand by `start`, at most `size` at work; more callers wait
    their turn. With `replace`, a dead child's replacement starts at once, so the next caller
    finds one warm."""

    def __init__(self, size: int, start: Callable[[], Child], *, replace: bool = False) -> None:
        self._size = size
        self._start = start
        self._replace = replace
        self._idle: list[Child] = []
        self._all: set[Child] = set()
        self._busy = 0
        self._ready = threading.Condition()

    def take(self) -> Child:
        with self._ready:
            while self._busy >= self._size:
                self._ready.wait()
            self._busy += 1
            if self._idle:
                return self._idle.pop()
        try:
            return self._started()
        except BaseException:
            with self._ready:
                self._busy -= 1
                self._ready.notify()
            raise

    def give(self, child: Child, *, dead: bool = False) -> None:
        """Hand a child back; a `dead` one (its state unknown) is killed and forgotten."""
        if dead:
            child.kill()
            with self._ready:
                self._all.discard(child)
            if self._replace:
                child = self._started()  # the replacement starts while nobody waits for it
        with self._ready:
            self._busy -= 1
            if not dead or self._replace:
                self._idle.append(child)
            self._ready.notify()

    def warm(self) -> None:
        """Start a child now, without waiting for it, if none is idle: its start-up then
        overlaps other work instead of holding up the first caller."""
        with self._ready:
            if self._idle or self._busy >= self._size:
                return
        child = self._started()
        with self._ready:
            self._idle.append(child)

    def children(self) -> list[int]:
        """The process ids of the children alive now (for tests and benchmarks)."""
        with self._ready:
            return [c.process.pid for c in self._all if c.process.poll() is None]

    def close(self) -> None:
        """Kill every child, busy ones too (at exit: a child must not outlive us)."""
        with self._ready:
            children, self._all, self._idle = list(self._all), set(), []
        for child in children:
            child.kill()

    def _started(self) -> Child:
        child = self._start()
        with self._ready:
            self._all.add(child)
        return child


# ---- the child side ------------------------------------------------------------------------


def child_pipes(ready: bytes) -> tuple[BinaryIO, BinaryIO]:
    """In a child: ignore Ctrl-C (it stops the parent, which ends us), keep replies on a copy of
    stdout (anything printed goes to stderr, never into a reply), say `ready`; (stdin, replies)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    stdout.write(ready)
    stdout.flush()
    return stdin, stdout


def next_request(stdin: BinaryIO) -> Any | None:
    """The next request, or None once the parent is gone."""
    header = stdin.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    return pickle.loads(stdin.read(HEADER.unpack(header)[0]))


def write_reply(stdout: BinaryIO, data: bytes) -> None:
    stdout.write(HEADER.pack(len(data)) + data)
    stdout.flush()
