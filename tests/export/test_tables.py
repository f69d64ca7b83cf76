"""Tables export: one CSV per kind of record, readable by the csv module (and so by pandas)."""

import csv
from pathlib import Path

from compendium.export import export


def read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


async def test_tables_write_entities_relations_claims_pages_chunks_and_topics(store, tmp_path: Path):
    result = await export(store, "tables", tmp_path / "tables")
    names = sorted(p.name for p in result.path.glob("*.csv"))
    assert names == ["chunks.csv", "claims.csv", "entities.csv", "pages.csv", "relations.csv", "topics.csv"]
    assert result.files == 6 and result.pages == 5

    entities = {row["id"]: row for row in read(result.path / "entities.csv")}
    assert entities["e-wal"]["title"] == "Write-Ahead Log"
    assert entities["e-wal"]["aliases"] == "WAL; write-ahead log"
    assert entities["e-wal"]["topic"] == "durability" and entities["e-wal"]["page"] == "wal"
    relation = read(result.path / "relations.csv")[0]
    assert (relation["source"], relation["target"], relation["weight"]) == ("Checkpointer", "Write-Ahead Log", "3")
    assert relation["chunk_ids"] == "c1; c2; c3"
    claim = read(result.path / "claims.csv")[0]
    assert claim["entities"] == "Write-Ahead Log" and claim["chunk_id"] == "c0ffee0001"
    pages = {row["slug"]: row for row in read(result.path / "pages.csv")}
    assert sorted(pages) == ["checkpointer", "durability", "hostile", "lsn", "wal"]  # deleted left out
    assert pages["wal"]["markdown"].startswith("The **Write-Ahead Log**")  # newlines survive quoting
    chunks = read(result.path / "chunks.csv")
    assert [c["id"] for c in chunks] == ["c0ffee0001", "c0ffee0002"]
    assert chunks[0]["document"] == "handbook/durability.md" and chunks[0]["heading_path"] == "Lumen handbook › Durability"
    topic = read(result.path / "topics.csv")[0]
    assert topic["size"] == "3" and topic["members"] == "Write-Ahead Log; Checkpointer; Log Sequence Number"
