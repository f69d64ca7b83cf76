"""`add` copies every acceptable file and names each refused one; a file whose bytes are not its
extension's type is refused; a full disk is an error naming the path and the space needed."""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import pytest

from compendium.cli import main

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def workspace(tmp_path: Path, capsys) -> Path:
    ws = tmp_path / "ws"
    assert run(capsys, "init", str(ws))[0] == 0
    return ws


def test_add_of_a_folder_copies_every_acceptable_file_and_names_each_refused_one(workspace, tmp_path, capsys):
    src = tmp_path / "notes"
    (src / "sub").mkdir(parents=True)
    for n in range(10):
        (src / f"note{n}.md").write_text(f"# Note {n}\n\nText {n}.\n")
    (src / "sub" / "deep.txt").write_text("Deep text.\n")
    (src / "back\\slash..\\..\\x.md").write_text("# Escape\n")  # a name no documents folder holds
    (src / "report.md").write_bytes(PDF)  # PDF bytes under a Markdown name
    (src / "picture.png").write_bytes(b"\x89PNG\r\n")  # another type: left out, not refused
    (src / "sub" / "again.md").symlink_to(src / "note1.md")  # a link: left out, and said so
    code, out, err = run(capsys, "-w", str(workspace), "add", str(src))
    copied = sorted(p.relative_to(workspace / "documents").as_posix()
                    for p in (workspace / "documents").rglob("*") if p.is_file())
    assert copied == sorted([f"notes/note{n}.md" for n in range(10)] + ["notes/sub/deep.txt"])
    assert code == 2
    assert "Added 11 document(s)" in out and "1 file(s) of other types left out" in out
    assert "1 symbolic link(s) left out" in out
    assert "back\\slash..\\..\\x.md" in err and "is not a document path" in err
    assert "report.md: its content is not a .md" not in err and "report.md: its content is a PDF" in err
    assert "2 file(s) refused; the others were added" in err


def test_a_sphinx_builds_source_copies_are_left_out_and_said_so(workspace, tmp_path, capsys):
    html = tmp_path / "html"
    (html / "_sources" / "usage").mkdir(parents=True)
    (html / "usage").mkdir()
    (html / "index.html").write_text("<html><body><h1>Guide</h1><p>The guide.</p></body></html>")
    (html / "usage" / "start.html").write_text("<html><body><h1>Start</h1><p>Start here.</p></body></html>")
    (html / "_sources" / "index.rst.txt").write_text("Guide\n=====\n\nThe guide.\n")
    (html / "_sources" / "usage" / "start.rst.txt").write_text("Start\n=====\n\nStart here.\n")
    (html / "_sources" / "notes.txt").write_text("Notes.\n")
    code, out, _err = run(capsys, "-w", str(workspace), "add", str(html))
    copied = sorted(p.relative_to(workspace / "documents").as_posix()
                    for p in (workspace / "documents").rglob("*") if p.is_file())
    assert code == 0 and copied == ["html/index.html", "html/usage/start.html"]
    assert "3 source copies of a Sphinx build's pages (_sources/) left out" in out
    # a folder named _sources outside a Sphinx build is a folder like any other
    other = tmp_path / "project"
    (other / "_sources").mkdir(parents=True)
    (other / "_sources" / "readme.md").write_text("# Readme\n\nText.\n")
    assert run(capsys, "-w", str(workspace), "add", str(other))[0] == 0
    assert (workspace / "documents" / "project" / "_sources" / "readme.md").is_file()


def test_add_of_an_empty_folder_warns(workspace, tmp_path, capsys):
    (tmp_path / "empty" / ".hidden").mkdir(parents=True)
    (tmp_path / "empty" / ".hidden" / "x.md").write_text("# Hidden\n")
    code, out, err = run(capsys, "-w", str(workspace), "add", str(tmp_path / "empty"))
    assert code == 0 and "Added 0 document(s)" in out
    assert f"warning: {(tmp_path / 'empty').resolve()} holds no document to add" in err


@pytest.mark.parametrize(("name", "content", "said"), [
    ("report.md", PDF, "its content is a PDF, not a .md text file"),
    ("paper.pdf", b"# Just Markdown\n", "its content is not a .pdf file"),
    ("letter.docx", PDF, "its content is not a .docx file but a PDF"),
    ("page.html", b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "its content is a PNG image"),
    ("notes.txt", b"PK\x03\x04" + bytes(64), "its content is a zip archive"),
    ("plain.html", b"Only words here, no markup at all.\n", "no HTML tag"),
])
def test_a_file_whose_bytes_are_not_its_types_is_refused_by_add(workspace, tmp_path, capsys, name, content, said):
    (tmp_path / name).write_bytes(content)
    code, _, err = run(capsys, "-w", str(workspace), "add", str(tmp_path / name))
    assert code == 2 and said in err, err
    assert not (workspace / "documents" / name).exists()


def test_text_in_utf16_with_its_mark_is_still_text(workspace, tmp_path, capsys):
    (tmp_path / "wide.txt").write_bytes("Wide text.\n".encode("utf-16"))
    assert run(capsys, "-w", str(workspace), "add", str(tmp_path / "wide.txt"))[0] == 0


def test_a_page_with_a_stray_nul_byte_is_still_text(workspace, tmp_path, capsys):
    # Real generated manuals hold one now and then (an API page's source listing).
    page = b"<html><body><h1>CharUtils</h1><p>Operations on char primitives.</p>" + b"\x00" + b"</body></html>\n"
    (tmp_path / "CharUtils.html").write_bytes(page * 20)
    assert run(capsys, "-w", str(workspace), "add", str(tmp_path / "CharUtils.html"))[0] == 0
    assert (workspace / "documents" / "CharUtils.html").exists()


@contextlib.contextmanager
def tiny_disk(where: Path, size: str = "64k"):
    """A tmpfs of `size` mounted at `where`: a real full disk (needs root; skipped otherwise)."""
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                             capture_output=True, text=True, check=False)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs for a full disk: {mounted.stderr.strip() or 'not root'}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_add_into_a_full_disk_names_the_file_and_the_space_needed(tmp_path, capsys):
    with tiny_disk(tmp_path / "disk") as disk:
        ws = disk / "ws"
        assert run(capsys, "init", str(ws))[0] == 0
        (tmp_path / "big.txt").write_text("Many words. " * 20_000)  # 240 KB
        (tmp_path / "small.txt").write_text("A few words.\n")
        code, out, err = run(capsys, "-w", str(ws), "add", str(tmp_path / "big.txt"), str(tmp_path / "small.txt"))
    assert code == 2
    assert f"{ws / 'documents' / 'big.txt'}: no space left on the device" in err
    assert "writing it needs 240.0 KB" in err and "free there" in err
    assert "Added 1 document(s)" in out  # the small one fitted


def test_export_into_a_full_disk_names_the_file_and_the_space_needed(sample_workspace, tmp_path, capsys):
    assert run(capsys, "-w", str(sample_workspace), "compile")[0] == 0
    with tiny_disk(tmp_path / "disk") as disk:
        code, _, err = run(capsys, "-w", str(sample_workspace), "export", "--format", "site", str(disk / "site"))
    assert code == 2
    assert f"{disk / 'site'}" in err and "no space left on the device of" in err
    assert "writing it needs" in err and "free there" in err
    assert "No space left on device" not in err  # the bare system message is not all it says
