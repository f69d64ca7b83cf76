"""Static site: pages rendered and sanitised, wikilinks and footnotes resolved, index, entities, topics."""

import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bs4 import BeautifulSoup

from compendium.export import export
from compendium.storage.records import Page


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


async def site(store, tmp_path: Path) -> Path:
    out = tmp_path / "site"
    await export(store, "site", out, title="Lumen DB")
    return out


async def test_site_files_and_deleted_pages(store, tmp_path: Path):
    out = await site(store, tmp_path)
    for name in ("index.html", "entities.html", "topics.html", "assets/style.css"):
        assert (out / name).is_file(), name
    pages = sorted(p.name for p in (out / "pages").iterdir())
    assert pages == ["checkpointer.html", "durability.html", "hostile.html", "lsn.html", "wal.html"]


async def test_wikilinks_become_relative_links_and_unknown_ones_plain_text(store, tmp_path: Path):
    out = await site(store, tmp_path)
    body = soup(out / "pages" / "wal.html").select_one("div.body")
    links = {a.get_text(): a["href"] for a in body.select("a.wikilink")}
    assert links == {"checkpoint process": "checkpointer.html", "Log Sequence Number": "lsn.html"}
    assert soup(out / "pages" / "lsn.html").select_one("p.kind").get_text() == "Concept"
    text = body.get_text()
    assert "See also not-a-page and gone." in text  # unknown and deleted targets: text, no link
    assert "[[" not in text


async def test_each_citation_links_to_the_sentence_it_cites_in_its_source_page(store, tmp_path: Path):
    out = await site(store, tmp_path)
    page = soup(out / "pages" / "wal.html")
    refs = [a["href"] for a in page.select("sup.footnote-ref a")]
    assert refs == [
        "../sources/handbook-durability.html#c-c0ffee0001-s1",
        "../sources/handbook-durability.html#c-c0ffee0002-s1",
    ]
    note = page.select_one("section.footnotes li#fn-1")
    link = note.select_one("a.source-link")
    # The document once, then its headings; no chunk hash.
    assert link.get_text() == "Lumen handbook › Durability"
    assert link["href"] == "../sources/handbook-durability.html#c-c0ffee0001"
    assert "chunk" not in note.get_text() and "[^1]" not in page.get_text()

    source = soup(out / "sources" / "handbook-durability.html")
    assert source.h1.get_text() == "Lumen handbook"
    passage = source.select_one("section.passage#c-c0ffee0001")
    assert passage.select_one(".heading-path").get_text() == "Lumen handbook › Durability"
    cited = passage.select_one("#c-c0ffee0001-s1")
    assert cited.get_text() == "The Write-Ahead Log records every change before the page is written to disk."
    assert [a.get_text() for a in passage.select(".cited-by a")] == ["Write-Ahead Log"]
    index = soup(out / "sources" / "index.html")
    assert [a["href"] for a in index.select("main a")] == ["handbook-durability.html"]


async def test_a_footnote_naming_an_unknown_passage_reads_as_written(store, tmp_path: Path):
    await store.upsert([Page(id="odd", slug="odd", title="Odd", kind="concept",
                             markdown="A fact.[^1]\n\n[^1]: Old notes — chunk feedbeef\n")])
    out = await site(store, tmp_path)
    page = soup(out / "pages" / "odd.html")
    assert page.select_one("sup.footnote-ref a")["href"] == "#fn-1"
    assert "Old notes — chunk feedbeef" in page.select_one("li#fn-1").get_text()


async def test_exported_files_honour_the_umask(store, tmp_path: Path):
    import os

    previous = os.umask(0o022)
    try:
        out = await site(store, tmp_path)
        vault = tmp_path / "vault"
        await export(store, "vault", vault)
        single = await export(store, "graphml", tmp_path / "g.graphml")
    finally:
        os.umask(previous)
    files = [p for p in [*out.rglob("*"), *vault.rglob("*")] if p.is_file()] + [single.path]
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {oct(0o644)}


async def test_script_from_a_page_can_never_run(store, tmp_path: Path):
    out = await site(store, tmp_path)
    page = soup(out / "pages" / "hostile.html")
    assert page.select_one("div.body").find_all("script") == []
    # The only scripts are the site's own files in assets/.
    assert [s.get("src") for s in page.find_all("script")] == ["../assets/theme.js"]
    assert page.find_all("img") == []
    for tag in page.find_all(True):
        assert not [name for name in tag.attrs if name.lower().startswith("on")], tag
        assert not str(tag.get("href", "")).lower().startswith("javascript:"), tag
    assert page.h1.get_text() == "Hostile <b>page</b>"  # the title is text, not markup
    assert page.select_one("a.wikilink")["href"] == "wal.html"


async def test_no_page_content_reaches_the_index_script(store, tmp_path: Path):
    await store.upsert(
        [
            Page(
                id="x",
                slug="x",
                title="</script><script>alert(1)</script>",
                summary="<img src=x onerror=alert(1)>",
            )
        ]
    )
    out = await site(store, tmp_path)
    index = soup(out / "index.html")
    scripts = index.find_all("script")
    # Our own theme and search files and the JSON index: nothing from the page.
    assert [s.get("src") for s in scripts] == ["assets/theme.js", None, "assets/search.js", "assets/outline.js"]
    data = json.loads(index.find("script", id="search-index").string)
    assert "</script><script>alert(1)</script>" in [row["t"] for row in data]
    assert index.find_all("img") == []


