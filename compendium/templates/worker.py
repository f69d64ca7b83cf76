"""Runs a stranger's template work (validation, prompt renders) in child processes that are
killed past a deadline and replaced, since a thread cannot be stopped.

The sandbox's own limits stop almost every costly prompt with a clear error; the deadline
is for what they cannot interrupt (one C-level operation that runs for seconds). Children
are long-lived and fed through a pipe, so a render costs a round trip, not a process start.
Requests are pickled (we trust what we send); replies are JSON (a child runs strangers'
templates, so its words are data)."""

from __future__ import annotations

import asyncio
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
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..errors import TemplateError
from ..fingerprint import fingerprint
from .loader import MAX_YAML_CHARS, PROMPT_KEYS, read_yaml
from .schema import Template

VALIDATE_DEADLINE = 1.5  # wall seconds to check a template (loader: 1.0 s of CPU for its prompts)
RENDER_DEADLINE = 2.0  # wall seconds for one prompt (sandbox: 0.25 s of CPU)
STARTUP_DEADLINE = 60.0  # importing Compendium in a child; generous on a loaded machine
MEMORY_LIMIT = 2 << 30  # bytes of address space a child may map
POOL_SIZE = 2  # children working at once; more callers wait their turn

_HEADER = struct.Struct(">I")
# A child imports this package from the parent's copy, without running its __init__ (which
# loads the whole application): it starts in about half the time.
_BOOT = (
    "import sys, types; package = types.ModuleType('compendium'); package.__path__ = [sys.argv[1]]; "
    "sys.modules['compendium'] = package; from compendium.templates.worker import _serve; _serve()"
)
_READY = b"compendium-template-worker ready\n"


class WorkerTimeout(TemplateError):
    """The child ran past its deadline and was killed."""


# ---- the parent side -----------------------------------------------------------------------


class _Child:
    """One child process and its pipes."""

    def __init__(self) -> None:
        # One BLAS thread: a child never multiplies matrices, and many threads' buffers would
        # count against its memory limit on a machine with many cores.
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", _BOOT, str(Path(__file__).resolve().parents[1])],
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
                raise _Gone("deadline")
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
    pass


class _Pool:
    """Idle children, started on demand, at most `size` at work; a killed child is replaced
    at once so that the next caller finds one warm."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._idle: list[_Child] = []
        self._all: set[_Child] = set()
        self._busy = 0
        self._ready = threading.Condition()

    def ask(self, request: tuple[str, dict[str, Any]], seconds: float) -> dict[str, Any]:
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
        child = _Child()
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
_CHECKS = _Pool(POOL_SIZE)
_RENDERS = _Pool(POOL_SIZE)
atexit.register(_CHECKS.close)
atexit.register(_RENDERS.close)
_IN_CHILD = False  # set in the child: its own work runs in-process

# Templates that passed, by their text: a stored template is resolved at every compile and
# search, and must not queue behind another tenant's slow check each time. Template is frozen.
_CHECKED: OrderedDict[str, Template] = OrderedDict()
_CHECKED_SIZE = 256
_CHECKED_LOCK = threading.Lock()


def warm() -> None:
    """Start a checking child now, without waiting for it (a server at start-up), so that the
    first template a tenant sends does not wait for a worker to start."""
    _CHECKS.warm()


def parse_untrusted(text: str, *, source: str, default_name: str | None = None) -> Template:
    """loader.parse_template in a child with a deadline; TemplateError if the template is
    invalid or takes longer than VALIDATE_DEADLINE to check."""
    if _IN_CHILD:
        from .loader import parse_template

        return parse_template(text, source=source, default_name=default_name)
    if len(text) > MAX_YAML_CHARS:  # refused here: not worth sending to a child
        read_yaml(text, source=source)
    key = fingerprint(text, source, default_name)
    with _CHECKED_LOCK:
        if key in _CHECKED:
            _CHECKED.move_to_end(key)
            return _CHECKED[key]
    args = {"text": text, "source": source, "default_name": default_name}
    try:
        reply = _CHECKS.ask(("parse", args), VALIDATE_DEADLINE)
    except _Gone as exc:
        _unless_deadline(exc, source)
        raise WorkerTimeout(
            f"checking the template took longer than {VALIDATE_DEADLINE:g} s and was stopped; "
            "simplify its prompts", file=source,
        ) from exc  # fmt: skip
    template = Template.model_validate(_result(reply))
    if _has_own_prompts(template):
        _RENDERS.warm()  # its prompts will render in a worker: start one now
    with _CHECKED_LOCK:
        _CHECKED[key] = template
        while len(_CHECKED) > _CHECKED_SIZE:
            _CHECKED.popitem(last=False)
    return template


def _has_own_prompts(template: Template) -> bool:
    for key in PROMPT_KEYS:
        value: Any = template
        for part in key:
            value = getattr(value, str(part))
        if isinstance(value, str) and value.strip():
            return True
    return False


async def parse_untrusted_async(text: str, *, source: str, default_name: str | None = None) -> Template:
    """parse_untrusted() off the event loop: other requests go on while a template is checked.
    It waits in a daemon thread of its own, not the loop's shared executor, so a flood of
    slow checks neither starves other work nor holds up the process at exit."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Template] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if not done.done():
            done.set_exception(error) if error is not None else done.set_result(result)

    def check() -> None:
        try:
            result, error = parse_untrusted(text, source=source, default_name=default_name), None
        except BaseException as exc:  # handed to the awaiting coroutine
            result, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:
            pass  # the loop closed meanwhile: nobody is waiting

    threading.Thread(target=check, name="template-check", daemon=True).start()
    return await done


def render_untrusted(source: str, *, where: str, variables: dict[str, Any]) -> str:
    """render.render_here in a child with RENDER_DEADLINE; TemplateError on any failure."""
    try:
        reply = _RENDERS.ask(("render", {"source": source, "where": where, "variables": variables}),
                             RENDER_DEADLINE)  # fmt: skip
    except _Gone as exc:
        _unless_deadline(exc, where)
        raise WorkerTimeout(
            f"the prompt took longer than {RENDER_DEADLINE:g} s to render and was stopped", file=where
        ) from exc
    return str(_result(reply))


def _unless_deadline(gone: _Gone, where: str) -> None:
    if str(gone) != "deadline":
        raise TemplateError(f"{gone} (a crash, not the template's fault); try again", file=where) from gone


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


def _serve() -> None:
    global _IN_CHILD
    _IN_CHILD = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which ends us
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass
    from .loader import parse_template
    from .render import render_here
    from .sandbox import RenderLimit

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
        op, args = pickle.loads(stdin.read(_HEADER.unpack(header)[0]))
        try:
            if op == "parse":
                result: Any = parse_template(**args).model_dump(mode="json")
            else:
                result = render_here(args["source"], where=args["where"], **args["variables"])
            reply: dict[str, Any] = {"ok": result}
        except TemplateError as exc:
            reply = {"template_error": {"message": exc.message, "file": exc.file, "line": exc.line,
                                        "key": exc.key, "hint": exc.hint,
                                        "slow": isinstance(exc.__cause__, RenderLimit)}}  # fmt: skip
        except MemoryError:
            reply = {"template_error": {"message": "the template needs more memory than a "
                                        f"template may use ({MEMORY_LIMIT >> 20} MB)",
                                        "file": args.get("source") if op == "parse" else args.get("where"),
                                        "line": None, "key": None, "hint": None}}  # fmt: skip
        except Exception as exc:  # reported, and the child goes on serving
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        data = json.dumps(reply).encode()
        stdout.write(_HEADER.pack(len(data)) + data)
        stdout.flush()

