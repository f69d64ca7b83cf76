"""An export folder: atomic file writes, and removal of files a previous export wrote but this one did not."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NoReturn

from ..errors import InputError
from ..tempfiles import disk_full, earlier_exports, sweep, temp_file

MANIFEST = ".compendium-export.json"


class ExportFolder:
    """Writes files under `root` and remembers them in a manifest.

    On `finish`, files listed by the previous export's manifest and not written this time are
    deleted (a page deleted from the wiki must disappear from the export), while files the user
    added themselves (an .obsidian folder, notes) are never touched.
    """

    def __init__(self, root: Path):
        if root.exists() and not root.is_dir():
            raise InputError(f"{root}: exists and is not a folder", field="out")
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        # Temp files of a killed export: ours, and those earlier versions named after the files.
        names = [Path(f).name for f in self._previous()] + [MANIFEST]
        sweep(root, earlier=earlier_exports(names))
        self.written: list[str] = []

    def write(self, relative: str, content: str | bytes) -> Path:
        path = self.root / relative
        data = content.encode("utf-8") if isinstance(content, str) else content
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            _raise_full(path, len(data), exc)
        if not _same_bytes(path, data):  # an unchanged file keeps its mtime: sync tools skip it
            write_atomic(path, data)
        self.written.append(relative)
        return path

    def _previous(self) -> list[str]:
        """The files the previous export wrote, from its manifest."""
        try:
            files = json.loads((self.root / MANIFEST).read_text(encoding="utf-8")).get("files", [])
        except (OSError, ValueError, AttributeError):
            return []  # none yet; a damaged one only means stale files may remain
        return [f for f in files if isinstance(f, str)] if isinstance(files, list) else []

    def finish(self) -> int:
        """Remove stale files of the previous export, record this one; returns files written."""
        manifest = self.root / MANIFEST
        previous = self._previous()
        current = set(self.written)
        root = self.root.resolve()
        for relative in previous:
            if not isinstance(relative, str) or relative in current:
                continue
            stale = (self.root / relative).resolve()
            if root in stale.parents and stale.is_file():  # never outside the export folder
                stale.unlink()
        write_atomic(manifest, json.dumps({"files": sorted(current)}, indent=1).encode("utf-8"))
        return len(current)


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        if path.stat().st_size != len(data):
            return False
        return path.read_bytes() == data
    except OSError:
        return False


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename: readers never see half a file. A
    full disk is an InputError naming the file, the space it needs and the space free."""
    try:
        fd, tmp = temp_file(path.parent)
    except OSError as exc:
        _raise_full(path, len(data), exc)
    try:
        # mkstemp makes the file private (0600); an export is published, so it gets the mode any
        # new file would get under the umask (0644 under 022), and a web server can read it.
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        _raise_full(path, len(data), exc)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _raise_full(path: Path, needed: int, exc: OSError) -> NoReturn:
    error = disk_full(path, needed, exc)
    if error is exc:
        raise exc
    raise error from exc


def current_umask() -> int:
    """The process umask, read without changing it where Linux shows it (no window in which
    another thread would create files under a wrong mask)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
