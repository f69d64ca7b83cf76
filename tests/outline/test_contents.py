"""A contents page of any name, read from the links a page lists: its sections place the pages."""

from __future__ import annotations

from pathlib import Path

from compendium.ingest.readers import read_document
from compendium.outline import build_outline
from compendium.outline.placement import SourceDocument, Structure, place

CONTENTS = """<html><head><title>tool(1)</title></head><body>
<h1>tool(1)</h1>
<h2>OPTIONS</h2><dl><dt>--help</dt><dd>See <a href="tool-help.html">tool-help(1)</a>.</dd></dl>
<ul><li><a href="tool-help.html">tool-help(1)</a></li></ul>
<h2>Commands</h2>
<h3>Main commands</h3>
<dl><dt><a href="tool-add.html">tool-add(1)</a></dt><dd>Add files.</dd>
<dt><a href="tool-commit.html">tool-commit(1)</a></dt><dd>Record changes.</dd></dl>
<h3>Helper commands</h3>
<ul><li><a href="tool-help.html">tool-help(1)</a></li><li><a href="tool-gc.html">tool-gc(1)</a></li>
<li><a href="tool-fsck.html">tool-fsck(1)</a></li></ul>
<div class="rightsidebar"><ul><li><a href="tool-add.html">Add</a></li></ul></div>
</body></html>"""

ALPHABETICAL = "<html><head><title>All pages</title></head><body><ul>" + "".join(
    f'<li><a href="{n}.html">{n}</a></li>' for n in
    ["a-page", "b-page", "c-page", "d-page", "e-page", "f-page", "g-page", "h-page", "i-page", "j-page",
     "tool-add", "tool-commit", "tool-fsck", "tool-gc", "tool-help"]) + "</ul></body></html>"


def _page(title: str) -> str:
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{title} does one thing.</p></body></html>"


def _documents(tmp_path: Path) -> list[SourceDocument]:
    files = {"tool.html": CONTENTS, "all.html": ALPHABETICAL}
    for name in ("tool-add", "tool-commit", "tool-help", "tool-gc", "tool-fsck", *(f"{c}-page" for c in "abcdefghij")):
        files[f"{name}.html"] = _page(f"{name}(1)")
    out = []
    for name, text in sorted(files.items()):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        parsed = read_document(path)
        out.append(SourceDocument.of(name, name, parsed.title, parsed.metadata))
    return out


def test_the_reader_keeps_listed_links_with_their_sections_and_leaves_side_boxes_out(tmp_path: Path) -> None:
    path = tmp_path / "tool.html"
    path.write_text(CONTENTS, encoding="utf-8")
    links = read_document(path).metadata["links"]
    assert ["h", 3, "", "Main commands"] in links
    assert ["a", 1, "tool-add.html", "tool-add(1)"] in links
    assert not any(e[3] == "Add" for e in links)  # the side box's link


def test_a_contents_page_places_pages_in_its_sections(tmp_path: Path) -> None:
    structure = Structure(_documents(tmp_path))
    assert structure.home == "tool.html"
    assert [t for _k, t in structure.segments("tool-add.html", ())] == ["Commands", "Main commands", "tool-add(1)"]
    # Listed under OPTIONS (a part of any reference page) it is a mention; its section is where it is listed.
    assert [t for _k, t in structure.segments("tool-help.html", ())] == ["Commands", "Helper commands", "tool-help(1)"]
    # An alphabetical list of every page is an index, not the contents: what only it lists is
    # placed by its kind (a manual page of section 1).
    assert "a-page.html" not in structure.parent_of
    assert [t for _k, t in structure.segments("a-page.html", ())] == ["Commands", "a-page(1)"]


def test_the_outline_roots_are_the_contents_sections(tmp_path: Path) -> None:
    from compendium.outline.placement import SourcePassage

    documents = _documents(tmp_path)
    structure = Structure(documents)
    subjects = {f"s-{d.id}-{i}": [f"c-{d.id}-{i}"] for d in documents if d.id.startswith("tool-") for i in range(4)}
    passages = {c[0]: SourcePassage(c[0], c[0].split("-", 1)[1].rsplit("-", 1)[0], 0, ()) for c in subjects.values()}
    leaves = place(subjects, {s: s for s in subjects}, {}, passages, structure)
    roots = build_outline(leaves, [])
    titles = {n.title for r in roots for n, _d in r.walk()}
    assert {"Main commands", "Helper commands"} <= titles or {"Commands"} <= titles


