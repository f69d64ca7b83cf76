"""Topic and outline overview pages without a model: what the group is, then its members with what each is."""

from __future__ import annotations

from compendium.engines.offline import OfflineEngine
from compendium.engines.tasks import EvidenceItem, LinkTarget, PageRequest
from compendium.templates.schema import Template


async def write(title: str, evidence: list[EvidenceItem], links: list[LinkTarget]) -> str:
    request = PageRequest(slug="group", title=title, kind="topic", description="", aliases=[],
                          evidence=evidence, links=links)
    return await OfflineEngine().write_page(request, Template(name="t"))


def lead_of(page: str) -> str:
    return page.split("\n\n")[1]


async def test_a_man_page_node_opens_on_its_commands_name_line_linked_and_not_listed_again():
    evidence = [
        EvidenceItem(ref=1, text="`git-clean`: Remove untracked files from the working tree", chunk_id="a",
                     document="git-clean(1)", heading_path=["NAME"]),
        EvidenceItem(ref=2, text="`clean.requireForce`: A boolean to make git-clean do nothing unless given -f.",
                     chunk_id="b", document="git-config(1)", heading_path=["Variables"]),
    ]
    links = [LinkTarget("git-clean", "git-clean"), LinkTarget("clean-requireforce", "clean.requireForce")]
    page = await write("git-clean(1)", evidence, links)
    assert lead_of(page).startswith("[[git-clean|`git-clean`]]: Remove untracked files"), page
    assert page.count("[[git-clean|") == 1, page
    assert "- [[clean-requireforce|`clean.requireForce`]]: A boolean" in page, page


async def test_a_group_named_like_a_document_opens_on_that_documents_first_paragraph():
    evidence = [
        EvidenceItem(ref=1, text="`qthelp_theme`: The HTML theme for the qthelp output.", chunk_id="a",
                     document="Configuration", heading_path=["Options for QtHelp output"]),
        EvidenceItem(ref=2, text="Sphinx can build help files for Qt, listing every page of the project.",
                     chunk_id="b", kind="excerpt", document="QtHelp builder", heading_path=["QtHelp builder"]),
    ]
    links = [LinkTarget("qthelp-theme", "qthelp_theme")]
    page = await write("QtHelp builder", evidence, links)
    assert lead_of(page).startswith("Sphinx can build help files for Qt"), page
    assert "- [[qthelp-theme|`qthelp_theme`]]: The HTML theme" in page, page


async def test_a_members_line_cut_before_its_list_or_an_aside_does_not_say_what_it_is():
    evidence = [
        EvidenceItem(ref=1, text="`doctest_path`: A list of directories added to `sys.path` by the builder.",
                     chunk_id="a", document="doctest", heading_path=["Configuration"]),
        EvidenceItem(ref=2, text="`doctest_default_flags`: By default, these options are enabled:", chunk_id="b",
                     document="doctest", heading_path=["Configuration"]),
        EvidenceItem(ref=3, text="`doctest_show_successes`: New in version 7.2.", chunk_id="c",
                     document="doctest", heading_path=["Configuration"]),
    ]
    links = [LinkTarget("doctest-path", "doctest_path"), LinkTarget("doctest-default-flags", "doctest_default_flags"),
             LinkTarget("doctest-show-successes", "doctest_show_successes")]
    page = await write("Doctest options", evidence, links)
    assert "these options are enabled:" not in page and "New in version" not in page, page
    assert "[[doctest-default-flags|doctest_default_flags]]" in page  # listed by name among the links


