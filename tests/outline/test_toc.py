"""The HTML reader keeps a table of contents' links (with their nesting) for the outline, and
drops the TOC from the text as before."""

from __future__ import annotations

import json
from pathlib import Path

from compendium.ingest.readers.html import read_html
from compendium.ingest.readers.model import Deadline

DOCBOOK = b"""<html><head><title>Part II. The SQL Language</title></head><body>
<div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc">
<dt><span class="chapter"><a href="sql-syntax.html">4. SQL Syntax</a></span></dt>
<dd><dl><dt><a href="sql-syntax-lexical.html">4.1. Lexical Structure</a></dt>
<dt><a href="sql-syntax-lexical.html#KEYWORDS">4.1.1. Keywords</a></dt></dl></dd>
<dt><span class="chapter"><a href="ddl.html">5. Data <b>Definition</b></a></span></dt>
</dl></div>
<p>This part describes the use of the SQL language in PostgreSQL.</p>
</body></html>"""


def test_toc_links_are_kept_with_their_depth_and_left_out_of_the_text():
    doc = read_html(DOCBOOK, Path("sql.html"), Deadline("sql.html", 10))
    assert doc.metadata["toc"] == [
        [1, "sql-syntax.html", "4. SQL Syntax"],
        [2, "sql-syntax-lexical.html", "4.1. Lexical Structure"],
        [1, "ddl.html", "5. Data Definition"],
    ]
    assert "Lexical Structure" not in doc.text and "describes the use of the SQL" in doc.text


def test_a_page_without_a_toc_has_no_toc_metadata():
    doc = read_html(b"<html><body><p>Plain.</p><ul><li><a href='x.html'>x</a></li></ul></body></html>",
                    Path("p.html"), Deadline("p.html", 10))
    assert "toc" not in doc.metadata


_READING_ORDER = """
import json
from compendium.outline.toc import TocPage, toc_tree
pages = [TocPage(f"index-{n}", f"part{n}/index.html", ((1, "a.html"), (1, "b.html"))) for n in range(8)]
paths = {f"part{n}/{name}": f"{name[0]}{n}" for n in range(8) for name in ("index.html", "a.html", "b.html")}
print(json.dumps(toc_tree(pages, paths)[1]))
"""


def test_tocs_with_as_many_entries_are_read_in_the_same_order_by_every_process():
    import subprocess
    import sys

    orders = {subprocess.run([sys.executable, "-c", _READING_ORDER], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout for seed in range(6)}
    assert len(orders) == 1
    position = json.loads(orders.pop())
    assert [d for d in sorted(position, key=position.get) if d.startswith("index")] == [f"index-{n}" for n in range(8)]


def test_a_pages_link_up_to_its_parent_is_kept_with_the_parents_title():
    docbook = (b'<html><head><title>13.1. Introduction</title></head><body><div class="navheader"><table><tr>'
               b'<td><a accesskey="u" href="mvcc.html" title="Chapter 13. Concurrency Control">Up</a></td>'
               b'</tr></table></div><p>PostgreSQL provides tools for concurrent access.</p></body></html>')
    sphinx = (b'<html><head><title>os</title></head><body><div class="related"><ul>'
              b'<li><a href="../index.html">3.11 Documentation</a> &#187;</li>'
              b'<li class="nav-item nav-item-2"><a href="allos.html" accesskey="U">Generic Operating '
              b'System Services</a></li></ul></div><p>This module is portable.</p></body></html>')
    linked = b'<html><head><link rel="up" href="ddl.html" title="Chapter 5. Data Definition"/></head><body><p>x</p></body></html>'
    read = [read_html(data, Path("page.html"), Deadline("page.html", 10)).metadata.get("up")
            for data in (docbook, sphinx, linked)]
    assert read == [["mvcc.html", "Chapter 13. Concurrency Control"], ["allos.html", "Generic Operating System Services"],
                    ["ddl.html", "Chapter 5. Data Definition"]]
    for page in (b"<html><body><p><a href='x.html'>Up</a></p></body></html>",  # not the navigation's
                 b"<html><body><p><a accesskey='u' href='x.html'>Up</a></p></body></html>"):  # names nothing
        assert "up" not in read_html(page, Path("p.html"), Deadline("p.html", 10)).metadata
