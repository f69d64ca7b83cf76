"""Written pages are checked: only known links and cited refs survive, with footnotes we write."""

from compendium.engines.tasks import EvidenceItem
from compendium.phases.citations import body_of, clean_page, summary_of, unlink

from .golden_files import load


def test_clean_page_golden():
    golden = load("refine_citations")
    evidence = [EvidenceItem(**e) for e in golden["evidence"]]
    page = clean_page(golden["markdown"], golden["allowed"], evidence)
    markdown, outlinks, cited, counters = page
    expected = golden["expected"]
    assert markdown == expected["markdown"]
    assert outlinks == expected["outlinks"]
    assert cited == expected["cited_chunk_ids"]
    assert counters == expected["counters"]
    assert summary_of(markdown) == expected["summary"]
    # The model's own footnote definitions are gone; ours cite document and headings.
    assert "made up by the model" not in markdown
    assert "[^2]: Lovelace notes › Note G — chunk ck-1" in markdown


def test_citing_a_chunk_id_directly_is_accepted():
    evidence = [EvidenceItem(ref=1, text="t", chunk_id="abc123", document="Doc")]
    page = clean_page("Fact [^abc123].", [], evidence)
    assert page.markdown == "Fact[^1].\n\n[^1]: Doc — chunk abc123\n"
    assert page.cited_chunk_ids == ["abc123"]


def test_a_page_without_citations_gets_no_footnotes():
    page = clean_page("Plain text with [[x]].", [], [])
    assert page.markdown == "Plain text with x.\n"
    assert body_of(page.markdown) == "Plain text with x."


def test_unlink_turns_links_to_deleted_pages_into_text():
    text, n = unlink("See [[gone|the old page]], [[gone]] and [[kept]].", ["gone"])
    assert (text, n) == ("See the old page, gone and [[kept]].", 2)


def test_summary_skips_headings_and_strips_markers():
    md = "# Title\n\n> quote\n\nThe *first* sentence[^1] cites [[a|A]]. Second one.\n\n[^1]: x — chunk c"
    assert summary_of(md) == "The first sentence cites A."
    assert summary_of("") == ""


def test_a_summary_drops_markup_but_keeps_identifiers_whole():
    from compendium.phases.citations import summary_of

    page = "# T\n\nStandbys wait `max_standby_streaming_delay` for **WAL** _replay_.[^1] More text."
    assert summary_of(page) == "Standbys wait max_standby_streaming_delay for WAL replay."


def test_a_related_list_keeps_no_name_that_leads_nowhere():
    evidence = [EvidenceItem(ref=1, text="A fact.", chunk_id="c1", document="Doc")]
    md = "# Pair\n\nA fact.[^1]\n\n## Related\n\n- [[field-details|Field Details]]\n- [[triple|Triple]]\n"
    page = clean_page(md, ["triple"], evidence)
    assert "Field Details" not in page.markdown and "- [[triple|Triple]]" in page.markdown
    assert page.counters["unlinked_links"] == 1
    page = clean_page(md, [], evidence)  # none of its links stands: no empty heading either
    assert "## Related" not in page.markdown and page.markdown.startswith("# Pair\n\nA fact.[^1]")
    text, n = unlink(md, ["triple", "field-details"])  # after a deletion, the same
    assert (n, "## Related" in text) == (2, False)
