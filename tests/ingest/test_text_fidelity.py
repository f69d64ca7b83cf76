"""What a document says reaches a page unaltered: code keeps its brackets and back-ticks."""

from __future__ import annotations

from compendium.engines.tasks import EvidenceItem
from compendium.ingest.readers import read_document
from compendium.phases.citations import clean_page

from .documents import minimal_pdf, tight_pdf

TIGHT = [
    "As a way of showing our commitment to open source we publish every change we make",
    "to the engine together with the measurements that made us choose it over the others",
    "and each release names the people who reviewed it before it was tagged and shipped",
    "so that anyone reading the history can follow why the code is shaped the way it is",
]


def test_a_footnote_marker_is_read_only_outside_code():
    page = (
        "# Patterns\n\n"
        "Append `|[^[:space:]]` to the pattern.[^1] Quote ``a`[^2]`` as written.[^1]\n\n"
        "```\nword = re.compile(\"[^ ]+\")\n```\n\n"
        "Unknown markers outside code go.[^9]\n"
    )
    cleaned = clean_page(page, [], [EvidenceItem(1, "Append ...", "c1")])
    assert "Append `|[^[:space:]]` to the pattern.[^1]" in cleaned.markdown
    assert "Quote ``a`[^2]`` as written.[^1]" in cleaned.markdown
    assert 'word = re.compile("[^ ]+")' in cleaned.markdown
    assert "Unknown markers outside code go.\n" in cleaned.markdown
    assert cleaned.counters["removed_citations"] == 1


def test_pdf_words_set_closer_than_a_space_keep_their_spaces(tmp_path):
    path = tmp_path / "tight.pdf"
    path.write_bytes(tight_pdf(TIGHT, gap=1.0))
    doc = read_document(path)
    assert " ".join(doc.text.split()) == " ".join(TIGHT)


def test_pdf_text_with_ordinary_spaces_reads_as_pypdf_reads_it(tmp_path):
    path = tmp_path / "plain.pdf"
    path.write_bytes(minimal_pdf([["A subject of some length, set the usual way.", "Supercalifragilistic words stay."]]))
    doc = read_document(path)
    assert doc.text == "A subject of some length, set the usual way. Supercalifragilistic words stay."
