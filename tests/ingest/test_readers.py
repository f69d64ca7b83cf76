"""Reading each format into normalised text with headings, and refusing bad files clearly."""

import pytest

from compendium.errors import InputError
from compendium.ingest.readers import read_document

from .documents import minimal_pdf, write_docx

MARKDOWN = """---
title: Solar Handbook
tags: [energy, solar]
date: 2024-05-01
---
# Solar power

Photovoltaic cells turn light into current.

## Panels

- Monocrystalline
- Polycrystalline

```python
watts = volts * amps
```

| kind | efficiency |
| --- | --- |
| mono | 22% |
"""


def kinds(doc):
    return [(b.kind, doc.text[b.start : b.end], b.heading_path) for b in doc.blocks]


def test_markdown_headings_front_matter_and_code(tmp_path):
    path = tmp_path / "solar.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    doc = read_document(path)
    assert doc.format == "markdown"
    assert doc.title == "Solar Handbook"
    assert doc.metadata == {"title": "Solar Handbook", "tags": ["energy", "solar"], "date": "2024-05-01"}
    assert "title:" not in doc.text
    blocks = kinds(doc)
    assert blocks[0] == ("heading", "Solar power", ("Solar power",))
    assert blocks[1] == ("paragraph", "Photovoltaic cells turn light into current.", ("Solar power",))
    assert blocks[2] == ("heading", "Panels", ("Solar power", "Panels"))
    assert blocks[3] == ("item", "- Monocrystalline", ("Solar power", "Panels"))
    assert blocks[4] == ("item", "- Polycrystalline", ("Solar power", "Panels"))
    assert blocks[5] == ("code", "```python\nwatts = volts * amps\n```", ("Solar power", "Panels"))
    assert blocks[6] == ("table", "| kind | efficiency |\n| --- | --- |\n| mono | 22% |", ("Solar power", "Panels"))
    assert doc.blocks[6].rows == (("kind", "efficiency"), ("mono", "22%"))


def test_markdown_title_falls_back_to_first_heading_then_file_name(tmp_path):
    (tmp_path / "a.md").write_text("Intro text.\n\n# Real Title\n\nBody.\n")
    assert read_document(tmp_path / "a.md").title == "Real Title"
    (tmp_path / "wind_farms.md").write_text("Just text, no heading.\n")
    assert read_document(tmp_path / "wind_farms.md").title == "wind farms"


def test_markdown_with_bad_front_matter_warns_and_keeps_the_text(tmp_path):
    path = tmp_path / "bad.md"
    path.write_text("---\ntitle: [unclosed\n---\n# Head\n\nBody.\n")
    doc = read_document(path)
    assert doc.warnings and "front matter" in doc.warnings[0] and "bad.md" in doc.warnings[0]
    assert "Body." in doc.text


def test_html_drops_boilerplate_and_keeps_headings(tmp_path):
    path = tmp_path / "page.html"
    path.write_text(
        "<html><head><title>Wind Energy</title><style>p{color:red}</style>"
        "<script>var tracking = 1;</script></head><body>"
        "<header>Site banner</header><nav><a href='/'>Home</a></nav>"
        "<main><h1>Turbines</h1><p>Blades turn a <b>rotor</b>.</p>"
        "<h2>Offshore</h2><div>Loose text in a div.</div><ul><li>North Sea</li><li>Baltic</li></ul>"
        "<pre>rpm = 15</pre><table><tr><th>site</th><th>MW</th></tr><tr><td>Hornsea</td><td>1200</td></tr></table>"
        "</main><footer>Copyright</footer></body></html>",
        encoding="utf-8",
    )
    doc = read_document(path)
    assert doc.format == "html" and doc.title == "Wind Energy"
    for gone in ("tracking", "color:red", "Site banner", "Home", "Copyright"):
        assert gone not in doc.text
    blocks = kinds(doc)
    assert blocks[0] == ("heading", "Turbines", ("Turbines",))
    assert blocks[1] == ("paragraph", "Blades turn a rotor.", ("Turbines",))
    assert ("paragraph", "Loose text in a div.", ("Turbines", "Offshore")) in blocks
    assert ("item", "- North Sea", ("Turbines", "Offshore")) in blocks
    assert ("item", "- Baltic", ("Turbines", "Offshore")) in blocks
    assert ("code", "```\nrpm = 15\n```", ("Turbines", "Offshore")) in blocks
    assert ("table", "| site | MW |\n| --- | --- |\n| Hornsea | 1200 |", ("Turbines", "Offshore")) in blocks


