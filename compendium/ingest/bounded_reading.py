"""Reads documents in bounded child processes: a stranger's file can cost a child its memory,
CPU time or reply size, never the process that compiles (or serves).

A child is started once and fed batches of files through a pipe, so a file costs a round
trip, not a process start. Each child runs under an address-space limit (RLIMIT_AS); before
each file it sets its CPU-time limit (RLIMIT_CPU) to what it has used plus the file's share,
so a reader stuck in C code is stopped by the kernel. The parent also keeps a wall deadline
per file and kills a child past it. A zip member's declared and actual sizes are both
checked before a reader unpacks it. Replies are JSON (the child reads strangers' bytes, so
its words are data) and bounded in size. A child whose memory grew past RETIRE_RSS ends
after its reply, so memory a large file took goes back to the system.

Requests are pickled: we trust what we send. The child side is `python -m` of this module."""

from __future__ import annotations

import atexit
import dataclasses
import json
import math
import os
import signal
import struct
import time
import zipfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..child_processes import Child, ChildGone, ChildPool, child_pipes, next_request, write_reply
from ..errors import InputError
from .readers import DEFAULT_MAX_BYTES, DEFAULT_MAX_SECONDS, Block, ParsedDocument

MEMORY_LIMIT = 2 << 30  # bytes of address space a reading child may map (deeply nested reST takes 1.3 GB)
MAX_REPLY = 96 << 20  # bytes of one document's reply: its text, blocks and metadata as JSON
MAX_UNPACKED = 128_000_000  # bytes a zip file (DOCX) may unpack to, declared or actual
MAX_UPLOAD_UNPACKED = 512_000_000  # and all the zip files of one upload together
RETIRE_RSS = 256 << 20  # a child past this resident size after a file ends, giving it back
POOL_SIZE = 2  # children reading at once; more callers wait their turn
STARTUP_DEADLINE = 60.0  # importing the readers in a child; generous on a loaded machine
_MODULE = "compendium.ingest.bounded_reading"

_READY = b"compendium-document-reader ready\n"


@dataclass(frozen=True)
class ReadLimits:
    """What reading one document may cost."""

    max_bytes: int = DEFAULT_MAX_BYTES  # of the file itself
    max_seconds: float = DEFAULT_MAX_SECONDS  # of CPU time, and 1.5x that + 1 s of wall time
    memory: int = MEMORY_LIMIT  # address space of the child reading it
    max_reply: int = MAX_REPLY  # bytes of the document read, as JSON
    max_unpacked: int = MAX_UNPACKED  # of a zip file (DOCX)

    @property
    def wall_seconds(self) -> float:
        return self.max_seconds * 1.5 + 1.0


# ---- the parent side -----------------------------------------------------------------------


class ReadingPool:
    """Idle reading children, started on demand, at most `size` at work."""

    def __init__(self, size: int = POOL_SIZE) -> None:
        self._children = ChildPool(size, lambda: Child(_MODULE, _READY, "the document reader", STARTUP_DEADLINE))

    def read(self, files: list[tuple[str, Path]], root: Path | None,
             limits: ReadLimits = ReadLimits()) -> list[tuple[str, ParsedDocument | InputError]]:
        """(relative path, document or why it cannot be read) of each (path, file), in order.
        A file past a limit fails alone, the limit named; the files after it are read."""
        out: list[tuple[str, ParsedDocument | InputError]] = []
        while len(out) < len(files):
            rest = files[len(out):]
            child = self._children.take()
            healthy = False
            try:
                child.send(("read", {"files": [(rel, os.fspath(p)) for rel, p in rest],
                                     "root": None if root is None else os.fspath(root), "limits": asdict(limits)}))
                for rel, path in rest:
                    reply = child.reply(time.monotonic() + limits.wall_seconds, limits.max_reply)
                    out.append((rel, _document(reply, path)))
                    if reply.get("retire"):
                        child.kill()
                        break
                else:
                    healthy = True
            except ChildGone as gone:
                if len(out) < len(files) and child.ready:
                    rel, path = files[len(out)]
                    out.append((rel, _failure(path, child, gone, limits)))
                elif not child.ready:
                    raise InputError(f"{files[len(out)][1]}: the document reader did not start; try again") from gone
            except BaseException:
                child.kill()
                raise
            finally:
                self._children.give(child, dead=not healthy)
        return out

    def unpacked_size(self, path: Path, limits: ReadLimits = ReadLimits()) -> int:
        """What the zip file at `path` unpacks to (every member read, the declared and the
        actual sizes checked against limits.max_unpacked); InputError naming the limit."""
        child = self._children.take()
        healthy = False
        try:
            child.send(("unpacked", {"path": os.fspath(path), "limits": asdict(limits)}))
            reply = child.reply(time.monotonic() + limits.wall_seconds, 4096)
            healthy = True
        except ChildGone as gone:
            raise _failure(path, child, gone, limits) from None
        finally:
            self._children.give(child, dead=not healthy)
        if "error" in reply:
            raise InputError(str(reply["error"]), hint=reply.get("hint"))
        return int(reply["ok"])

    def children(self) -> list[int]:
        """The process ids of the children alive now (for tests and benchmarks)."""
        return self._children.children()

    def close(self) -> None:
        """Kill every child (at exit: a child must not outlive us)."""
        self._children.close()


