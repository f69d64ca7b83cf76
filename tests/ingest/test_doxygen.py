"""Doxygen HTML: a member's detail is read under its own name, and the boxes that repeat it
elsewhere (the summary table, the hidden code tooltips) are not read as text."""

from __future__ import annotations

from compendium.ingest.readers import read_document

PAGE = """<html><head><title>depot: The crate functions</title></head><body>
<div class="header"><div class="headertitle"><div class="title">The crate functions<div class="ingroups">
<a class="el" href="group__depot.html">The depot API</a></div></div></div></div>
<table class="memberdecls"><tr class="heading"><td colspan="2"><h2 class="groupheader">Functions</h2></td></tr>
<tr class="memitem:ga1"><td class="memItemLeft">int&#160;</td><td class="memItemRight">
<a class="el" href="#ga1">depot_pack</a> (depot_crate crate)</td></tr>
<tr class="memdesc:ga1"><td class="mdescLeft">&#160;</td><td class="mdescRight">Pack a crate. <a href="#ga1">More...</a></td></tr>
</table>
<h2 class="groupheader">Function Documentation</h2>
<h2 class="memtitle"><span class="permalink"><a href="#ga1">&#9670;&nbsp;</a></span>depot_pack()</h2>
<div class="memitem"><div class="memdoc"><p>Pack a crate for shipping. </p></div></div>
<div class="fragment"><div class="line">depot_pack(crate);
<div class="ttc" id="aga1"><div class="ttname">depot_pack</div><div class="ttdoc">Pack a crate.</div></div>
</div></div>
</body></html>"""


def _read(tmp_path, name: str, html: str):
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    return read_document(path)


def test_a_doxygen_member_is_read_under_its_name_and_its_summary_and_tooltips_are_not(tmp_path):
    doc = _read(tmp_path, "group__crates.html", PAGE)
    headings = [doc.text[b.start:b.end] for b in doc.blocks if b.kind == "heading"]
    assert "depot_pack()" in headings  # the "◆" anchor is the page's chrome
    assert not any("◆" in h for h in headings)
    assert "Pack a crate for shipping." in doc.text
    assert "More..." not in doc.text and "Pack a crate." not in doc.text.replace("Pack a crate for", "")
    # the page's own title box names it, not the <title> that puts the project first; the group
    # breadcrumb inside the box is navigation
    assert doc.title == "The crate functions" and "The depot API" not in doc.text


MEMBER = """<html><head><title>depot: The crate functions</title></head><body>
<h2 class="memtitle"><span class="permalink"><a href="#ga2">&#9670;&nbsp;</a></span>depot_name()</h2>
<div class="memitem"><div class="memproto">
      <table class="memname">
        <tr>
          <td class="memname">const char * depot_name </td>
          <td>(</td>
          <td class="paramtype"><a class="el" href="structdepot.html">depot_crate</a>&#160;</td>
          <td class="paramname"><em>crate</em></td><td>)</td>
        </tr>
      </table>
</div><div class="memdoc">
<p>Get the name of a crate. </p>
<p>The name is owned by the crate.</p>
</div></div>
</body></html>"""


def test_a_doxygen_member_prototype_is_the_term_its_description_defines(tmp_path):
    doc = _read(tmp_path, "group__names.html", MEMBER)
    defined = [(doc.text[b.start:b.end], b.term) for b in doc.blocks if b.kind == "definition"]
    assert defined == [("`depot_name ( depot_crate crate )`: Get the name of a crate.", "depot_name")]
