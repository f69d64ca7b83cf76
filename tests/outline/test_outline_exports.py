"""The outline through a real offline compile of the sample corpus: the JSON tree's schema, the site
index and vault maps linking every page, breadcrumbs, paged entities, ids stable under a
one-document change."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from compendium.cli import main
from compendium.export.outline_view import described_in, lead_of
from compendium.workspace import init_workspace
from tests.support.workspace_fixtures import SAMPLE_CORPUS

NODE_KEYS = {"title", "slug", "pages", "children"}


def _compile(workspace: Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        for name in ("COMPENDIUM_LLM_BASE_URL", "COMPENDIUM_LLM_API_KEY", "COMPENDIUM_LLM_MODEL", "COMPENDIUM_STORE"):
            mp.delenv(name, raising=False)
        assert main(["-w", str(workspace), "compile", "--plain"]) == 0


def _export(workspace: Path, fmt: str, out: Path) -> Path:
    assert main(["-w", str(workspace), "export", "--format", fmt, str(out)]) == 0
    return out


def outline_workspace(root: Path) -> Path:
    """A workspace of the sample corpus, compiled with the default template (it maps the pages)."""
    workspace = init_workspace(root)
    shutil.copytree(SAMPLE_CORPUS, workspace / "documents" / "corpus")
    return workspace


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    workspace = outline_workspace(tmp_path_factory.mktemp("outline") / "ws")
    _compile(workspace)
    return workspace


def _nodes(tree: dict) -> list[dict]:
    out, stack = [], list(tree["children"])
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node["children"])
    return out


def _listed(tree: dict) -> set[str]:
    return {s for n in _nodes(tree) for s in [*n["pages"], *([n["slug"]] if n["slug"] else [])]}


def test_the_json_outline_is_a_tree_of_title_slug_pages_children_over_every_page(compiled: Path, tmp_path: Path):
    data = json.loads(_export(compiled, "json", tmp_path / "kb.json").read_text(encoding="utf-8"))
    tree = data["outline"]
    slugs = {p["slug"] for p in data["pages"]}
    assert set(tree) == NODE_KEYS
    for node in _nodes(tree):
        assert set(node) == NODE_KEYS
        assert isinstance(node["title"], str) and node["title"]
        assert node["slug"] is None or node["slug"] in slugs
        assert all(isinstance(s, str) and s in slugs for s in node["pages"])
        assert isinstance(node["children"], list)
    assert _listed(tree) == slugs
    # The sample corpus's seven folders are the root topics, in its own words.
    assert [n["title"] for n in tree["children"]] == [
        "Durability", "Operations", "Overview", "Query", "Replication", "Storage", "Transactions"]
    # A node's overview page cites its sources and opens on what the group is; a folder no
    # sentence describes (no introduction, no definition of its name) has none.
    by_slug = {p["slug"]: p for p in data["pages"]}
    overviews = [node for node in tree["children"] if node["slug"]]
    assert [node["title"] for node in overviews] == ["Replication"]
    for node in overviews:
        assert "[^1]" in by_slug[node["slug"]]["markdown"]


def test_the_site_index_tree_and_the_vault_maps_link_every_page(compiled: Path, tmp_path: Path):
    data = json.loads(_export(compiled, "json", tmp_path / "kb.json").read_text(encoding="utf-8"))
    slugs = {p["slug"] for p in data["pages"]}
    site = _export(compiled, "site", tmp_path / "site")
    index = BeautifulSoup((site / "index.html").read_text(encoding="utf-8"), "html.parser")
    tree = index.select_one("section.outline")
    linked = {a["href"].removeprefix("pages/").removesuffix(".html") for a in tree.select("a")}
    assert linked == slugs
    assert len(tree.select("details")) == len(_nodes(data["outline"]))
    # A page shows where it sits; an overview page shows its children.
    root = data["outline"]["children"][0]
    page = BeautifulSoup((site / "pages" / f"{root['pages'][0]}.html").read_text(encoding="utf-8"), "html.parser")
    crumbs = page.select_one("nav.breadcrumbs")
    assert [a.get_text() for a in crumbs.select("a")] == ["Contents", root["title"]]
    described = next(node for node in data["outline"]["children"] if node["slug"])
    overview = BeautifulSoup((site / "pages" / f"{described['slug']}.html").read_text(encoding="utf-8"), "html.parser")
    listed = {a["href"].removesuffix(".html") for a in overview.select("section.children a")}
    # (a member the node lists is not also among the page's Related links)
    related = overview.find("h2", string="Related")
    if related is not None and related.find_next("ul") is not None:
        assert not {a["href"].removesuffix(".html") for a in related.find_next("ul").select("a")} & listed
    # (a member the overview's own list says what it is is not listed again)
    said_on_page = described_in(next(p for p in data["pages"] if p["slug"] == described["slug"])["markdown"])
    assert set(described["pages"]) - said_on_page <= listed

    vault = _export(compiled, "vault", tmp_path / "vault")
    maps = sorted((vault / "maps").glob("*.md"))
    assert len(maps) == len(_nodes(data["outline"]))
    linked = set()
    for note in maps:
        text = note.read_text(encoding="utf-8")
        linked |= {m.split("|")[0] for m in _wikilinks(text) if not m.startswith(("maps/", "_index"))}
    assert linked == slugs
    index_md = (vault / "_index.md").read_text(encoding="utf-8")
    assert all(f"[[maps/{note.stem}|" in index_md for note in maps if _is_root(note))


def test_an_overview_page_and_its_map_list_each_member_with_a_line_saying_what_it_is(compiled: Path, tmp_path: Path):
    data = json.loads(_export(compiled, "json", tmp_path / "kb.json").read_text(encoding="utf-8"))
    by_slug = {p["slug"]: p for p in data["pages"]}
    site = _export(compiled, "site", tmp_path / "site")
    vault = _export(compiled, "vault", tmp_path / "vault")
    maps = "\n".join(note.read_text(encoding="utf-8") for note in (vault / "maps").glob("*.md"))
    # A map lists no page with nothing after its name: such members are links on its "Also" line.
    assert not re.search(r"^- \[\[[^\]]+\]\]$", maps, re.MULTILINE)
    checked = 0
    for node in _nodes(data["outline"]):
        if not node["slug"]:
            continue
        overview = BeautifulSoup((site / "pages" / f"{node['slug']}.html").read_text(encoding="utf-8"), "html.parser")
        items = {li.a["href"].removesuffix(".html"): li for li in overview.select("section.children ul.page-list li")}
        also = {a["href"].removesuffix(".html") for a in overview.select("section.children p.also a")}
        for slug in node["pages"]:
            summary = by_slug[slug]["summary"]
            if slug in described_in(by_slug[node["slug"]]["markdown"]):
                assert slug not in items and slug not in also  # its own list already says what it is
                continue
            # Its line, where its page's summary says what it is, is that summary after the name;
            # a member with no such line is a link in the "Also" line, never an empty item.
            if slug in also:
                assert slug not in items
                continue
            shown = items[slug].select_one(".said")
            assert shown is not None and summary
            said = shown.get_text()
            assert said.strip(" —:,") and said.strip(" —:,") in summary
            # (never the overview's lead said again)
            core = " ".join(said.strip(" —:,").split()).rstrip(".")
            assert len(core) <= 20 or core not in lead_of(by_slug[node["slug"]]["markdown"])
            assert f"|{by_slug[slug]['title']}]]{said}" in maps or f"[[{slug}]]{said}" in maps
            checked += 1
    assert checked


def _wikilinks(text: str) -> list[str]:
    import re
    return re.findall(r"\[\[([^\]]+)\]\]", text)


def _is_root(note: Path) -> bool:
    return "Up: [[_index|Contents]]" in note.read_text(encoding="utf-8")


def _stored(workspace: Path) -> dict:
    import asyncio

    from compendium.outline.stored import stored_outline
    from compendium.storage.factory import open_store

    async def read() -> dict:
        store = await open_store(f"sqlite:///{workspace / '.compendium' / 'store.db'}", "default")
        try:
            return await stored_outline(store)  # type: ignore[return-value]
        finally:
            await store.close()

    return asyncio.run(read())


def _where(value: dict) -> tuple[dict[str, str], dict[str, tuple[str, set[str]]]]:
    from compendium.outline import OutlineNode

    roots = [OutlineNode.from_dict(d) for d in value["roots"]]
    nodes = [n for r in roots for n, _d in r.walk()]
    return ({s: n.id for n in nodes for s in n.subjects},
            {n.id: (n.title, set(n.all_subjects())) for n in nodes})


@pytest.mark.parametrize("change", ["add", "delete"])
def test_one_document_added_or_deleted_keeps_node_ids_and_moves_few_pages(compiled: Path, tmp_path: Path, change: str):
    workspace = tmp_path / "ws"
    shutil.copytree(compiled, workspace)
    before_where, before_nodes = _where(_stored(workspace))
    corpus = workspace / "documents" / "corpus"
    if change == "add":
        (corpus / "storage" / "toast.md").write_text(
            "# TOAST\n\nLumen DB stores oversized column values out of line in a TOAST table. "
            "The TOAST table belongs to the Heap File of its table and is read by the Executor.\n",
            encoding="utf-8")
    else:
        victim = sorted((corpus / "query").glob("*.md"))[0]
        victim.unlink()
    _compile(workspace)
    after_where, after_nodes = _where(_stored(workspace))
    kept = before_where.keys() & after_where.keys()
    moved = [s for s in kept if before_where[s] != after_where[s]]
    # Pages whose own document went move with their evidence; on a 113-page corpus that is a few.
    assert len(moved) <= 0.05 * len(before_where)
    assert set(before_nodes) == set(after_nodes)  # the folders are the nodes: same ids
    for nid, (title, members) in before_nodes.items():
        new_title, new_members = after_nodes[nid]
        if len(members ^ new_members) < 0.2 * len(members):
            assert new_title == title


def test_the_site_graph_colours_and_groups_entities_by_their_pages_root_topic(compiled: Path, tmp_path: Path):
    data = json.loads(_export(compiled, "json", tmp_path / "kb.json").read_text(encoding="utf-8"))
    root_of = {}
    for root in data["outline"]["children"]:
        for node in [root, *_nodes(root)]:
            for slug in node["pages"]:
                root_of.setdefault(slug, root["title"])
    site = _export(compiled, "site", tmp_path / "site")
    graph = BeautifulSoup((site / "graph.html").read_text(encoding="utf-8"), "html.parser")
    assert [o["value"] for o in graph.select("#colour-by option")] == ["type", "group"]
    nodes = json.loads(graph.select_one("#graph-data").get_text())["nodes"]
    with_page = [n for n in nodes if n["href"]]
    assert with_page and all(n["group"] == root_of.get(n["href"].removeprefix("pages/").removesuffix(".html"), "")
                             for n in with_page)
    assert len({n["group"] for n in with_page}) == len(data["outline"]["children"])
    # Laid out as the outline groups them: an entity is nearer, on average, to those of its own root topic.
    def mean_distance(a, members):
        return sum(((a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2) ** 0.5 for b in members) / max(len(members), 1)
    nearer = sum(1 for n in with_page
                 if n["group"] and mean_distance(n, [m for m in with_page if m["group"] == n["group"] and m is not n])
                 < mean_distance(n, [m for m in with_page if m["group"] and m["group"] != n["group"]]))
    assert nearer >= 0.8 * sum(1 for n in with_page if n["group"])