def test_html_title_from_first_h1_when_no_title_tag(tmp_path):
    path = tmp_path / "p.htm"
    path.write_text("<body><h1>Hydro Dams</h1><p>Water.</p></body>")
    assert read_document(path).title == "Hydro Dams"


def test_pdf_text_and_title(tmp_path):
    path = tmp_path / "report.pdf"
    path.write_bytes(minimal_pdf([["Geothermal Report", "Heat comes from the core."], ["Page two."]]))
    doc = read_document(path)
    assert doc.format == "pdf"
    assert doc.title == "Geothermal Report"
    assert "Heat comes from the core." in doc.text and "Page two." in doc.text
    assert doc.metadata["pages"] == 2
    titled = tmp_path / "t.pdf"
    titled.write_bytes(minimal_pdf([["Body only."]], title="From Metadata"))
    assert read_document(titled).title == "From Metadata"


def test_docx_heading_styles_give_the_heading_path(tmp_path):
    path = write_docx(
        tmp_path / "grid.docx",
        [("Heading 1", "Grid"), ("", "Power flows."), ("Heading 2", "Storage"),
         ("List Bullet", "Batteries"), ("table", "kind|hours\nlithium|4")],
        title="Grid Notes",
    )
    doc = read_document(path)
    assert doc.format == "docx" and doc.title == "Grid Notes"
    assert kinds(doc) == [
        ("heading", "Grid", ("Grid",)),
        ("paragraph", "Power flows.", ("Grid",)),
        ("heading", "Storage", ("Grid", "Storage")),
        ("item", "- Batteries", ("Grid", "Storage")),
        ("table", "| kind | hours |\n| --- | --- |\n| lithium | 4 |", ("Grid", "Storage")),
    ]


