"""An outline node's overview page, written without a model."""

from __future__ import annotations

from compendium.engines.offline import OfflineEngine
from compendium.engines.tasks import EvidenceItem, LinkTarget, PageRequest
from compendium.templates.schema import Template


async def test_an_overview_titled_apart_from_its_documents_page_opens_on_that_documents_first_paragraph():
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
