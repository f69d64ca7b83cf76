"""Canvas, pages and search over records written straight into a real store (no compile)."""

from __future__ import annotations

import numpy as np
import pytest
from bs4 import BeautifulSoup

from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.storage.records import Entity, Page, Relation, Topic
from compendium.tenancy import kb_store


@pytest.fixture
async def kb(make_api):
    async with make_api(run_worker=False) as api:
        key = await api.tenant_key("acme")
        h = api.as_(key)
        assert (await api.client.post("/knowledge-bases", json={"name": "kb"}, headers=h)).status_code == 201
        yield api, h, kb_store(api.store, "acme", "kb")


def _graph(n: int, m: int, seed: int = 1) -> tuple[list[Entity], list[Relation]]:
    rng = np.random.default_rng(seed)
    entities = [Entity(id=f"e{i:05d}", name=f"Thing {i}", type="system" if i % 3 else "person",
                       importance=float(rng.random()), degree=0) for i in range(n)]
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(m, 2)) if a != b}
    relations = [Relation(id=f"r{a}-{b}", source=f"e{a:05d}", target=f"e{b:05d}", type="uses",
                          strength=1 + (a + b) % 3) for a, b in sorted(pairs)]
    return entities, relations


async def test_the_canvas_pages_a_large_graph_and_every_edge_comes_once(kb):
    api, h, store = kb
    entities, relations = _graph(3000, 9000)
    await store.upsert([*entities, *relations])
    nodes, edges, cursor = [], [], None
    while True:
        params = {"limit": 1000, "min_strength": 1, **({"cursor": cursor} if cursor else {})}
        page = (await api.client.get("/knowledge-bases/kb/graph", params=params, headers=h)).json()
        assert len(page["nodes"]) <= 1000 and page["total_nodes"] == 3000
        nodes += page["nodes"]
        edges += page["edges"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len({n["id"] for n in nodes}) == 3000
    assert sorted(e["id"] for e in edges) == sorted(r.id for r in relations)
    importance = [n["importance"] for n in nodes]
    assert importance == sorted(importance, reverse=True)  # most important first
    xy = np.array([[n["x"], n["y"]] for n in nodes])
    assert np.isfinite(xy).all() and np.abs(xy).max() <= 1.0 and len(np.unique(xy.round(3), axis=0)) > 2500

    strong = (await api.client.get("/knowledge-bases/kb/graph", params={"limit": 5000, "min_strength": 3},
                                   headers=h)).json()
    assert strong["edges"] and all(e["strength"] >= 3 for e in strong["edges"])
    people = (await api.client.get("/knowledge-bases/kb/graph", params={"type": "person", "limit": 5000},
                                   headers=h)).json()
    assert people["total_nodes"] == 1000 and {n["type"] for n in people["nodes"]} == {"person"}
    capped = (await api.client.get("/knowledge-bases/kb/graph", params={"limit": 100, "edge_limit": 10},
                                   headers=h)).json()
    assert len(capped["edges"]) <= 10 and capped["truncated"] == (capped["total_edges"] > 10)


async def test_the_canvas_around_one_entity_follows_relations_to_a_depth(kb):
    api, h, store = kb
    chain = [Entity(id=f"c{i}", name=f"Link {i}", type="system") for i in range(6)]
    links = [Relation(id=f"l{i}", source=f"c{i}", target=f"c{i + 1}", type="next", strength=1) for i in range(5)]
    await store.upsert([*chain, *links])
    for depth, expected in ((0, {"c2"}), (1, {"c1", "c2", "c3"}), (2, {"c0", "c1", "c2", "c3", "c4"})):
        got = (await api.client.get("/knowledge-bases/kb/graph", params={"entity": "c2", "depth": depth},
                                    headers=h)).json()
        assert {n["id"] for n in got["nodes"]} == expected
        assert all(e["source"] in expected and e["target"] in expected for e in got["edges"])
    capped = (await api.client.get("/knowledge-bases/kb/graph", params={"entity": "c2", "depth": 4, "limit": 2},
                                   headers=h)).json()
    assert len(capped["nodes"]) == 2 and capped["truncated"]


async def test_edited_pages_render_as_sanitised_html_with_live_links(kb):
    api, h, store = kb
    await store.upsert([Page(id="alpha", slug="alpha", title="Alpha", markdown="# Alpha\n\nFirst."),
                        Page(id="beta", slug="beta", title="Beta", markdown="# Beta\n\nSecond.")])
    hostile = ("# Alpha\n\n<script>alert(1)</script> See [[beta]] and [[gone]].\n\n"
               "[click](javascript:alert(2)) <img src=x onerror=alert(3)>\n")
    r = await api.client.put("/knowledge-bases/kb/pages/alpha", json={"markdown": hostile, "title": "Alpha!"}, headers=h)
    assert r.status_code == 200 and r.json()["edited"] and r.json()["version"] == 2
    assert r.json()["outlinks"] == ["beta", "gone"]
    html = (await api.client.get("/knowledge-bases/kb/pages/alpha/html", headers=h)).text
    tree = BeautifulSoup(html, "html.parser")  # what a browser would build from it
    assert not tree.find_all(["script", "img", "iframe"])
    assert not [a for tag in tree.find_all(True) for a in tag.attrs if a.lower().startswith("on")]
    hrefs = [a.get("href", "") for a in tree.find_all("a")]
    assert "../beta/html" in hrefs and not any(h.lower().startswith("javascript") for h in hrefs)
    edited = (await api.client.get("/knowledge-bases/kb/pages?edited=true", headers=h)).json()["items"]
    assert [p["slug"] for p in edited] == ["alpha"]


async def test_search_by_words_and_by_meaning(kb):
    api, h, store = kb
    embedder = OfflineEmbedder()
    texts = ["Write-ahead log records every change before it reaches the heap.",
             "The buffer pool caches pages in memory."]
    vectors = await embedder.embed(texts)
    await store.upsert([
        Entity(id="wal", name="Write-Ahead Log", aliases=["WAL"], description=texts[0], embedding=vectors[0]),
        Entity(id="bp", name="Buffer Pool", description=texts[1], embedding=vectors[1]),
        Page(id="wal", slug="wal", title="Write-Ahead Log", subject_id="wal", markdown=texts[0], embedding=vectors[0]),
    ])
    hits = (await api.client.get("/knowledge-bases/kb/search", params={"q": "WAL"}, headers=h)).json()
    assert hits[0]["id"] == "wal" and hits[0]["kind"] == "entity" and hits[0]["page"] == "wal"
    pages = (await api.client.get("/knowledge-bases/kb/search", params={"q": "write ahead log", "kind": "page"},
                                  headers=h)).json()
    assert [p["id"] for p in pages] == ["wal"]
    near = (await api.client.get("/knowledge-bases/kb/search",
                                 params={"q": "buffer pool caches pages", "mode": "vector", "kind": "entity"},
                                 headers=h)).json()
    assert near[0]["id"] == "bp" and near[0]["score"] > near[-1]["score"]


async def test_a_topic_names_its_page_its_own_or_the_member_it_is_named_like(kb):
    api, h, store = kb
    await store.upsert([
        Entity(id="wal", name="WAL"), Entity(id="ckpt", name="Checkpointer"), Entity(id="pool", name="Buffer Pool"),
        Page(id="p1", slug="wal", title="WAL", subject_id="wal", kind="entity"),
        Page(id="p2", slug="memory", title="Memory", subject_id="t2", kind="topic"),
        Topic(id="t1", slug="wal-topic", title="WAL", members=["wal", "ckpt"], page_subject="wal"),
        Topic(id="t2", slug="memory", title="Memory", members=["pool"]),
    ])
    named = (await api.client.get("/knowledge-bases/kb/topics/t1", headers=h)).json()
    own = (await api.client.get("/knowledge-bases/kb/topics/t2", headers=h)).json()
    assert (named["page"], own["page"]) == ("wal", "memory")
    assert sorted(m["name"] for m in named["member_entities"]) == ["Checkpointer", "WAL"]