async def test_an_api_entry_is_listed_with_its_definition_block_whatever_keyword_or_owner_precedes_its_name():
    evidence = [
        EvidenceItem(ref=1, text="`class RasterField`: Stores a `GDALRaster`.", chunk_id="a",
                     document="Model API", heading_path=["Spatial Field Types", "RasterField"]),
        EvidenceItem(ref=2, text="`class django.views.generic.list.ListView`: A page representing a list of objects.",
                     chunk_id="b", document="Generic display views", heading_path=["ListView"]),
        EvidenceItem(ref=3, text="`GeometryField.dim`: This option customizes the coordinate dimension.",
                     chunk_id="c", document="Model API", heading_path=["Geometry Field Options", "dim"]),
        EvidenceItem(ref=4, text="Fields and views are the parts every project is built from.",
                     chunk_id="d", document="Fields and views", heading_path=[]),
    ]
    links = [LinkTarget("rasterfield", "RasterField"), LinkTarget("listview", "ListView"),
             LinkTarget("geometryfield", "GeometryField")]
    page = await write("Fields and views", evidence, links)
    assert lead_of(page).startswith("Fields and views are the parts"), page
    assert "[[rasterfield|`class RasterField`]]: Stores a `GDALRaster`." in page, page
    assert "[[listview|`class django.views.generic.list.ListView`]]: A page representing" in page, page
    assert "[[geometryfield|`GeometryField.dim`]]" not in page  # an option of the field is not the field


async def test_a_part_opens_on_its_first_paragraph_after_the_asides_the_authors_put_first():
    text = ("New in version 1.3.\n\nThese options influence the Apple Help output. This builder derives from the "
            "HTML builder.")
    evidence = [
        EvidenceItem(ref=1, text="`applehelp_bundle_id`: The bundle ID for the help book bundle.", chunk_id="a",
                     document="Configuration", heading_path=["Configuration", "Options for Apple Help output"]),
        EvidenceItem(ref=2, text=text, chunk_id="b", kind="excerpt", document="Configuration",
                     heading_path=["Configuration", "Options for Apple Help output"]),
        EvidenceItem(ref=3, text="Defaults to language, or if that is not set, to `'en'`.", chunk_id="c",
                     kind="excerpt", document="Configuration",
                     heading_path=["Configuration", "Options for Apple Help output"]),  # a passage cut mid-section
    ]
    page = await write("Options for Apple Help output", evidence, [LinkTarget("applehelp-bundle-id", "applehelp_bundle_id")])
    assert lead_of(page) == "These options influence the Apple Help output.[^2]", page
    assert "- [[applehelp-bundle-id|`applehelp_bundle_id`]]: The bundle ID" in page, page


async def test_a_definition_block_opening_a_passage_defines_its_term_not_the_section():
    evidence = [
        EvidenceItem(ref=1, text="`epub_exclude_files`: A list of files that are not included in the epub file.",
                     chunk_id="a", kind="excerpt", document="Configuration",
                     heading_path=["Configuration", "Options for epub output"]),
        EvidenceItem(ref=2, text="These options influence the epub output. The HTML options also apply.", chunk_id="b",
                     kind="excerpt", document="Configuration", heading_path=["Configuration", "Options for epub output"]),
    ]
    page = await write("Options for epub output", evidence, [LinkTarget("epub-exclude-files", "epub_exclude_files")])
    assert lead_of(page) == "These options influence the epub output.[^2]", page
    assert "- [[epub-exclude-files|`epub_exclude_files`]]: A list of files" in page, page


async def test_a_contents_pages_title_for_a_document_finds_its_opening_paragraph():
    evidence = [
        EvidenceItem(ref=1, text="There are many ways you can contribute to Sphinx, be it filing bug reports or writing code.",
                     chunk_id="a", kind="excerpt", document="Contributing to Sphinx", heading_path=["Contributing to Sphinx"]),
        EvidenceItem(ref=2, text="`Bug Reports`: Reports of what Sphinx does wrong, filed on the issue tracker.",
                     chunk_id="b", document="Contributing to Sphinx", heading_path=["Contributing to Sphinx", "Bug Reports"]),
    ]
    page = await write("Contribute to Sphinx", evidence, [LinkTarget("bug-reports", "Bug Reports")])
    assert lead_of(page).startswith("There are many ways you can contribute"), page


