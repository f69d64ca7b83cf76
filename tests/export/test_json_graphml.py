"""JSON and GraphML exports: complete, vector-free, deterministic, and readable by their tools."""

import json
from pathlib import Path

import networkx as nx

from compendium.export import export
from compendium.storage.records import Relation


async def test_json_holds_everything_without_vectors_in_fixed_order(store, tmp_path: Path):
    result = await export(store, "json", tmp_path / "kb.json", title="Lumen DB")
    data = json.loads(result.path.read_text(encoding="utf-8"))
    assert data["title"] == "Lumen DB"
    assert [p["slug"] for p in data["pages"]] == [
        "checkpointer",
        "durability",
        "hostile",
        "lsn",
        "wal",
    ]
    assert [e["id"] for e in data["entities"]] == ["e-ckpt", "e-lsn", "e-wal"]
    assert [r["id"] for r in data["relations"]] == ["r1", "r2", "r3"]
    assert data["topics"][0]["members"] == ["e-wal", "e-ckpt", "e-lsn"]
    assert all("embedding" not in row for row in data["pages"] + data["entities"])
    wal = next(p for p in data["pages"] if p["slug"] == "wal")
    assert "[[checkpointer|checkpoint process]]" in wal["markdown"]

    again = await export(store, "json", tmp_path / "again.json", title="Lumen DB")
    assert again.path.read_bytes() == result.path.read_bytes()


async def test_json_into_an_existing_folder(store, tmp_path: Path):
    result = await export(store, "json", tmp_path)
    assert result.path == tmp_path / "compendium.json"
    assert result.files == 1


async def test_graphml_reads_back_with_networkx(store, tmp_path: Path):
    # A control character in model output must not make the XML unreadable.
    await store.upsert(
        [
            Relation(
                id="r4",
                source="e-lsn",
                target="e-ckpt",
                type="read_by",
                description="bad\x0bchar",
                strength=1,
            )
        ]
    )
    result = await export(store, "graphml", tmp_path / "graph.graphml")
    graph = nx.read_graphml(result.path)
    assert sorted(graph.nodes) == ["e-ckpt", "e-lsn", "e-wal"]
    wal = graph.nodes["e-wal"]
    assert wal["label"] == wal["name"] == "Write-Ahead Log" and wal["type"] == "component"
    assert wal["topic"] == "Durability"
    assert wal["aliases"] == "WAL; write-ahead log" and wal["importance"] == 0.9
    assert wal["page"] == "wal"
    edges = {(u, v): d for u, v, d in graph.edges(data=True)}
    assert edges[("e-ckpt", "e-wal")] == {
        "id": "r1",
        "label": "writes_to",
        "weight": 3.0,
        "type": "writes_to",
        "strength": 3,
        "description": "writes a checkpoint record",
    }
    assert edges[("e-lsn", "e-ckpt")]["description"] == "bad char"
    assert graph.number_of_edges() == 3  # the relation to a missing entity is left out


async def test_graphml_reads_in_igraph_with_labels_topics_and_weights(store, tmp_path: Path):
    """igraph reads GraphML as Gephi does: labels, a topic to colour by, weights to lay out by."""
    import igraph

    result = await export(store, "graphml", tmp_path / "graph.graphml")
    graph = igraph.Graph.Read_GraphML(str(result.path))
    assert graph.vcount() == 3 and graph.ecount() == 2 and graph.is_directed()
    by_label = {v["label"]: v for v in graph.vs}
    assert sorted(by_label) == ["Checkpointer", "Log Sequence Number", "Write-Ahead Log"]
    assert {v["topic"] for v in graph.vs} == {"Durability"}
    assert by_label["Write-Ahead Log"]["importance"] == 0.9
    assert by_label["Log Sequence Number"]["type"] == "concept"
    edge = graph.es[graph.get_eid(by_label["Checkpointer"].index, by_label["Write-Ahead Log"].index)]
    assert edge["label"] == "writes_to" and edge["weight"] == 3.0
