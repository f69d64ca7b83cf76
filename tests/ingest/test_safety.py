"""Strangers' files cost one document at most: symlinks out, huge files, deep nesting, slow reads."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from compendium.errors import InputError
from compendium.ingest.readers import read_document
from compendium.phases import ingest
from compendium.pipeline.context import CompileContext
from compendium.pipeline.events import ListSink, Message
from compendium.storage.factory import open_store
from compendium.storage.records import Chunk, Document
from compendium.templates.schema import Template

TEMPLATE = Template(name="test", chunking={"max_tokens": 200, "overlap_tokens": 0})
DEPTH = 10_000


@pytest.fixture
async def store(tmp_path):
    s = await open_store(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


async def ingest_folder(store, root: Path, **bounds):
    sink = ListSink()
    ctx = CompileContext(store=store, engine=None, embedder=None, template=TEMPLATE, events=sink, documents_dir=root)
    result = await ingest.run(TEMPLATE, ctx, **bounds)
    warnings = [e.text for e in sink.events if isinstance(e, Message) and e.level == "warning"]
    stored = {d.path async for d in store.scan(Document)}
    return result, warnings, stored


def documents(tmp_path: Path) -> Path:
    root = tmp_path / "documents"
    root.mkdir()
    (root / "ok.md").write_text("# Fine\n\nThis document is read.\n")
    return root


@pytest.mark.skipif(not Path("/etc/passwd").exists(), reason="needs /etc/passwd")
async def test_a_symlink_to_etc_passwd_is_never_read(store, tmp_path):
    root = documents(tmp_path)
    (root / "passwd.txt").symlink_to("/etc/passwd")
    (root / "sub").mkdir()
    (root / "sub" / "inside.md").symlink_to(root / "ok.md")  # a link that stays inside is fine
    result, warnings, stored = await ingest_folder(store, root)
    assert stored == {"ok.md", "sub/inside.md"}
    assert any("passwd.txt" in w and "/etc/passwd" in w and "outside the documents folder" in w for w in warnings)
    assert result.failed == 1 and result.items == 3
    assert not [c async for c in store.scan(Chunk) if "root:" in c.text]
    with pytest.raises(InputError, match=r"passwd\.txt.*outside the documents folder"):
        read_document(root / "passwd.txt", root=root)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
async def test_a_named_pipe_among_the_documents_is_skipped_not_waited_on(store, tmp_path):
    root = documents(tmp_path)
    os.mkfifo(root / "pipe.md")  # opening it would wait for a writer that never comes
    (root / "to-pipe.md").symlink_to(root / "pipe.md")
    (root / "gone.md").symlink_to(root / "missing.md")  # a dangling link is still reported when read
    result, warnings, stored = await asyncio.wait_for(ingest_folder(store, root), timeout=30)
    assert stored == {"ok.md"}
    for name in ("pipe.md", "to-pipe.md"):
        assert any(name in w and "not a regular file" in w for w in warnings)
    assert any("gone.md" in w and "cannot be read" in w for w in warnings)
    assert result.failed == 3


async def test_a_200_mb_html_file_fails_alone_on_the_size_bound(store, tmp_path):
    root = documents(tmp_path)
    big = root / "huge.html"
    block = ("<p>" + "word " * 200 + "</p>\n").encode()
    with big.open("wb") as handle:  # 200 MB, written in bounded pieces
        handle.write(b"<html><body><h1>Huge</h1>")
        piece = block * ((1 << 20) // len(block))
        while handle.tell() < 200 * 10**6:
            handle.write(piece)
    assert big.stat().st_size >= 200 * 10**6
    result, warnings, stored = await ingest_folder(store, root)
    assert stored == {"ok.md"}
    assert result.failed == 1
    assert any("huge.html" in w and "over the" in w and "MB limit" in w for w in warnings)


def test_html_10000_levels_deep_is_read_whole(tmp_path):
    page = tmp_path / "deep.html"
    page.write_text(
        "<html><body><h1>Deep</h1>" + "<div>" * DEPTH + "<p>At the bottom.</p>" + "</div>" * DEPTH
        + "<h2>After</h2><p>Still read.</p>" + "<ul><li>level" * DEPTH + "</li></ul>" * DEPTH + "</body></html>"
    )
    doc = read_document(page)
    blocks = [(b.kind, b.heading_path, doc.text[b.start : b.end]) for b in doc.blocks]
    assert blocks[:4] == [
        ("heading", ("Deep",), "Deep"),
        ("paragraph", ("Deep",), "At the bottom."),
        ("heading", ("Deep", "After"), "After"),
        ("paragraph", ("Deep", "After"), "Still read."),
    ]
    items = [b for b in doc.blocks if b.kind == "item"]
    assert len(items) == DEPTH and items[-1].level == DEPTH


async def test_deeply_nested_rest_and_markdown_cost_only_themselves(store, tmp_path):
    root = documents(tmp_path)
    (root / "deep.rst").write_text("Deep\n====\n\n" + "".join(" " * i + "- x\n\n" for i in range(0, 4000, 2)))
    (root / "deep.md").write_text("# Deep\n\n" + "> " * DEPTH + "bottom\n\nafter\n")
    result, warnings, stored = await ingest_folder(store, root)
    assert stored == {"ok.md", "deep.md"}  # Markdown falls back to plain text, with a warning
    assert result.failed == 1
    assert any("deep.rst" in w and "nested too deeply" in w for w in warnings)
    assert any("deep.md" in w and "nested deeper than" in w for w in warnings)


async def test_a_reader_past_its_time_bound_fails_that_document_alone(store, tmp_path):
    root = documents(tmp_path)
    (root / "long.md").write_text("\n\n".join(f"Paragraph {i} of a long file." for i in range(3000)))
    result, warnings, stored = await ingest_folder(store, root, max_seconds=1e-9)
    assert stored == {"ok.md"}  # a short document never reaches a check
    assert result.failed == 1
    assert any("long.md" in w and "longer than" in w for w in warnings)


def test_docutils_never_reads_include_files_or_raw(tmp_path, capfd):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-VALUE\n")
    page = tmp_path / "doc.rst"
    page.write_text(
        f"Title\n=====\n\n.. include:: {secret}\n\n.. raw:: html\n\n   <b>raw</b>\n\n"
        f".. literalinclude:: {secret}\n\n.. csv-table::\n   :file: {secret}\n\nBody text.\n"
    )
    doc = read_document(page)
    assert "SECRET-VALUE" not in doc.text and "raw" not in doc.text
    assert doc.text == "Title\n\nBody text."
    out, err = capfd.readouterr()
    assert out == err == ""


async def test_a_rest_file_docutils_is_slow_on_fails_alone_on_the_time_bound(store, tmp_path):
    root = documents(tmp_path)
    section = "Part {n}\n--------\n\n.. note::\n\n   - a :func:`call` in a note {n}\n\n     .. code-block:: python\n\n        x = {n}\n\n"
    (root / "slow.rst").write_text("Slow\n====\n\n" + "".join(section.format(n=n) for n in range(1000)))
    result, warnings, stored = await ingest_folder(store, root, max_seconds=0.05)
    assert stored == {"ok.md"}
    assert result.failed == 1
    assert any("slow.rst" in w and "longer than the 0.05 s limit" in w for w in warnings)


def test_a_docx_zip_bomb_is_refused_before_it_is_unpacked(tmp_path):
    import zipfile

    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            zeros = b"\0" * (1 << 20)
            for _ in range(300):  # 300 MB of zeros: a few hundred KB packed
                member.write(zeros)
    assert bomb.stat().st_size < 2 * 1024 * 1024
    with pytest.raises(InputError, match=r"bomb\.docx: DOCX unpacks to \d+ MB, over the 268 MB limit"):
        read_document(bomb)