async def test_a_group_page_listing_no_member_besides_its_lead_cites_nothing():
    evidence = [EvidenceItem(ref=1, text="The `LOGGING_CONFIG` setting defines the callable that configures loggers.",
                             chunk_id="a", document="Logging", heading_path=["Logging", "Custom logging configuration"])]
    page = await write("LOGGING_CONFIG", evidence, [])
    assert "[^" not in page, page


async def test_a_member_whose_name_holds_brackets_is_listed_in_the_authors_words_unlinked():
    evidence = [
        EvidenceItem(ref=1, text="`objectsize[:padded]`: The size of a `blob` object.", chunk_id="a",
                     document="git-ls-tree(1)", heading_path=["FIELD NAMES"]),
        EvidenceItem(ref=2, text="`objectname`: The name of the object.", chunk_id="b",
                     document="git-ls-tree(1)", heading_path=["FIELD NAMES"]),
        EvidenceItem(ref=3, text="Field names are the placeholders a format string may hold.", chunk_id="c",
                     document="git-ls-tree(1)", heading_path=["FIELD NAMES"]),
    ]
    links = [LinkTarget("objectname", "objectname"), LinkTarget("objectsize-padded", "objectsize[:padded]")]
    page = await write("Field names", evidence, links)
    assert "- `objectsize[:padded]`: The size of a `blob` object.[^1]" in page, page
    assert "[[objectsize-padded|`objectsize[:padded]`]]" not in page
    assert "objectsize[:padded]]]" not in page  # its page is linked by its slug


async def test_release_notes_among_a_groups_members_are_listed_newest_first():
    evidence = [
        EvidenceItem(ref=1, text="Release notes say what changed in each version of Django.", chunk_id="r",
                     kind="excerpt", document="Release notes", heading_path=["Release notes"]),
        *(EvidenceItem(ref=i + 2, text=f"`Django {v} release notes`: Welcome to Django {v} and its changes.",
                       chunk_id=f"c{i}", document="Release notes", heading_path=["Release notes", v])
          for i, v in enumerate(("3.1", "3.10", "2.2"))),
    ]
    links = [LinkTarget(f"django-{v}", f"Django {v} release notes") for v in ("3.1", "3.10", "2.2")]
    page = await write("Release notes", evidence, links)
    lines = [line for line in page.splitlines() if line.startswith("- ")]
    assert [line.split("|")[0] for line in lines] == ["- [[django-3.10", "- [[django-3.1", "- [[django-2.2"], page


async def test_a_group_no_sentence_says_what_it_is_gets_no_page_of_facts_though_its_members_are_defined():
    evidence = [
        EvidenceItem(ref=1, text="`class RasterField`: Stores a `GDALRaster`.", chunk_id="a",
                     document="Model API", heading_path=["Spatial Field Types", "RasterField"]),
        EvidenceItem(ref=2, text="`class django.views.generic.list.ListView`: A page representing a list of objects.",
                     chunk_id="b", document="Generic display views", heading_path=["ListView"]),
        EvidenceItem(ref=3, text="A form often shows fields and views together.", chunk_id="c", document="Forms"),
    ]
    links = [LinkTarget("rasterfield", "RasterField"), LinkTarget("listview", "ListView")]
    page = await write("Fields and views", evidence, links)
    assert "[^" not in page, page  # one member's definition would stand in for the group's: withheld
    assert "[[rasterfield|RasterField]]" in page and "[[listview|ListView]]" in page


async def test_a_group_page_listing_no_member_with_what_it_is_cites_nothing_though_it_has_a_lead():
    evidence = [
        EvidenceItem(ref=1, text="The configuration variables described below control how gitweb finds repositories.",
                     chunk_id="a", kind="excerpt", document="gitweb.conf(5)", heading_path=["Location of repositories"]),
        EvidenceItem(ref=2, text="Set `projects_list` to the index file for the list of projects.", chunk_id="b",
                     document="gitweb.conf(5)", heading_path=["Location of repositories"]),
    ]
    page = await write("Location of repositories", evidence, [LinkTarget("projects-list", "projects_list")])
    assert "[^" not in page, page  # a lead pointing at members the page does not show
    assert "[[projects-list|projects_list]]" in page, page  # its members stay linked


