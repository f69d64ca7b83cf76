"""A generated HTML reference page, 300 sections under mixed nesting plus navigation chrome,
with the blocks a faithful reader must return for it."""

from __future__ import annotations

CHROME = (
    '<div class="navheader"><table width="100%"><tr><th colspan="3">Chapter 9. Grid Reference</th></tr>'
    '<tr><td><a href="p.html">Prev</a></td><td>Up</td><td><a href="n.html">Next</a></td></tr></table><hr></div>'
    '<nav class="site"><ul><li><a href="/">Home</a></li><li><a href="/docs">Docs</a></li></ul></nav>'
    '<ol class="breadcrumb"><li>Home</li><li>Manual</li><li>Grid</li></ol>'
    '<div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3><ul><li>Sidebar link</li></ul></div>'
    '<div class="toc"><p><b>Table of Contents</b></p><dl class="toc"><dt>9.1. Buses</dt><dt>9.2. Lines</dt></dl></div>'
    '<div id="menu"><a href="#">Menu entry</a></div>'
)
FOOTER = (
    '<div class="navfooter"><table><tr><td>Prev</td><td>Home</td><td>Next</td></tr></table></div>'
    '<footer><p>Copyright chrome</p></footer>'
)


def reference_page(sections: int = 300) -> tuple[str, list[tuple[str, int, tuple[str, ...], str]]]:
    """(html, expected [(kind, level, heading_path, text)]) for a page of `sections` sections."""
    html = ["<!DOCTYPE html><html><head><title>Grid Reference</title><style>h2{}</style>",
            "<script>var chrome = 1;</script></head><body>", CHROME, '<div class="body" role="main">']
    expected: list[tuple[str, int, tuple[str, ...], str]] = []
    top = "Grid Reference"
    html.append('<h1>Grid Reference<a class="headerlink" href="#top">¶</a></h1>')
    expected.append(("heading", 1, (top,), top))
    html.append("<p>Every component of the grid, one section each.</p>")
    expected.append(("paragraph", 0, (top,), "Every component of the grid, one section each."))
    chapter = ""
    for i in range(sections):
        if i % 10 == 0:  # a chapter: an h2 sitting deep inside DocBook-style title divs
            chapter = f"9.{i // 10 + 1}. Part {i // 10 + 1}"
            html.append(f'<div class="sect1"><div class="titlepage"><div><div><h2 class="title">{chapter}</h2>'
                        "</div></div></div>")
            expected.append(("heading", 2, (top, chapter), chapter))
        name = f"component_{i}"
        path = (top, chapter, name)
        style = i % 5
        if style == 0:
            html.append(f"<section id='s{i}'><h3>{name}</h3><p>The {name} carries load number {i}.</p></section>")
            # a name heading's first paragraph defines the name; it names it already, so it reads as written
            expected += [("heading", 3, path, name), ("definition", 0, path, f"The {name} carries load number {i}.")]
        elif style == 1:  # heading buried five divs deep, its text outside them
            html.append(f"<div><div><div><div><div><h3>{name}<a class='headerlink' href='#x'>¶</a></h3></div></div>"
                        f"</div></div></div><p>Rated at <code>{i} kV</code> nominal.</p>")
            expected += [("heading", 3, path, name), ("definition", 0, path, f"`{name}`: Rated at `{i} kV` nominal.")]
        elif style == 2:  # a signature as a definition list (a definition under its signature), footnote after it
            html.append(f"<h3>{name}</h3><dl class='function'><dt class='sig'><span>connect_{i}</span>(a, b)</dt>"
                        f"<dd><p>Connects two buses.</p><p>Returns nothing.</p></dd></dl>"
                        f"<div class='footnote'><p>[{i}] Measured in 2024.</p></div>")
            expected += [("heading", 3, path, name), ("definition", 0, path, f"`connect_{i}(a, b)`: Connects two buses."),
                         ("paragraph", 0, path, "Returns nothing."),
                         ("paragraph", 0, path, f"[{i}] Measured in 2024.")]
        elif style == 3:  # a table, then a sub-sub-section whose heading sits in a <div>
            html.append(f"<h3>{name}</h3><table><tr><th>Field</th><th>Unit</th></tr><tr><td>flow</td><td>MW</td></tr>"
                        f"</table><div class='sect3'><h4>Limits of {name}</h4><ul><li>Hot</li><li>Cold<ul><li>Icy</li>"
                        "</ul></li></ul></div>")
            sub = (*path, f"Limits of {name}")
            expected += [("heading", 3, path, name), ("table", 0, path, "| Field | Unit |\n| --- | --- |\n| flow | MW |"),
                         ("heading", 4, sub, f"Limits of {name}"), ("item", 1, sub, "- Hot"), ("item", 1, sub, "- Cold"),
                         ("item", 2, sub, "  - Icy")]
        else:  # code with a language, an ordered list
            html.append(f"<div class='sect2'><h3>{name}</h3></div><div class='highlight-python'><pre>"
                        f"load = {i}\nprint(load)</pre></div><ol><li>Open</li><li>Close</li></ol>")
            expected += [("heading", 3, path, name), ("code", 0, path, f"```python\nload = {i}\nprint(load)\n```"),
                         ("item", 1, path, "1. Open"), ("item", 1, path, "2. Close")]
        if i % 10 == 9:
            html.append("</div>")
    html += ["</div>", FOOTER, "</body></html>"]
    return "".join(html), expected