def test_text_paragraphs_and_title_from_first_line(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes("\ufeffTidal Notes\r\nLine two.\r\n\r\n\r\nSecond paragraph.\r\n".encode())
    doc = read_document(path)
    assert doc.title == "Tidal Notes"
    assert doc.text == "Tidal Notes\nLine two.\n\nSecond paragraph."
    assert [b.kind for b in doc.blocks] == ["paragraph", "paragraph"]


def test_undecodable_bytes_are_replaced_with_a_warning(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("Caf\xe9 culture in Paris is a long story.\n".encode("latin-1"))
    doc = read_document(path)
    assert "Caf\ufffd culture" in doc.text
    assert doc.warnings and "latin.txt" in doc.warnings[0] and "UTF-8" in doc.warnings[0]


@pytest.mark.parametrize(
    ("name", "data", "words"),
    [
        ("empty.md", b"", "empty"),
        ("blank.txt", b"  \n\n  ", "empty"),
        ("binary.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 20, "binary"),
        ("garbage.md", bytes(range(128, 256)) * 40, "not text"),
        ("broken.pdf", b"%PDF-1.4\nthis is not really a pdf at all", "PDF"),
        ("broken.docx", b"PK\x03\x04 not a real zip archive", "DOCX"),
        ("notes.rtf", b"{\\rtf1 hello}", "unsupported"),
    ],
)
def test_bad_inputs_raise_input_error_naming_the_file(tmp_path, name, data, words):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        read_document(path)
    assert name in str(info.value)
    assert words in str(info.value)


def test_files_over_the_size_limit_are_refused(tmp_path):
    path = tmp_path / "huge.txt"
    path.write_text("word " * 3000)
    with pytest.raises(InputError, match=r"huge\.txt.*over the .* limit"):
        read_document(path, max_bytes=10_000)
    assert read_document(path, max_bytes=20_000).text


def test_pdf_without_text_is_refused(tmp_path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(minimal_pdf([[]]))
    with pytest.raises(InputError, match="no text"):
        read_document(path)


def test_xhtml_with_an_xml_declaration_reads_without_warnings(tmp_path):
    page = tmp_path / "manual.html"
    page.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>WAL</title></head>'
        "<body><h1>Write-Ahead Logging</h1><p>WAL is a standard method.</p></body></html>",
        encoding="utf-8",
    )
    doc = read_document(page)  # filterwarnings=error: a parser warning would fail here
    assert doc.title == "WAL" and "standard method" in doc.text


def test_html_site_chrome_marked_by_class_is_dropped_but_a_header_holding_the_title_is_kept(tmp_path):
    page = tmp_path / "ref.html"
    page.write_text(
        "<html><head><title>SPI_prepare</title></head><body>"
        '<div class="navheader"><table><tr><td>Prev</td><td>Up</td><td>Next</td></tr></table></div>'
        '<div class="page-header"><h1>SPI_prepare</h1></div>'
        "<h2>Return Value</h2><p>Returns a plan for the statement.</p>"
        '<div id="breadcrumbs">Home / Server / SPI</div>'
        '<div class="navfooter">Prev | Up | Next</div></body></html>',
        encoding="utf-8",
    )
    doc = read_document(page)
    assert "Prev" not in doc.text and "Home / Server" not in doc.text
    assert "SPI_prepare" in doc.text and "Returns a plan for the statement." in doc.text
    assert any(b.kind == "heading" and doc.text[b.start:b.end] == "Return Value" for b in doc.blocks)


def test_txt_that_parses_as_rest_is_read_as_rest_and_plain_text_stays_text(tmp_path):
    rst = tmp_path / "guide.txt"
    rst.write_text("Guide\n=====\n\nUse :func:`run` with ``fast=True``.\n\n.. note:: Keep it short.\n")
    doc = read_document(rst)
    assert doc.format == "rest"
    assert kinds(doc) == [
        ("heading", "Guide", ("Guide",)),
        ("paragraph", "Use `run` with `fast=True`.", ("Guide",)),
        ("paragraph", "Keep it short.", ("Guide",)),
    ]
    plain = tmp_path / "notes.txt"
    plain.write_text("Shopping list\n\nmilk: two bottles\n==> not a title\n")
    assert read_document(plain).format == "text"


def test_docx_style_based_on_a_heading_style_is_a_heading(tmp_path):
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    chapter = document.styles.add_style("Chapter Head", WD_STYLE_TYPE.PARAGRAPH)
    chapter.base_style = document.styles["Heading 2"]
    document.add_heading("Top", 1)
    document.add_paragraph("Chapter", style="Chapter Head")
    document.add_paragraph("Body text.")
    document.save(str(tmp_path / "styled.docx"))
    doc = read_document(tmp_path / "styled.docx")
    assert [(b.kind, b.level, b.heading_path) for b in doc.blocks] == [
        ("heading", 1, ("Top",)),
        ("heading", 2, ("Top", "Chapter")),
        ("paragraph", 0, ("Top", "Chapter")),
    ]


def test_html_table_spans_keep_every_column_in_place(tmp_path):
    page = tmp_path / "spans.html"
    page.write_text(
        "<table><tr><th>When</th><th>Event</th><th>Row</th></tr>"
        "<tr><td rowspan=2>BEFORE</td><td>INSERT</td><td>Tables</td></tr><tr><td>TRUNCATE</td><td>-</td></tr>"
        "<tr><td colspan=2>Either</td><td>Views</td></tr><tr><td rowspan=65534>Last</td></tr></table>"
    )
    doc = read_document(page)
    assert doc.blocks[0].rows == (
        ("When", "Event", "Row"),
        ("BEFORE", "INSERT", "Tables"),
        ("BEFORE", "TRUNCATE", "-"),
        ("Either", "", "Views"),
        ("Last", "", ""),
    )


def test_docx_cell_merged_across_columns_keeps_the_columns_in_place(tmp_path):
    import docx

    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    for i, cell in enumerate(table.rows[0].cells):
        cell.text = f"h{i}"
    table.cell(1, 0).merge(table.cell(1, 1)).text = "wide"
    table.cell(1, 2).text = "x"
    document.save(str(tmp_path / "merged.docx"))
    assert read_document(tmp_path / "merged.docx").blocks[0].rows == (("h0", "h1", "h2"), ("wide", "", "x"))
