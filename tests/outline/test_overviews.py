"""A node's overview: its own page listing its members, the page it is named like where that page is
all it holds, and that page again where its own overview was withheld."""

from __future__ import annotations

from compendium.outline import OutlineNode
from compendium.outline.stored import published


def _value(slug: str | None, namesake: str | None) -> dict:
    node = OutlineNode(id="n1", title="Database transactions", key="doc:transactions.html",
                       subjects=["s-doc", "s-atomic", "s-savepoint"], slug=slug, namesake=namesake)
    page_of = {"s-doc": "database-transactions", "s-atomic": "atomic", "s-savepoint": "savepoint",
               "n1": "database-transactions-overview"}
    return {"roots": [node.to_dict()], "page_of": page_of}


def test_a_nodes_own_overview_lists_its_pages_its_namesake_among_them():
    tree = published(_value("database-transactions-overview", "s-doc"),
                     {"database-transactions-overview", "database-transactions", "atomic", "savepoint"})
    node = tree["children"][0]
    assert node["slug"] == "database-transactions-overview"
    assert node["pages"] == ["database-transactions", "atomic", "savepoint"]


def test_a_withheld_overview_gives_way_to_the_page_the_node_is_named_like():
    tree = published(_value("database-transactions-overview", "s-doc"),
                     {"database-transactions", "atomic", "savepoint"})
    node = tree["children"][0]
    assert node["slug"] == "database-transactions"  # the document's page, not listed twice
    assert node["pages"] == ["atomic", "savepoint"]
    # Without a namesake the node has no overview page, and every page stays listed.
    plain = published(_value("database-transactions-overview", None), {"database-transactions", "atomic", "savepoint"})
    assert plain["children"][0]["slug"] is None
    assert plain["children"][0]["pages"] == ["database-transactions", "atomic", "savepoint"]


def test_a_namesake_survives_the_stored_round_trip():
    node = OutlineNode(id="n1", title="T", namesake="s1")
    assert OutlineNode.from_dict(node.to_dict()).namesake == "s1"
    assert "namesake" not in OutlineNode(id="n2", title="U").to_dict()  # older outlines read the same


async def test_an_overview_titled_apart_from_its_documents_page_opens_on_that_documents_first_paragraph():
    from compendium.engines.offline import OfflineEngine
    from compendium.engines.tasks import EvidenceItem, LinkTarget, PageRequest
    from compendium.templates.schema import Template

    evidence = [
        EvidenceItem(ref=1, text="Django gives you a few ways to control how database transactions are managed.",
                     chunk_id="a", kind="excerpt", document="Database transactions",
                     heading_path=["Database transactions"]),
        EvidenceItem(ref=2, text="`savepoint`: A savepoint is a marker within a transaction.", chunk_id="b",
                     document="Database transactions", heading_path=["Database transactions", "Savepoints"]),
    ]
    links = [LinkTarget("database-transactions", "Database transactions"), LinkTarget("savepoint", "savepoint")]
    # PLAN titles it apart from the document's page of the same name; the sources write it without "overview".
    request = PageRequest(slug="database-transactions-overview", title="Database transactions overview",
                          kind="topic", description="", aliases=[], evidence=evidence, links=links)
    page = await OfflineEngine().write_page(request, Template(name="t"))
    assert page.split("\n\n")[1].startswith("Django gives you a few ways"), page
    assert "- [[savepoint|`savepoint`]]: A savepoint is a marker" in page, page
