"""The per-sentence support check pages and answers go through (compendium/support.py)."""

from __future__ import annotations

from compendium.engines.page_support import supported_text
from compendium.support import check_text, content_words, overlap, split_sentences

EVIDENCE = {
    "1": "The WAL writer flushes write-ahead log records to disk before the data pages are written.",
    "2": "TOAST stores large column values out of line, in a separate table.",
}


def test_a_sentence_restating_its_evidence_is_kept_and_one_its_evidence_does_not_say_is_dropped():
    report = check_text(
        "The WAL writer flushes log records to disk first.[^1] TOAST compresses every index.[^1]", EVIDENCE
    )
    assert report.kept_text == "The WAL writer flushes log records to disk first.[^1]"
    assert (report.citations, report.supported_citations, report.dropped) == (2, 1, 1)
    assert report.unsupported[0].scores["1"] < 0.5


def test_an_uncited_sentence_is_dropped_and_a_page_keeps_only_its_supported_sentences():
    page = "## Storage\n\nIt is very fast and loved by all.\n\nLarge column values are stored out of line.[^2]"
    report = check_text(page, EVIDENCE)
    assert report.uncited == ["It is very fast and loved by all."]
    assert report.kept_text == "## Storage\n\nLarge column values are stored out of line.[^2]"


def test_a_citation_closing_a_paragraph_answers_for_its_sentences_and_is_kept_on_them():
    page = "TOAST stores large values out of line. It keeps them in a separate table. Invented claim here.[^2]"
    report = check_text(page, EVIDENCE)
    # The last sentence carried the marker and goes: the others keep it, written out.
    assert report.kept_text == ("TOAST stores large values out of line.[^2] It keeps them in a separate table.[^2]")


def test_a_heading_left_without_sentences_goes_and_navigation_stays():
    page = "## Lies\n\nThe moon is cheese.[^1]\n\n## WAL\n\nRecords reach disk before data pages.[^1]\n\nSee also [[toast]]."
    kept = check_text(page, EVIDENCE).kept_text
    assert "## Lies" not in kept and "## WAL" in kept and "See also [[toast]]." in kept


def test_a_changed_number_or_name_loses_support():
    evidence = {"1": "The counter is 32 bits wide, so vacuum must freeze old tuples."}
    assert check_text("The counter is 32 bits wide.[^1]", evidence).share == 1.0
    words = content_words("The counter is 64 bits wide.")
    assert overlap(words, evidence["1"]) < 1.0


def test_unknown_citations_are_left_for_the_caller_and_markers_only_pieces_join_their_sentence():
    assert split_sentences("Records go first. [^1] [^9]. Then pages.") == ["Records go first. [^1] [^9].", " Then pages."]
    report = check_text("Records reach disk before data pages. [^1] [^9].", EVIDENCE)
    assert "[^9]" in report.kept_text and report.sentences[0].unknown == ["9"]


def test_a_sentence_next_to_the_wrong_marker_cites_the_item_that_restates_it():
    # As the 1.5B model wrote a page: every sentence carried the next item's marker.
    page = ("The WAL writer flushes write-ahead log records to disk before data pages are written. [^2]\n\n"
            "TOAST stores large column values out of line, in a separate table. [^1]")
    plain = check_text(page, EVIDENCE)
    assert plain.supported_citations == 0 and plain.kept_text == ""
    fixed = check_text(page, EVIDENCE, recite_from=EVIDENCE)
    assert fixed.kept_text == ("The WAL writer flushes write-ahead log records to disk before data pages are written.[^1]\n\n"
                               "TOAST stores large column values out of line, in a separate table.[^2]")
    assert [s.recited for s in fixed.sentences] == ["1", "2"]
    # A sentence no item restates is not moved anywhere: it goes.
    assert check_text("Vacuum eats sandwiches at noon.[^1]", EVIDENCE, recite_from=EVIDENCE).kept_text == ""


def test_a_code_block_no_evidence_holds_is_dropped_and_one_it_holds_stays():
    evidence = {"1": "The query below lists the databases closest to wraparound: ```sql SELECT datname, "
                     "age(datfrozenxid) FROM lumen_database; ```",
                "2": "Vacuum removes dead tuples from tables."}
    page = ("Vacuum removes dead tuples from tables.[^2]\n\n```sql\nSELECT datname,\n  age(datfrozenxid) "
            "FROM lumen_database;\n```\n\n```markdown\n## Vacuum Operation\n\nThe Vacuum operation is a maintenance "
            "operation triggered by several factors.\n```\n")
    kept = supported_text(page, evidence)
    assert "SELECT datname," in kept  # the evidence holds it, line breaks aside
    assert "maintenance operation triggered" not in kept and "```markdown" not in kept  # the model's own prose


