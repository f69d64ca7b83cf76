"""The quality benchmark's authored definitions: what the authors wrote of a term under it, never
a label, a version note or a sentence announcing an example."""

from __future__ import annotations

from benchmarks.quality_rules import authored_definitions, key
from compendium.storage.records import Chunk


def _chunk(heading: str, *blocks: tuple[str, str] | tuple[str, str, str]) -> Chunk:
    text, spans = "", []
    for kind, piece, *term in blocks:
        start = len(text)
        text += piece + "\n\n"
        spans.append([kind, start, start + len(piece), *term])
    return Chunk(id="c", text=text, heading_path=[heading], blocks=spans)


def _defined(chunk: Chunk, name: str) -> list[str]:
    return [text for keys, text in authored_definitions(chunk) if key(name) in keys]


def test_a_definition_says_something_of_its_term():
    entry = _chunk("Settings", ("heading", "Settings"),
                   ("definition", "`cache_dir`: The folder where built pages are kept.", "cache_dir"))
    assert _defined(entry, "cache_dir") == ["`cache_dir`: The folder where built pages are kept."]
    # a short entry without a full stop is still one ("`--quiet`: print nothing")
    short = _chunk("Options", ("heading", "Options"), ("definition", "`--quiet`: print nothing", "--quiet"))
    assert _defined(short, "--quiet") == ["`--quiet`: print nothing"]
    under = _chunk("Line feeds", ("heading", "Line feeds"),
                   ("paragraph", "A line feed ends a line of text in a file."))
    assert _defined(under, "Line feeds") == ["A line feed ends a line of text in a file."]


def test_a_label_a_version_note_or_an_announced_example_defines_nothing():
    label = _chunk("pagegen", ("heading", "pagegen"), ("definition", "`pagegen`: Sample usage:", "pagegen"))
    assert _defined(label, "pagegen") == []
    note = _chunk("Records", ("heading", "Records"), ("paragraph", "New in version 3.2."))
    assert _defined(note, "Records") == []
    entry_note = _chunk("Settings", ("heading", "Settings"),
                        ("definition", "`page_size`: New in version 0.5.", "page_size"))
    assert _defined(entry_note, "page_size") == []
    rubric = _chunk("Forms", ("heading", "Forms"), ("paragraph", "About this document"))
    assert _defined(rubric, "Forms") == []
    announced = _chunk("XML", ("heading", "XML"), ("paragraph", "The basic record format looks like this:"))
    assert _defined(announced, "XML") == []
    # a sentence that says what the subject is and then shows it still does
    said = _chunk("Rows", ("heading", "Rows"), ("paragraph", "A row is one record of a table. It looks like this:"))
    assert _defined(said, "Rows") == ["A row is one record of a table. It looks like this:"]


def test_an_entry_shown_on_no_page_is_counted_as_such():
    from benchmarks.quality_rules import definitions_shown
    from compendium.storage.records import Page

    chunk = _chunk("OPTIONS",
                   ("definition", "`--keep`: Keeps the crate after shipping.", "--keep"),
                   ("definition", "`--drop`: Drops the crate at the depot.", "--drop"),
                   ("definition", "`--seal`: Seals the crate.", "--seal"))
    page = Page(id="p", slug="ship", title="ship", markdown=(
        "# ship\n\n`--keep`: keeps the crate after shipping[^1]\n\n"  # another source's capital and stop
        "Crates are shipped by rail.[^2] `--drop`: Drops the crate at the depot.[^2]\n\n"
        "[^1]: x — chunk c\n[^2]: x — chunk c\n"))
    shown = definitions_shown([page], [chunk])
    assert (shown["total"], shown["opening"], shown["shown"]) == (3, 1, 2)
    assert shown["nowhere"] == ["`--seal`: Seals the crate."]