async def test_a_members_line_saying_what_it_is_like_is_no_line():
    evidence = [
        EvidenceItem(ref=1, text="`git-credential`: Retrieve and store user credentials", chunk_id="a",
                     document="git-credential(1)", heading_path=["NAME"]),
        EvidenceItem(ref=2, text="The exact format is the same as the input/output format of the plumbing command.",
                     chunk_id="b", document="gitcredentials(7)", heading_path=["CUSTOM HELPERS"]),
        EvidenceItem(ref=3, text="`host`: The remote hostname for a network credential.", chunk_id="c",
                     document="git-credential(1)", heading_path=["INPUT/OUTPUT FORMAT"]),
    ]
    links = [LinkTarget("git-credential", "git-credential"), LinkTarget("exact-format", "exact format"),
             LinkTarget("host", "host")]
    page = await write("git-credential", evidence, links)
    assert "- [[host|`host`]]: The remote hostname" in page, page
    assert "The exact format is" not in page and "[[exact-format|exact format]]" in page, page


async def test_a_classs_constructor_entry_is_no_line_saying_what_the_class_is():
    evidence = [
        EvidenceItem(ref=1, text="Provides support classes for multi-threaded programming.", chunk_id="a",
                     kind="excerpt", document="org.apache.commons.lang3.concurrent",
                     heading_path=["Package org.apache.commons.lang3.concurrent"]),
        EvidenceItem(ref=2, text="`CircuitBreakingException(String message)`: Creates a new instance of "
                     "`CircuitBreakingException` and initializes it with the given message.", chunk_id="b",
                     document="CircuitBreakingException", heading_path=["Constructor Details"]),
        EvidenceItem(ref=3, text="`LazyInitializer`: This class provides a generic implementation of the lazy "
                     "initialization pattern.", chunk_id="c", document="LazyInitializer", heading_path=["Class LazyInitializer"]),
    ]
    links = [LinkTarget("circuitbreakingexception", "CircuitBreakingException"),
             LinkTarget("lazyinitializer", "LazyInitializer")]
    page = await write("Package org.apache.commons.lang3.concurrent", evidence, links)
    assert "- [[lazyinitializer|`LazyInitializer`]]: This class provides" in page, page
    assert "Creates a new instance" not in page and "[[circuitbreakingexception|CircuitBreakingException]]" in page, page
    evidence[1] = EvidenceItem(ref=2, text="`CircuitBreakingException(String message)`: Constructs a "
                               "CircuitBreakingException.", chunk_id="b", document="CircuitBreakingException")
    page = await write("Package org.apache.commons.lang3.concurrent", evidence, links)
    assert "Constructs a" not in page, page


async def test_a_group_named_after_a_section_opens_on_the_passage_first_under_its_heading():
    heading = ["Configuration", "Options for HTML output"]
    evidence = [
        EvidenceItem(ref=1, text="Other option values depend on splitter value which you choose.", chunk_id="late",
                     kind="excerpt", document="Configuration", heading_path=heading, position=9000),
        EvidenceItem(ref=2, text="These options influence HTML output.", chunk_id="first", kind="excerpt",
                     document="Configuration", heading_path=heading, position=4000),
        EvidenceItem(ref=3, text="`html_title`: The title for HTML documentation.", chunk_id="t",
                     document="Configuration", heading_path=heading, position=4100),
    ]
    page = await write("Options for HTML output", evidence, [LinkTarget("html-title", "html_title")])
    assert lead_of(page).startswith("These options influence HTML output."), page