def test_a_paragraph_the_page_already_said_is_said_once():
    evidence = {"1": "The depot keeps crates until a truck collects them.", "2": "Crates are weighed at the gate."}
    page = ("# Depot\n\nThe depot keeps crates until a truck collects them.[^1]\n\n"
            "Crates are weighed at the gate.[^2]\n\nThe depot keeps crates until a truck collects them.[^1]\n")
    kept = supported_text(page, evidence)
    assert kept.count("The depot keeps crates") == 1 and "Crates are weighed at the gate.[^2]" in kept
    # Only a whole repeated paragraph goes: a sentence said again inside another paragraph stays.
    mixed = page.replace("Crates are weighed at the gate.[^2]",
                         "Crates are weighed at the gate.[^2] The depot keeps crates until a truck collects them.[^1]")
    assert supported_text(mixed, evidence).count("The depot keeps crates") == 2


def test_a_code_block_the_page_already_showed_is_shown_once():
    evidence = {"1": "Watch the oldest XID: ```sql SELECT datname FROM lumen_database; ``` It grows with every transaction."}
    block = "```sql\nSELECT datname FROM lumen_database;\n```"
    page = f"# XID\n\nWatch the oldest XID:[^1]\n\n{block}\n\nIt grows with every transaction.[^1]\n\n{block}\n"
    assert supported_text(page, evidence).count("SELECT datname") == 1


def test_an_abbreviation_or_a_decimal_number_ends_no_sentence_of_a_page():
    # Cut at "e.g.", the first half would be an uncited sentence, dropped from the page.
    page = "The WAL writer flushes write-ahead log records, e.g. commit records, to disk before the data pages.[^1]"
    assert split_sentences(page) == [page]
    report = check_text(page, EVIDENCE)
    assert report.kept_text == page and not report.uncited


def test_a_marker_opening_a_line_closes_its_sentence():
    # The 1.5B model wrote a page as its evidence lines, marker first: "- [^1] A WAL record ...".
    page = ("- [^1] The WAL writer flushes write-ahead log records to disk before the data pages are written.\n"
            "[^2] TOAST stores large column values out of line, in a separate table. TOAST compresses every index.[^2]")
    report = check_text(page, EVIDENCE)
    assert report.kept_text == (
        "- The WAL writer flushes write-ahead log records to disk before the data pages are written.[^1]\n"
        "TOAST stores large column values out of line, in a separate table.[^2]")


def test_a_line_opening_with_a_marker_is_checked_and_a_footnote_definition_is_not():
    page = "[^1] The moon is made of green cheese.\n\n[^1]: write-ahead-log.md — chunk 3f2a"
    assert check_text(page, EVIDENCE).kept_text == "[^1]: write-ahead-log.md — chunk 3f2a"


def test_a_sentence_dropped_inside_a_cited_run_leaves_no_citation_across_the_gap():
    evidence = {"1": ("With direct I/O the Storage Manager bypasses the Page Cache entirely. "
                      "This removes double buffering and makes memory use predictable. "
                      "The cost is that shared_buffers must be set to most of the memory.")}
    made_up = ("With direct I/O the Storage Manager bypasses the Page Cache entirely. "
               "Direct I/O doubles the speed of every query on every machine. "
               "The cost is that shared_buffers must be set to most of the memory.[^1]")
    kept = check_text(made_up, evidence).kept_text
    assert "doubles the speed" not in kept
    assert "entirely.[^1]" in kept and kept.rstrip().endswith("memory.[^1]")  # each side cites on its own


def test_a_sentence_its_evidence_holds_word_for_word_is_supported_whatever_it_opens_with():
    evidence = {"1": ("With direct I/O the Storage Manager bypasses the Page Cache entirely. "
                      "This removes double buffering and makes memory use predictable, which is why "
                      "the cloud service enables it on its largest instance types.")}
    page = ("With direct I/O the Storage Manager bypasses the Page Cache entirely.[^1] This removes double "
            "buffering and makes memory use predictable, which is why the cloud service enables it on its "
            "largest instance types.[^1]")
    assert "This removes double buffering" in check_text(page, evidence).kept_text


def test_a_copied_sentence_opening_with_it_is_still_read_after_the_sentence_before_it():
    evidence = {"1": "A snapshot records which transactions are in progress. It is taken at the start of a query.",
                "2": "A commit record is written to the WAL when a transaction commits."}
    page = ("A commit record is written to the WAL when a transaction commits.[^2] "
            "It is taken at the start of a query.[^1]")
    assert "It is taken" not in check_text(page, evidence).kept_text  # 'it' would be the commit record
