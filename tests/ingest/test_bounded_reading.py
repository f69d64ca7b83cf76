"""Documents are read in bounded child processes: a file past a limit fails alone, the limit
named, and the reading process's own memory stays where it was."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pytest

from compendium.errors import InputError
from compendium.ingest.bounded_reading import ReadingPool, ReadLimits, check_zip

DOCX_TYPES = b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'


def _resident() -> int:
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096


def bomb(path: Path, unpacked: int, *, lie: bool = False) -> None:
    """A zip whose one member unpacks to `unpacked` zero bytes; with `lie`, its headers declare
    1 KB instead."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", DOCX_TYPES)
        with archive.open("word/document.xml", "w", force_zip64=False) as member:
            block = b"\0" * (1 << 20)
            for _ in range(unpacked >> 20):
                member.write(block)
    data = bytearray(buffer.getvalue())
    if lie:
        # Patch the declared size in the member's local header and its central directory entry.
        name = b"word/document.xml"
        for signature, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
            at = 0
            while (at := data.find(signature, at)) >= 0:
                if data[at + name_at:at + name_at + len(name)] == name:
                    data[at + size_at:at + size_at + 4] = struct.pack("<I", 1024)
                at += 4
    path.write_bytes(bytes(data))


def test_a_zip_declaring_more_than_the_limit_is_refused_naming_it(tmp_path):
    path = tmp_path / "bomb.docx"
    bomb(path, 40 << 20)
    with pytest.raises(InputError, match="unpacks to more than the 10 MB limit"):
        check_zip(path, 10_000_000)


def test_a_zip_member_lying_about_its_size_is_refused_on_what_it_unpacks_to(tmp_path):
    path = tmp_path / "liar.docx"
    bomb(path, 40 << 20, lie=True)
    with zipfile.ZipFile(path) as archive:
        assert sum(m.file_size for m in archive.infolist()) < 10_000  # the declared sizes pass
    with pytest.raises(InputError, match="unpacks to more than the 10 MB limit"):
        check_zip(path, 10_000_000)


def test_a_docx_bomb_fails_alone_and_the_next_file_is_read(tmp_path):
    bomb(tmp_path / "bomb.docx", 40 << 20, lie=True)
    (tmp_path / "after.md").write_text("# After\n\nRead all the same.\n")
    pool = ReadingPool(1)
    try:
        out = pool.read([("bomb.docx", tmp_path / "bomb.docx"), ("after.md", tmp_path / "after.md")], tmp_path,
                        ReadLimits(max_unpacked=10_000_000))
    finally:
        pool.close()
    (_, refused), (_, after) = out
    assert isinstance(refused, InputError) and "unpacks to more than the 10 MB limit" in str(refused)
    assert not isinstance(after, InputError) and after.title == "After"


def test_a_file_needing_more_memory_than_the_limit_fails_alone_and_costs_this_process_nothing(tmp_path):
    # docutils needs about 1.3 GB for this list nested 2,000 deep.
    (tmp_path / "deep.rst").write_text("Deep\n====\n\n" + "".join(" " * i + "- x\n\n" for i in range(0, 4000, 2)))
    (tmp_path / "after.md").write_text("# After\n\nRead all the same.\n")
    pool = ReadingPool(1)
    before = _resident()
    try:
        out = pool.read([("deep.rst", tmp_path / "deep.rst"), ("after.md", tmp_path / "after.md")], tmp_path,
                        ReadLimits(memory=400 << 20))
        children = pool.children()
    finally:
        pool.close()
    grown = _resident() - before
    (_, refused), (_, after) = out
    assert isinstance(refused, InputError) and "more than the 400 MB memory limit" in str(refused)
    assert not isinstance(after, InputError) and after.title == "After"
    assert grown < 50 << 20, f"this process grew by {grown >> 20} MB"
    assert len(children) == 1  # the child that ran out of memory ended; a new one read the rest


def test_a_document_whose_text_is_past_the_output_limit_fails_alone(tmp_path):
    (tmp_path / "big.txt").write_text("Words and words.\n\n" * 150_000)  # 2.7 MB of text
    (tmp_path / "small.txt").write_text("A few words.\n")
    pool = ReadingPool(1)
    try:
        out = pool.read([("big.txt", tmp_path / "big.txt"), ("small.txt", tmp_path / "small.txt")], tmp_path,
                        ReadLimits(max_reply=1 << 20))
    finally:
        pool.close()
    (_, refused), (_, small) = out
    assert isinstance(refused, InputError) and "larger than the 1 MB output limit" in str(refused)
    assert not isinstance(small, InputError) and "A few words." in small.text


def test_documents_read_in_a_child_are_those_read_here(tmp_path):
    from compendium.ingest.readers import read_document

    (tmp_path / "a.md").write_text("# A\n\n- one\n- two\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n```py\ncode()\n```\n")
    (tmp_path / "b.html").write_text("<html><body><h1>B</h1><p>Para é ü.</p><dl><dt>t</dt><dd>d</dd></dl></body></html>")
    pool = ReadingPool(1)
    try:
        out = pool.read([("a.md", tmp_path / "a.md"), ("b.html", tmp_path / "b.html")], tmp_path)
    finally:
        pool.close()
    for (rel, doc) in out:
        here = read_document(tmp_path / rel, root=tmp_path)
        assert (doc.text, doc.blocks, doc.title, doc.format, doc.metadata) == (
            here.text, here.blocks, here.title, here.format, here.metadata)
