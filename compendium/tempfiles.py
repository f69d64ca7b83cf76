"""Our temp files: named so they are recognised, and swept by the next run once their writer
is gone, never touching a file of the user's.

A temp file is `.compendium-tmp-PID@HOST.XXXXXXXX` beside the file it becomes. A killed
`add`, export or upload leaves it behind; the next add, export or compile removes it when
its process no longer runs on this host (or, written on another host, when it has not been
written to for STALE_SECONDS). The names earlier versions gave their temp files, exactly as
mkstemp made them, are swept once that old too: in documents/ `.adding-XXXXXXXX` and
`.upload-XXXXXXXX` (DOCUMENTS); beside an exported file NAME, `.NAME.XXXXXXXX.tmp`
(earlier_exports: only for names an export writes, as other tools name their temp files so).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

from .errors import InputError
from .processes import process_alive, this_host

PREFIX = ".compendium-tmp-"
STALE_SECONDS = 15 * 60
_RANDOM = r"[a-z0-9_]{8}"  # what mkstemp appends
_OURS = re.compile(rf"^{re.escape(PREFIX)}(\d+)@(.+)\.{_RANDOM}$")
DOCUMENTS = (re.compile(rf"^\.adding-{_RANDOM}$"), re.compile(rf"^\.upload-{_RANDOM}$"))


def earlier_exports(names: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    """The temp names earlier versions gave files called `names` while exporting them."""
    plain = sorted({n for n in names if n})
    if not plain:
        return ()
    return (re.compile(rf"^\.(?:{'|'.join(map(re.escape, plain))})\.{_RANDOM}\.tmp$"),)


def temp_file(folder: Path) -> tuple[int, Path]:
    """(fd, path) of a new temp file in `folder`, named as ours."""
    fd, name = tempfile.mkstemp(dir=folder, prefix=f"{PREFIX}{os.getpid()}@{this_host()}.")
    return fd, Path(name)


def is_debris(path: Path, now: float | None = None, earlier: tuple[re.Pattern[str], ...] = ()) -> bool:
    """Whether `path` is a temp file of ours (or named as `earlier` ones were) whose writer is gone."""
    name = path.name
    ours = _OURS.match(name)
    if ours is None and not any(p.match(name) for p in earlier):
        return False
    try:
        stat = path.lstat()
    except OSError:
        return False
    if not path.is_file() or path.is_symlink():
        return False
    if ours is not None and ours.group(2) == this_host():
        return not process_alive(int(ours.group(1)))
    now = time.time() if now is None else now
    return now - stat.st_mtime > STALE_SECONDS


def sweep(
    folder: Path, *, recursive: bool = True, earlier: tuple[re.Pattern[str], ...] = ()
) -> list[Path]:
    """Remove the debris in `folder` (and below, without following symlinks); returns it."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    swept: list[Path] = []
    now = time.time()
    for current, dirs, files in os.walk(folder):
        if not recursive:
            dirs[:] = []
        for name in files:
            if not name.startswith("."):  # ours are hidden: most files need no Path at all
                continue
            path = Path(current) / name
            if is_debris(path, now, earlier):
                try:
                    path.unlink()
                except FileNotFoundError:
                    continue  # its writer finished (renamed it) or another sweep took it
                swept.append(path)
    return swept


def disk_full(path: Path, needed: int, exc: OSError) -> OSError | InputError:
    """The error to raise for `exc`, met writing `needed` bytes to `path`: when the disk (or
    the user's quota) is full, an InputError naming the path, the space the write needs and
    the space free there; any other error as it is."""
    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return exc
    folder = Path(path).parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        free = 0
    return InputError(
        f"{path}: no space left on the device of {folder}: writing it needs {_size(needed)}, "
        f"{_size(free)} free there",
        hint=f"free at least {_size(max(needed - free, 0) or needed)} there, or choose another folder",
    )


def _size(count: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"