READERS = ReadingPool()
atexit.register(READERS.close)


def _document(reply: dict[str, Any], path: Path) -> ParsedDocument | InputError:
    if "error" in reply:
        return InputError(str(reply["error"]), hint=reply.get("hint"))
    doc = reply["ok"]
    paths = [tuple(str(h) for h in p) for p in doc["paths"]]
    if doc["fields"] != _BLOCK_FIELDS:
        return InputError(f"{path}: the document reader is of another version; try again")
    blocks = []
    for values in doc["blocks"]:
        values[_PATH_AT] = paths[values[_PATH_AT]]
        values[_ROWS_AT] = tuple(tuple(row) for row in values[_ROWS_AT]) if values[_ROWS_AT] else ()
        blocks.append(Block(*values))
    return ParsedDocument(str(doc["text"]), str(doc["title"]), str(doc["format"]), blocks,
                          dict(doc["metadata"]), [str(w) for w in doc["warnings"]])  # fmt: skip


def _failure(path: Path, child: Child, gone: ChildGone, limits: ReadLimits) -> InputError:
    """Why the file a child was reading when it ended cannot be read, the limit named."""
    code = child.process.returncode
    if child.killed_on_deadline:
        return InputError(f"{path}: reading took longer than the {limits.max_seconds:g} s limit",
                          hint="split the file into smaller ones or raise the time limit")
    if code == -signal.SIGXCPU:
        return InputError(f"{path}: reading took more than the {limits.max_seconds:g} s CPU time limit",
                          hint="split the file into smaller ones or raise the time limit")
    if str(gone).startswith("its reply"):
        return InputError(f"{path}: the document read is larger than the {limits.max_reply >> 20} MB output limit",
                          hint="split it into smaller files")
    return InputError(
        f"{path}: the reader stopped ({f'signal {-code}' if code and code < 0 else f'exit code {code}'}); "
        f"reading it may need more than the {limits.memory >> 20} MB memory limit",
        hint="check that the file is valid, or split it into smaller files",
    )


# ---- the child side ------------------------------------------------------------------------


# A block goes as the list of its fields' values, in this order.
_BLOCK_FIELDS = [f.name for f in dataclasses.fields(Block)]
_PATH_AT = _BLOCK_FIELDS.index("heading_path")
_ROWS_AT = _BLOCK_FIELDS.index("rows")


def _encode(doc: ParsedDocument) -> dict[str, Any]:
    paths: dict[tuple[str, ...], int] = {}
    blocks = []
    for b in doc.blocks:
        values = [getattr(b, name) for name in _BLOCK_FIELDS]
        values[_PATH_AT] = paths.setdefault(b.heading_path, len(paths))  # a path is sent once
        blocks.append(values)
    return {"text": doc.text, "title": doc.title, "format": doc.format, "paths": list(paths),
            "fields": _BLOCK_FIELDS, "blocks": blocks, "metadata": doc.metadata, "warnings": doc.warnings}  # fmt: skip


def check_zip(path: Path, limit: int) -> int:
    """What the zip file unpacks to: the members' declared sizes, then what their data actually
    inflates to (a header may lie; the data is inflated here, whatever size it declares), both
    counted against `limit`; InputError past it."""
    too_big = InputError(f"{path}: unpacks to more than the {limit / 1e6:.0f} MB limit",
                         hint="a document this large unpacked is likely a zip bomb; re-save it or split it")
    try:
        with zipfile.ZipFile(path) as archive, open(path, "rb") as raw:
            members = archive.infolist()
            if sum(m.file_size for m in members) > limit:
                raise too_big
            total = 0
            for member in members:
                total += _inflated_size(raw, member, limit - total)
                if total > limit:
                    raise too_big
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, ValueError, EOFError,
            RuntimeError, OSError, zlib.error) as exc:  # fmt: skip
        raise InputError(f"{path}: corrupt or unreadable zip file: {exc}", hint="re-save it") from exc
    return total


