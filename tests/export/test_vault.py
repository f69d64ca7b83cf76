"""Markdown vault: one file per active page, front matter, links kept, index, stale files removed."""

from pathlib import Path

import yaml

from compendium.export import export
from compendium.storage.records import Page


def split_front_matter(text: str) -> tuple[dict, str]:
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


async def test_vault_pages_have_front_matter_and_keep_links(store, tmp_path: Path):
    out = tmp_path / "vault"
    result = await export(store, "vault", out)
    names = sorted(p.name for p in out.glob("*.md"))
    assert names == [
        "_index.md",
        "checkpointer.md",
        "durability.md",
        "hostile.md",
        "lsn.md",
        "wal.md",
    ]
    maps = sorted(p.name for p in (out / "maps").glob("*.md"))
    assert maps  # a map of content per outline node
    assert result.files == 7 + len(maps)  # and sources/handbook-durability.md

    meta, body = split_front_matter((out / "wal.md").read_text(encoding="utf-8"))
    assert meta == {
        "title": "Write-Ahead Log",
        "kind": "entity",
        "aliases": ["WAL"],
        "tags": ["durability"],
        "updated": "2023-11-14",
    }
    assert "[[checkpointer|checkpoint process]]" in body
    # Footnotes open their passage in the source note (Obsidian's [[note#^block]] links).
    assert "[^1]: [[sources/handbook-durability#^c0ffee0001|Lumen handbook › Durability]]" in body
    assert "[^2]: [[sources/handbook-durability#^c0ffee0002|Lumen handbook › LSN]]" in body
    assert "chunk c0ffee" not in body


async def test_source_notes_quote_each_passage_under_its_heading_with_a_block_id(store, tmp_path: Path):
    out = tmp_path / "vault"
    await export(store, "vault", out)
    meta, body = split_front_matter((out / "sources" / "handbook-durability.md").read_text("utf-8"))
    assert meta == {"title": "Lumen handbook", "source": "handbook/durability.md", "kind": "source"}
    blocks = body.split("\n\n")
    assert "## Durability" in blocks and "## LSN" in blocks
    passage = blocks[blocks.index("## Durability") + 1].splitlines()
    # A quote followed by its id on the next line: Obsidian gives the id to the whole quote.
    assert passage[0].startswith("> Lumen flushes pages lazily.") and passage[-1] == "^c0ffee0001"
    assert all(line.startswith(">") for line in passage[:-1])
    # The sentence the WAL page cites is highlighted; the others are not.
    assert "==The Write-Ahead Log records every change before the page is written to disk.==" in passage[0]
    assert "==Lumen flushes" not in passage[0] and "==A commit" not in passage[0]


async def test_vault_index_lists_pages_by_kind_and_topic(store, tmp_path: Path):
    out = tmp_path / "vault"
    await export(store, "vault", out, title="Lumen DB")
    index = (out / "_index.md").read_text(encoding="utf-8")
    assert index.startswith("# Lumen DB\n")
    entities = index.split("## Entities")[1].split("## Concepts")[0]
    assert "[[wal|Write-Ahead Log]]" in entities and "[[checkpointer|Checkpointer]]" in entities
    concepts = index.split("## Concepts")[1].split("## Topics")[0]
    assert "[[lsn|Log Sequence Number]]" in concepts
    by_topic = index.split("## By topic")[1]
    assert "### Durability" in by_topic and "[[lsn|Log Sequence Number]]" in by_topic
    assert "gone" not in index


async def test_reexport_removes_deleted_pages_but_not_user_files(store, tmp_path: Path):
    out = tmp_path / "vault"
    await export(store, "vault", out)
    (out / ".obsidian").mkdir()
    (out / ".obsidian" / "app.json").write_text("{}")
    (out / "my-notes.md").write_text("mine")

    await store.upsert(
        [Page(id="lsn", slug="lsn", title="Log Sequence Number", kind="concept", status="deleted")]
    )
    result = await export(store, "vault", out)

    assert not (out / "lsn.md").exists()
    assert (out / "my-notes.md").read_text() == "mine"
    assert (out / ".obsidian" / "app.json").exists()
    assert result.pages == 4
