"""Structure stays structure downstream: code and tables never become sentences, claims or names."""

from __future__ import annotations

from compendium.engines.offline.extract import extract_chunk
from compendium.engines.offline.sentences import sentences_of
from compendium.engines.tasks import ChunkInput
from compendium.ingest.chunking import chunk_document
from compendium.ingest.readers import read_document
from compendium.templates.schema import Template

TEMPLATE = Template(name="docs")

PAGE = """<html><body><h1>Triggers</h1>
<p>A trigger runs a function when a table changes.</p>
<table><tr><th>Event</th><th>Timing</th></tr><tr><td>INSERT</td><td>BEFORE</td></tr>
<tr><td>UPDATE</td><td>AFTER Statement Level</td></tr></table>
<p>The change remains visible to later triggers.</p>
<pre>typedef struct TriggerData { NodeTag type; Relation tg_relation; } TriggerData;</pre>
<ul><li>Row triggers fire once per row</li><li>Statement Triggers fire once</li></ul>
<dl><dt>tg_event Flags</dt><dd>Describes the Event that fired.</dd></dl>
</body></html>"""


def chunks_of(tmp_path, max_tokens=400):
    path = tmp_path / "triggers.html"
    path.write_text(PAGE)
    doc = read_document(path)
    return doc, chunk_document(doc, max_tokens=max_tokens, overlap_tokens=0, document_id="d")


def test_chunks_record_their_blocks(tmp_path):
    doc, chunks = chunks_of(tmp_path)
    assert len(chunks) == 1
    chunk = chunks[0]
    kinds = [kind for kind, *_ in chunk.blocks]
    assert kinds == ["heading", "paragraph", "table", "paragraph", "code", "item", "item", "definition"]
    for _kind, start, end, *_ in chunk.blocks:
        assert chunk.text[start:end] in doc.text
    # a definition keeps its term in its text and records the name it defines
    assert chunk.blocks[-1][3:] == ("tg_event Flags", "")
    table = next(chunk.text[s:e] for k, s, e, *_ in chunk.blocks if k == "table")
    assert table == "| Event | Timing |\n| --- | --- |\n| INSERT | BEFORE |\n| UPDATE | AFTER Statement Level |"


def test_sentences_come_from_prose_blocks_one_at_a_time(tmp_path):
    _, chunks = chunks_of(tmp_path)
    chunk = chunks[0]
    found = sentences_of(chunk.text, [list(b) for b in chunk.blocks])
    # a definition list's term opens its definition: the sentence names what it describes
    assert [s.text for s in found if s.term] == []
    assert [s.text for s in found if not s.term] == [
        "A trigger runs a function when a table changes.",
        "The change remains visible to later triggers.",
        "Row triggers fire once per row",
        "Statement Triggers fire once",
        "tg_event Flags: Describes the Event that fired.",
    ]


def test_code_and_table_text_never_become_claims_or_names(tmp_path):
    _, chunks = chunks_of(tmp_path)
    chunk = chunks[0]
    reply = extract_chunk(
        ChunkInput(label="c1", text=chunk.text, heading_path=list(chunk.heading_path), blocks=[list(b) for b in chunk.blocks]),
        TEMPLATE,
    )
    structure = ("INSERT", "UPDATE", "BEFORE", "AFTER", "typedef", "TriggerData", "NodeTag", "tg_relation", "tg_event")
    names = [e.name for e in reply.entities] + [c.term for c in reply.concepts]
    # the definition list's term names what its definition describes: tg_event is a name there
    assert not [n for n in names if any(word in n for word in structure if word != "tg_event")]
    assert "tg_event" in names
    # a definition's sentence carries its term (tg_event); code and table words never reach a claim
    assert not [c.text for c in reply.claims if any(word in c.text for word in structure if word != "tg_event")
                or "|" in c.text]