def _inflated_size(raw: Any, member: zipfile.ZipInfo, room: int) -> int:
    """Bytes the member's data inflates to, counted up to `room` + 1 (then it stops)."""
    raw.seek(member.header_offset)
    header = raw.read(30)
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"no local header for {member.filename!r}")
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    raw.seek(member.header_offset + 30 + name_length + extra_length)
    left = member.compress_size
    if member.compress_type == zipfile.ZIP_STORED:
        return left
    if member.compress_type != zipfile.ZIP_DEFLATED:
        raise NotImplementedError(f"compression method {member.compress_type} of {member.filename!r}")
    inflate, size = zlib.decompressobj(-15), 0
    while left > 0 and size <= room and not inflate.eof:
        data = raw.read(min(left, 1 << 16))
        if not data:
            break
        left -= len(data)
        while data and size <= room:
            size += len(inflate.decompress(data, 1 << 20))
            data = inflate.unconsumed_tail
    return size


def _set_cpu(seconds: float) -> None:
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(used.ru_utime + used.ru_stime + seconds) + 1
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _resident() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _read_one(rel: str, path: Path, root: Path | None, limits: ReadLimits) -> dict[str, Any]:
    from ..workspace import SNIFF_BYTES, sniff
    from .readers import read_document

    try:
        _set_cpu(limits.max_seconds)
        with open(path, "rb") as handle:
            why = sniff(path.name, handle.read(SNIFF_BYTES))
        if why is not None:
            raise InputError(f"{path}: {why}", hint="rename it after its content, or convert it")
        if path.suffix.lower() == ".docx":
            check_zip(path, limits.max_unpacked)
        doc = read_document(path, max_bytes=limits.max_bytes, max_seconds=limits.max_seconds, root=root)
        return {"ok": _encode(doc)}
    except MemoryError:
        return _out_of_memory(path, limits)
    except InputError as exc:
        if isinstance(exc.__cause__, MemoryError):
            return _out_of_memory(path, limits)
        return {"error": exc.message, "hint": exc.hint}


def _out_of_memory(path: Path, limits: ReadLimits) -> dict[str, Any]:
    return {"error": f"{path}: reading it needs more than the {limits.memory >> 20} MB memory limit",
            "hint": "split it into smaller files", "retire": True}


def _unpacked(args: dict[str, Any]) -> dict[str, Any]:
    limits = ReadLimits(**args["limits"])
    try:
        _set_cpu(limits.max_seconds)
        return {"ok": check_zip(Path(args["path"]), limits.max_unpacked)}
    except InputError as exc:
        return {"error": exc.message, "hint": exc.hint}
    except MemoryError:
        return _out_of_memory(Path(args["path"]), limits)


def _serve() -> None:
    """Answer requests on stdin until the parent goes."""
    import resource

    limited = False
    stdin, stdout = child_pipes(_READY)

    def send(reply: dict[str, Any], max_reply: int) -> bool:
        """Write one reply; True when this child ends after it (the reply says so)."""
        if _resident() > RETIRE_RSS:
            reply["retire"] = True
        data = json.dumps(reply, ensure_ascii=False).encode("utf-8", "surrogatepass")
        if len(data) > max_reply:
            data = json.dumps({"error": f"{reply.get('path', 'the document')}: the document read is larger than "
                                        f"the {max_reply >> 20} MB output limit",
                               "hint": "split it into smaller files", "retire": True}).encode()
            reply["retire"] = True
        write_reply(stdout, data)
        return bool(reply.get("retire"))

    while (request := next_request(stdin)) is not None:
        job, args = request
        limits = ReadLimits(**args["limits"])
        if not limited:  # once, before the first stranger's byte
            try:
                resource.setrlimit(resource.RLIMIT_AS, (limits.memory, limits.memory))
            except (ValueError, OSError):
                pass
            limited = True
        if job == "unpacked":
            if send(_unpacked(args), 4096):
                return
            continue
        root = None if args["root"] is None else Path(args["root"])
        for rel, path in args["files"]:
            reply = _read_one(rel, Path(path), root, limits)
            reply["path"] = path
            if send(reply, limits.max_reply):
                return


if __name__ == "__main__":
    _serve()
