"""Golden tests per reader: block kinds, levels, heading paths and text exactly as expected.

The expected blocks live in tests/ingest/golden/*.json; after a deliberate change of a
reader, rewrite them with COMPENDIUM_UPDATE_GOLDEN=1 and review the diff."""

from __future__ import annotations

import json
import os
from pathlib import Path

from compendium.ingest.readers import read_document

from .documents import minimal_pdf, write_docx
from .reference_page import reference_page

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"


def blocks_of(doc) -> list[dict]:
    out = []
    for b in doc.blocks:
        item = {"kind": b.kind, "path": list(b.heading_path), "text": doc.text[b.start : b.end]}
        if b.level:
            item["level"] = b.level
        if b.language:
            item["language"] = b.language
        if b.rows:
            item["rows"] = [list(r) for r in b.rows]
        if b.term:
            item["term"] = b.term
        if b.scope:
            item["scope"] = b.scope
        out.append(item)
    return out


def check_golden(name: str, doc) -> None:
    got = {"title": doc.title, "format": doc.format, "metadata": doc.metadata, "blocks": blocks_of(doc)}
    path = GOLDEN / f"{name}.json"
    if os.environ.get("COMPENDIUM_UPDATE_GOLDEN") == "1":
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert got["title"] == expected["title"] and got["metadata"] == expected["metadata"]
    for i, (g, e) in enumerate(zip(got["blocks"], expected["blocks"], strict=False)):
        assert g == e, f"block {i} of {name}"
    assert len(got["blocks"]) == len(expected["blocks"])
    # every block's span is exact and blocks are separated by one blank line
    assert doc.text == "\n\n".join(b["text"] for b in got["blocks"])


def test_rest_roles_directives_literal_blocks_tables_and_sphinx_constructs(capfd):
    doc = read_document(HERE / "fixtures" / "tidal.rst")
    check_golden("tidal.rst", doc)
    assert doc.format == "rest"
    prose = [b["text"] for b in blocks_of(doc) if b["kind"] not in ("code", "table")]
    for leak in (":func:", ":class:", "``", ".. ", "::", "===", "---", ":ref:", ":doc:", "|project|", "toctree"):
        assert not any(leak in text for text in prose), leak
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # docutils prints no system messages


def test_markdown_front_matter_tables_and_code():
    doc = read_document(HERE / "fixtures" / "geothermal.md")
    check_golden("geothermal.md", doc)
    assert doc.metadata["tags"] == ["energy", "geothermal"]
    assert doc.metadata["aliases"] == ["Ground heat", "Earth energy"]
    assert "title:" not in doc.text and "aliases" not in doc.text


def test_html_reference_page_with_300_sections_and_chrome(tmp_path):
    html, expected = reference_page(300)
    path = tmp_path / "grid.html"
    path.write_text(html, encoding="utf-8")
    doc = read_document(path)
    got = [(b.kind, b.level, b.heading_path, doc.text[b.start : b.end]) for b in doc.blocks]
    assert got == expected
    assert len({b.heading_path for b in doc.blocks if b.kind == "heading" and b.level == 3}) == 300
    for chrome in ("Prev", "Home", "Sidebar link", "Table of Contents", "Menu entry", "Copyright", "¶", "chrome"):
        assert chrome not in doc.text, chrome
    assert doc.title == "Grid Reference"


def _pdf_with_outline(tmp_path: Path) -> Path:
    from pypdf import PdfReader, PdfWriter

    pages = [
        ["Wave Energy Report", "Waves carry energy across oceans.", "Buoys", "Point absorbers ride the swell."],
        ["Oscillating columns", "Air is pushed through a turbine.", "It spins one way only."],
        ["Appendix", "Sea states by month."],
    ]
    raw = tmp_path / "raw.pdf"
    raw.write_bytes(minimal_pdf(pages))
    writer = PdfWriter(clone_from=PdfReader(raw))
    report = writer.add_outline_item(title="Wave Energy Report", page_number=0)
    writer.add_outline_item(title="Buoys", page_number=0, parent=report)
    writer.add_outline_item(title="Oscillating columns", page_number=1, parent=report)
    writer.add_outline_item(title="Appendix", page_number=2)
    path = tmp_path / "waves.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    return path


def test_pdf_headings_come_from_the_outline(tmp_path):
    doc = read_document(_pdf_with_outline(tmp_path))
    check_golden("waves.pdf", doc)


def test_docx_heading_styles_lists_code_and_a_table_kept_whole(tmp_path):
    path = write_docx(
        tmp_path / "grid.docx",
        [
            ("Title", "Grid Handbook"),
            ("Heading 1", "Storage"),
            ("", "Batteries  store\tpower."),
            ("List Bullet", "Lithium"),
            ("List Bullet 2", "Iron phosphate"),
            ("List Number", "Charge"),
            ("List Number", "Discharge"),
            ("Heading 2", "Ratings"),
            ("table", "kind|hours|notes\nlithium|4|fast\nflow|10|slow"),
            ("Quote", "Storage is the missing half of the grid."),
            ("Code", "capacity = power * hours"),
            ("Code", "print(capacity)"),
            ("Heading 3", "Costs"),
            ("", "Costs fall every year."),
        ],
        title="",
    )
    doc = read_document(path)
    check_golden("grid.docx", doc)