async def test_index_is_a_collapsible_tree_over_every_page_with_a_search_index(store, tmp_path: Path):
    out = await site(store, tmp_path)
    index = soup(out / "index.html")
    assert [h.get_text() for h in index.select("section.group > h2")] == ["Contents"]
    tree = index.select_one("section.outline > ul.outline-tree")
    assert tree.select("details > summary .node-title")  # nodes fold open and shut
    linked = {a["href"] for a in tree.select("a")}
    assert {f"pages/{p}.html" for p in ("checkpointer", "durability", "hostile", "lsn", "wal")} <= linked
    data = json.loads(index.find("script", id="search-index").string)
    assert sorted(row["u"] for row in data) == [
        "pages/checkpointer.html",
        "pages/durability.html",
        "pages/hostile.html",
        "pages/lsn.html",
        "pages/wal.html",
    ]
    wal = next(row for row in data if row["u"] == "pages/wal.html")
    assert wal["a"] == ["WAL"] and wal["s"] == "The journal of changes."
    assert index.find("input", id="search") is not None


async def test_entities_page_lists_the_graph(store, tmp_path: Path):
    out = await site(store, tmp_path)
    row = soup(out / "entities.html").find("tr", id="e-wal")
    cells = [td.get_text(" ", strip=True) for td in row.find_all("td", recursive=False)]
    assert cells[0] == "Write-Ahead Log" and cells[1] == "component"
    assert cells[2] == "WAL, write-ahead log"
    relations = [li.get_text(" ", strip=True) for li in row.select("ul.relations li")]
    assert relations[0].startswith("← writes_to Checkpointer ×3")
    assert relations[1].startswith("→ addressed_by Log Sequence Number ×2")
    assert row.find("a")["href"] == "pages/wal.html"


async def test_topics_page_lists_members(store, tmp_path: Path):
    out = await site(store, tmp_path)
    topic = soup(out / "topics.html").find("section", id="durability")
    assert topic.h2.a["href"] == "pages/durability.html"
    members = {li.get_text(): li.a["href"] for li in topic.select("ul.members li")}
    assert members == {
        "Checkpointer": "pages/checkpointer.html",
        "Log Sequence Number": "pages/lsn.html",
        "Write-Ahead Log": "pages/wal.html",
    }


async def test_every_relative_link_resolves(store, tmp_path: Path):
    out = await site(store, tmp_path)
    checked = 0
    for html_file in out.rglob("*.html"):
        for tag in soup(html_file).find_all(["a", "link"]):
            parts = urlsplit(tag.get("href", ""))
            if parts.scheme or not parts.path:
                continue
            assert (html_file.parent / unquote(parts.path)).resolve().is_file(), (html_file, tag)
            checked += 1
    assert checked > 30


async def test_a_page_title_is_shown_once_even_when_the_markdown_starts_with_it(store, tmp_path: Path):
    await store.upsert([Page(id="vacuum", slug="vacuum", title="Vacuum", kind="entity",
                             markdown="# Vacuum\n\nVacuum reclaims dead rows.[^1]\n\n[^1]: Handbook — chunk c1\n")])
    out = await site(store, tmp_path)
    soup = BeautifulSoup((out / "pages" / "vacuum.html").read_text(), "html.parser")
    assert [h.get_text() for h in soup.find_all("h1")] == ["Vacuum"]
    assert "Vacuum reclaims dead rows." in soup.get_text()


async def test_aliases_are_shown_once(store, tmp_path: Path):
    await store.upsert([
        Page(id="checkpointer", slug="checkpointer", title="Checkpointer", kind="entity",
             aliases=["checkpoint process"],
             markdown="# Checkpointer\n\nIt writes dirty pages.\n\n*Also known as:* checkpoint process\n"),
        Page(id="bgwriter", slug="bgwriter", title="Background Writer", kind="entity",
             aliases=["bgwriter"], markdown="# Background Writer\n\nIt writes ahead.\n"),
    ])
    out = await site(store, tmp_path)
    for slug in ("checkpointer", "bgwriter"):
        text = soup(out / "pages" / f"{slug}.html").get_text(" ")
        assert (text.count("checkpoint process") + text.count("bgwriter")) == 1, slug


async def test_a_hostile_source_passage_is_shown_as_text(store, tmp_path: Path):
    from compendium.storage.records import Chunk

    await store.upsert([Chunk(id="c0ffee0003", document_id="d-hb", ordinal=2,
                              text="Bad <script>alert(1)</script> and <img src=x onerror=alert(1)>. **Bold** stays.",
                              heading_path=["Lumen handbook", "Hostile"])])
    out = await site(store, tmp_path)
    source = soup(out / "sources" / "handbook-durability.html")
    passage = source.select_one("#c-c0ffee0003")
    assert passage.find_all(["script", "img"]) == []
    assert "<script>alert(1)</script>" in passage.get_text()
    assert passage.select_one("#c-c0ffee0003-s1 strong").get_text() == "Bold"


def test_a_node_that_is_one_page_counts_that_page_in_the_contents():
    from compendium.export.site import outline_view
    from compendium.export.snapshot import WikiSnapshot

    pages = [Page(id=s, slug=s, title=t, markdown=f"# {t}\n", kind="entity")
             for s, t in (("user-view", "The User's View"), ("crates", "Crates"), ("ship", "Shipping"))]
    wiki = WikiSnapshot(pages=pages, entities=[], relations=[], topics=[])
    tree = {"title": "", "slug": "", "pages": [], "children": [
        {"title": "The User's View", "slug": "user-view", "pages": [], "children": []},
        {"title": "Crates", "slug": "crates", "pages": ["ship"], "children": []},
        {"title": "Unpublished", "slug": "gone", "pages": [], "children": []},
    ]}
    assert [n["total"] for n in outline_view(wiki, tree)] == [1, 2, 0]
