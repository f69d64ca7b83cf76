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


def test_a_node_named_like_a_page_but_for_a_man_pages_section_has_that_page_not_a_second_one():
    from compendium.outline import OutlineNode
    from compendium.outline.stored import pages_named_like_nodes
    from compendium.storage.plans import Subject

    commit = OutlineNode("n1", "git-commit(1)", "doc:git-commit.html", subjects=["e-commit", "e-verbose"])
    templates = OutlineNode("n2", "Templates", "doc:topics/templates.html", subjects=["e-templates"])
    subjects = [Subject("e-commit", "git-commit", "entity"), Subject("e-verbose", "commit.verbose", "entity"),
                Subject("e-templates", "TEMPLATES", "entity")]
    # git-commit's page is the overview of its man page's node; the TEMPLATES setting's page is
    # not the overview of the part titled "Templates".
    assert pages_named_like_nodes([OutlineNode("r", "Commands", children=[commit, templates])], subjects) == {
        "n1": "e-commit"}



def test_a_node_named_like_a_modules_page_but_for_its_tagline_has_that_page():
    from compendium.outline import OutlineNode
    from compendium.outline.stored import pages_named_like_nodes
    from compendium.storage.plans import Subject

    viewcode = OutlineNode("n1", "sphinx.ext.viewcode -- Add links to highlighted source code",
                           "doc:usage/extensions/viewcode.html", subjects=["e-viewcode", "e-epub"])
    ranged = OutlineNode("n2", "git-config(1) (git-config – gc.cruftPacks)", "run:a", subjects=["e-config"])
    subjects = [Subject("e-viewcode", "sphinx.ext.viewcode", "entity"),
                Subject("e-epub", "viewcode_enable_epub", "entity"), Subject("e-config", "git-config", "entity")]
    # The module's page is the overview of the part its title names; a run titled by a range of
    # pages ("git-config – gc.cruftPacks") names no page.
    assert pages_named_like_nodes([OutlineNode("r", "Extensions", children=[viewcode, ranged])], subjects) == {
        "n1": "e-viewcode"}

async def test_a_setting_named_in_capitals_does_not_lead_the_overview_of_the_part_titled_in_words():
    evidence = [
        EvidenceItem(ref=1, text="`MANAGERS`: A list in the same format as `ADMINS`.", chunk_id="a",
                     document="Settings", heading_path=["Settings", "MANAGERS"]),
        EvidenceItem(ref=2, text="`Manager.objects`: The default manager of a model.", chunk_id="b",
                     document="Managers", heading_path=["Managers", "Manager names"]),
    ]
    links = [LinkTarget("managers", "MANAGERS"), LinkTarget("manager-objects", "Manager.objects")]
    request = PageRequest(slug="managers-overview", title="Managers overview", kind="topic", description="",
                          aliases=[], evidence=evidence, links=links)
    page = await OfflineEngine().write_page(request, Template(name="t"))
    assert "A list in the same format" not in page.split("## ")[0], page


def test_a_sections_overview_is_written_from_the_first_passage_under_its_heading():
    from compendium.outline import OutlineNode
    from compendium.outline.placement import SourcePassage
    from compendium.outline.stored import _own_passages

    heading = ("Configuration", "Options for HTML output")
    passages = {
        "c9": SourcePassage("c9", "d1", 9, heading),  # a later passage: it opens on an entry's tail
        "c4": SourcePassage("c4", "d1", 4, heading),  # "These options influence HTML output ..."
        "c2": SourcePassage("c2", "d1", 2, ("Configuration", "Options for LaTeX output")),
        "x1": SourcePassage("x1", "d2", 1, heading),  # another document's section of that name
    }
    node = OutlineNode("n", "Options for HTML output", "heading:usage/configuration.html#Options for HTML output")
    own = _own_passages(node, {}, {}, passages, {"usage/configuration.html": "d1", "other.html": "d2"})
    assert own == ["c4"]
