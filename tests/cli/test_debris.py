"""Temp files a killed add, export or upload leaves are swept by the next add, export or
compile; a live writer's temp file and the user's own files are never touched."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compendium.cli import main
from compendium.tempfiles import PREFIX, STALE_SECONDS, temp_file
from compendium.workspace import init_workspace
from tests.support.workspace_fixtures import REPO, SAMPLE_CORPUS

BIG = 8 * 1024 * 1024  # bytes a killed writer had written


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    for name in ("COMPENDIUM_LLM_BASE_URL", "COMPENDIUM_EMBED_BASE_URL", "COMPENDIUM_STORE"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = init_workspace(tmp_path / "ws")
    shutil.copytree(SAMPLE_CORPUS / "storage", ws / "documents" / "storage")
    return ws


def killed_writer(folder: Path) -> Path:
    """A temp file of ours whose process was SIGKILLed in the middle of writing it."""
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from compendium.tempfiles import temp_file\n"
        f"fd, path = temp_file(Path({str(folder)!r}))\n"
        f"os.write(fd, b'x' * {BIG})\n"
        "print(path, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stdout=subprocess.PIPE, text=True)
    path = Path(proc.stdout.readline().strip())  # type: ignore[union-attr]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    assert path.name.startswith(PREFIX) and path.stat().st_size == BIG
    return path


def aged(path: Path, content: bytes = b"half a file") -> Path:
    """A file last written longer ago than any live writer stays silent."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    old = time.time() - STALE_SECONDS - 60
    os.utime(path, (old, old))
    return path


def users_files(folder: Path) -> list[Path]:
    """Files a user may keep there, some named much like temp files; all must survive."""
    files = [
        folder / "draft.tmp",
        folder / ".adding-notes",  # not the shape mkstemp gives
        folder / f"{PREFIX}readme.md"[1:],  # not hidden
        folder / ".obsidian" / "workspace.json",
        folder / ".other-tool.abcd1234.tmp",  # another tool's atomic write, not an export name
    ]
    return [aged(f, b"mine") for f in files]


def live_writer(folder: Path) -> Path:
    fd, path = temp_file(folder)  # this process is alive: it may still be writing
    os.close(fd)
    return path


def test_a_killed_add_leaves_nothing_after_the_next_add(workspace: Path, tmp_path: Path):
    docs = workspace / "documents" / "storage"
    debris = [killed_writer(docs), aged(docs / ".adding-k3j9x0qz"), aged(workspace / "documents" / ".upload-a1b2c3d4")]
    young_upload = workspace / "documents" / ".upload-zz99yy88"
    young_upload.write_bytes(b"an upload still arriving")
    live = live_writer(docs)
    mine = users_files(docs)
    new = tmp_path / "new.md"
    new.write_text("# New\n\nA new note.\n", encoding="utf-8")

    assert main(["-w", str(workspace), "add", str(new)]) == 0

    assert not any(p.exists() for p in debris)
    assert all(p.exists() for p in [*mine, live, young_upload])
    assert (workspace / "documents" / "new.md").read_text(encoding="utf-8").startswith("# New")
    assert not [p for p in (workspace / "documents").rglob(f"{PREFIX}*") if p != live]  # the add's own are gone


def test_a_compile_sweeps_what_a_killed_add_left(workspace: Path):
    debris = [killed_writer(workspace / "documents"), aged(workspace / "documents" / "storage" / ".adding-00aa11bb")]
    mine = users_files(workspace / "documents")
    assert main(["-w", str(workspace), "compile", "--plain"]) == 0
    assert not any(p.exists() for p in debris)
    assert all(p.exists() for p in mine)


@pytest.mark.parametrize("fmt", ["site", "vault"])
def test_a_killed_export_leaves_nothing_after_the_next_export(workspace: Path, tmp_path: Path, fmt: str):
    assert main(["-w", str(workspace), "compile", "--plain"]) == 0
    out = tmp_path / fmt
    assert main(["-w", str(workspace), "export", "--format", fmt, str(out)]) == 0
    exported = sorted(p for p in out.rglob("*") if p.is_file())
    written = next(p for p in exported if p.suffix in (".html", ".md") and p.name != "index.md")
    debris = [
        killed_writer(out),
        killed_writer(written.parent),
        aged(written.parent / f".{written.name}.q8w7e6r5.tmp"),  # as earlier versions named it
    ]
    live = live_writer(out)
    mine = users_files(out)

    assert main(["-w", str(workspace), "export", "--format", fmt, str(out)]) == 0

    assert not any(p.exists() for p in debris)
    assert all(p.exists() for p in [*mine, live])
    assert sorted(p for p in out.rglob("*") if p.is_file()) == sorted([*exported, *mine, live])


def test_a_killed_single_file_export_is_swept_beside_its_file_only(workspace: Path, tmp_path: Path):
    assert main(["-w", str(workspace), "compile", "--plain"]) == 0
    out = tmp_path / "out"
    out.mkdir()
    debris = [killed_writer(out), aged(out / ".compendium.json.h5j6k7l8.tmp")]
    mine = [aged(out / ".notes.txt.h5j6k7l8.tmp", b"mine"), aged(out / "data.tmp", b"mine")]
    assert main(["-w", str(workspace), "export", "--format", "json", str(out)]) == 0
    assert (out / "compendium.json").is_file()
    assert not any(p.exists() for p in debris)
    assert all(p.exists() for p in mine)