def test_pages_no_contents_place_are_grouped_by_their_kind(tmp_path: Path) -> None:
    from compendium.outline.placement import document_kind

    assert document_kind("msgfmt.1.html", "MSGFMT") == "Commands"
    assert document_kind("git-stage.html", "git-stage(1)") == "Commands"
    assert document_kind("gitattributes.html", "gitattributes(5)") == "File formats"
    assert document_kind("releaselog/3_16_0.html", "SQLite Release 3.16.0 On 2017-01-02") == "Release notes"
    assert document_kind("intro.html", "Introduction") is None
    documents = _documents(tmp_path)
    extra = [SourceDocument(f"{n}.1.html", f"{n}.1.html", n.upper()) for n in ("msgfmt", "msgcat", "xgettext")]
    structure = Structure([*documents, *extra])
    assert [t for _k, t in structure.segments("msgfmt.1.html", ())] == ["Commands", "MSGFMT"]
    # The contents page itself is no stray: it is the manual's home.
    assert structure.segments("tool.html", ())[0][1] != "Commands"


def _api(tmp_path: Path) -> list[SourceDocument]:
    """An API manual: an overview listing two packages; one package's summary lists its classes
    in prose so often (each class named several times) that it is no contents page; a nested
    class no page lists; a class whose 'See also' names classes of the other package."""
    classes = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"]
    prose = "".join(f'<p>Use <a href="{c}.html">{c}</a> with <a href="{c}.html">{c}</a> or '
                    f'<a href="{c}.html">{c}</a>.</p>' for c in classes)
    files = {
        "overview-summary.html": "<html><head><title>Overview</title></head><body><h1>Overview</h1><table>"
        + "".join(f'<tr><td><a href="org/{p}/package-summary.html">org.{p}</a></td></tr>' for p in ("one", "two"))
        + "".join(f'<tr><td><a href="org/two/{c}.html">{c}</a></td></tr>' for c in ("Zeta", "Eta", "Theta"))
        + "</table></body></html>",
        "org/one/package-summary.html": "<html><head><title>org.one</title></head><body><h1>Package org.one</h1>"
        + prose + "<ul>" + "".join(f'<li><a href="{c}.html">{c}</a></li>' for c in classes) + "</ul></body></html>",
        "org/two/package-summary.html": "<html><head><title>org.two</title></head><body><h1>Package org.two</h1><ul>"
        + "".join(f'<li><a href="{c}.html">{c}</a></li>' for c in ("Zeta", "Eta", "Theta", "Iota", "Kappa"))
        + "</ul></body></html>",
        "org/two/Zeta.html": "<html><head><title>Zeta</title></head><body><h1>Class Zeta</h1><h2>See also</h2><ul>"
        + "".join(f'<li><a href="../one/{c}.html">{c}</a></li>' for c in classes) + "</ul></body></html>",
    }
    for c in classes:
        files[f"org/one/{c}.html"] = _page(c)
    files["org/one/Alpha.Inner.html"] = _page("Alpha.Inner")
    for c in ("Eta", "Theta", "Iota", "Kappa"):
        files[f"org/two/{c}.html"] = _page(c)
    out = []
    for name, text in sorted(files.items()):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        parsed = read_document(path)
        out.append(SourceDocument.of(name, name, parsed.title, parsed.metadata))
    return out


def test_a_page_no_contents_place_sits_under_the_page_of_its_folder_that_lists_it(tmp_path: Path) -> None:
    structure = Structure(_api(tmp_path))
    # The package summary too repetitive to be contents still lists its classes: they sit under it,
    # not under the folders they are filed in ("Org" > "One"), nor in a root of their own.
    assert [t for _k, t in structure.segments("org/one/Beta.html", ())][-2:] == ["org.one", "Beta"]
    assert not any(k.startswith("dir:") for k, _t in structure.segments("org/one/Beta.html", ()))
    # A nested class no page lists sits under the page of its folder the contents place.
    assert [t for _k, t in structure.segments("org/one/Alpha.Inner.html", ())][-2:] == ["org.one", "Alpha.Inner"]
    # A class's 'See also' in another folder is a mention: it places nothing there.
    assert structure.parent_of.get("org/one/Gamma.html") == "org/one/package-summary.html"