def test_an_over_budget_code_block_is_split_at_lines_not_sentences(tmp_path):
    lines = "\n".join(f"x{i} = compute({i}). Then(more)" for i in range(200))
    path = tmp_path / "code.md"
    path.write_text(f"# Code\n\n```python\n{lines}\n```\n")
    doc = read_document(path)
    chunks = chunk_document(doc, max_tokens=60, overlap_tokens=20, document_id="d")
    assert len(chunks) > 5
    for chunk in chunks:
        for line in chunk.text.split("\n"):
            assert line in ("Code", "", "```python", "```") or (line.startswith("x") and line.endswith("Then(more)"))
        assert all(kind in ("heading", "code") for kind, _, _ in chunk.blocks)
    # code is never repeated as an overlap: each line appears once
    joined = "\n".join(c.text for c in chunks)
    assert joined.count("x17 = compute(17)") == 1


def test_a_page_laid_out_in_tables_is_read_as_its_headings_and_paragraphs(tmp_path):
    from compendium.ingest.readers import read_document

    path = tmp_path / "memory.html"
    path.write_text("""<html><head><title>Memory</title></head><body><table width="100%"><tr>
<td><img src="logo.png" alt="Logo"/></td><td><table><tr><td><h1>The Toolkit</h1><h2>Memory</h2></td></tr></table></td>
</tr></table><table><tr><td valign="top"><table><tr><th>Menu</th></tr><tr><td>Main Tutorial</td></tr></table></td>
<td valign="top"><h3>General overview</h3><p>The toolkit frees memory with its own routines.</p>
<table border="1"><tr><th>routine</th><th>use</th></tr><tr><td>xmlFree</td><td>frees a block</td></tr></table>
<h3>Debugging</h3><p>A debug build tracks every block it allocates.</p></td></tr></table></body></html>""",
                    encoding="utf-8")
    doc = read_document(path)
    headings = [b.heading_path[-1] for b in doc.blocks if b.kind == "heading"]
    assert headings == ["The Toolkit", "Memory", "General overview", "Debugging"]
    paragraphs = {doc.text[b.start:b.end]: b.heading_path[-1] for b in doc.blocks if b.kind == "paragraph"}
    assert paragraphs["The toolkit frees memory with its own routines."] == "General overview"
    assert paragraphs["A debug build tracks every block it allocates."] == "Debugging"
    tables = [b.rows for b in doc.blocks if b.kind == "table"]
    assert (("routine", "use"), ("xmlFree", "frees a block")) in tables  # a data table stays a table


LICENCES = """<html><head><title>Depot manual: C. Licenses</title></head><body>
<h1 class="appendix">C. Licenses</h1>
<p>The files of this package are covered by the licenses indicated in each file.</p>
<h2 class="appendixsec"><a href="toc.html#1">C.1 GNU Free Documentation License</a></h2>
<h2 class="heading">Preamble</h2>
<p>The purpose of this License is to make a manual free in the sense of freedom.</p>
<p>The "Secondary Sections" is a named appendix of the Document that deals exclusively with the
relationship of the publishers or authors of the Document to the Document's overall subject.</p>
<h2 class="appendixsec">C.2 Crate Formats</h2>
<p>The Depot stores each crate in the Crate Archive Format.</p>
</body></html>"""


def test_a_licences_text_under_texinfo_headings_gives_no_subject_and_no_fact(tmp_path):
    path = tmp_path / "depot_20.html"
    path.write_text(LICENCES)
    doc = read_document(path)
    chunks = chunk_document(doc, max_tokens=60, overlap_tokens=0, document_id="d")
    # texinfo's unnumbered @heading ("Preamble") stays inside the section before it
    paths = {tuple(c.heading_path) for c in chunks}
    assert ("C. Licenses", "C.1 GNU Free Documentation License", "Preamble") in paths
    said: dict[tuple[str, ...], list[str]] = {}
    for c in chunks:
        reply = extract_chunk(ChunkInput(label="c", text=c.text, document_title=doc.title,
                                         heading_path=list(c.heading_path), blocks=[list(b) for b in c.blocks]),
                              TEMPLATE)
        names = [e.name for e in reply.entities] + [k.term for k in reply.concepts]
        said.setdefault(tuple(c.heading_path), []).extend(names + [cl.text for cl in reply.claims])
    licence = [x for p, xs in said.items() if "C.1 GNU Free Documentation License" in p for x in xs]
    assert licence == []  # neither "Secondary Sections" nor any sentence of the licence
    kept = [x for p, xs in said.items() if "C.2 Crate Formats" in p for x in xs]
    assert "The Depot stores each crate in the Crate Archive Format." in kept
