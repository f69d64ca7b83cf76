"""A page's lead is what its authors wrote to define the subject: a class's entry over a sentence
of prose naming it, the opening of the section on the subject's objects; a remark ("Note that
...") leads only when nothing else can."""

from __future__ import annotations

from compendium.engines.offline import OfflineEngine
from compendium.engines.tasks import EvidenceItem, PageRequest
from compendium.templates.schema import Template
from tests.offline.test_reference_pages import _compile


def _lead(markdown: str) -> str:
    return [part for part in markdown.split("\n\n") if part.strip()][1]


def _entry(kind: str, name: str, signature: str, text: str) -> str:
    """A Sphinx description entry (`dl.py`) with its signature and its text."""
    return (f'<dl class="py {kind}"><dt class="sig sig-object py" id="{name}">'
            f'<em class="property"><span class="pre">{kind}</span> </em>'
            f'<span class="sig-name descname"><span class="pre">{signature}</span></span></dt>'
            f"<dd><p>{text}</p></dd></dl>")


def test_a_class_entry_leads_over_prose_saying_what_the_class_is(tmp_path):
    reference = ("<html><head><title>Caches</title></head><body><h1>Caches</h1><h2>Cache classes</h2>"
                 + _entry("class", "cache.LayeredCache", "LayeredCache",
                          "This class first reads from memory, and falls back to disk for the entries that do "
                          "not fit in memory.")
                 + "</body></html>")
    guide = ("<html><body><h1>Configuring caches</h1><p>The cache is chosen in the settings. "
             "<code>LayeredCache</code> is the default cache class. "
             "<code>LayeredCache</code> needs a writable folder.</p></body></html>")
    pages = _compile(tmp_path, {"caches.html": reference, "guide.html": guide})
    lead = _lead(pages["LayeredCache"].markdown)
    assert lead.startswith("`class LayeredCache`: This class first reads from memory"), lead


def test_a_function_entry_does_not_displace_the_prose_defining_the_word_it_is_named_after(tmp_path):
    reference = ("<html><head><title>Jobs</title></head><body><h1>Jobs</h1><h2>Checkpoints</h2>"
                 "<p>A checkpoint is a marker within a job that lets it resume from there rather than "
                 "from the start.</p>"
                 + _entry("function", "checkpoint", "checkpoint(using=None)", "Creates a new checkpoint.")
                 + "<p>Each checkpoint is written to the job's log.</p></body></html>")
    pages = _compile(tmp_path, {"jobs.html": reference})
    page = next(p for title, p in pages.items() if title.lower().startswith("checkpoint"))
    assert _lead(page.markdown).startswith("A checkpoint is a marker within a job"), page.markdown


TEMPLATE = Template(name="docs")


async def _write(title: str, evidence: list[EvidenceItem]) -> str:
    request = PageRequest(slug=title.lower(), title=title, kind="entity", description="", aliases=[],
                          evidence=evidence, links=[])
    return await OfflineEngine().write_page(request, TEMPLATE)


async def test_the_opening_of_the_section_on_the_subjects_objects_leads():
    evidence = [
        EvidenceItem(ref=1, text="The `ChunkedReply` is not a subclass of `Reply`, because its interface differs.",
                     chunk_id="a", heading_path=["Replies", "ChunkedReply objects"], position=300),
        EvidenceItem(ref=2, text="The `ChunkedReply` class is used to send a reply to the client in pieces. "
                                 "It suits replies that take long to compute.",
                     chunk_id="b", heading_path=["Replies", "ChunkedReply objects"], kind="excerpt", position=100),
    ]
    page = await _write("ChunkedReply", evidence)
    assert _lead(page).startswith("The `ChunkedReply` class is used to send a reply"), page


async def test_a_note_that_qualifies_the_subject_leads_only_when_nothing_else_can():
    evidence = [
        EvidenceItem(ref=1, text="Note that a link must be saved before it can join two records.", chunk_id="a",
                     heading_path=["Record links"], kind="excerpt", support=3, position=400),
        EvidenceItem(ref=2, text="To join two records, use a record link.", chunk_id="b",
                     heading_path=["Record links"], kind="excerpt", position=100),
    ]
    page = await _write("Record links", evidence)
    assert _lead(page).startswith("To join two records, use a record link."), page
    assert "Note that a link must be saved" in page  # still a fact of the page
    alone = await _write("Record links", evidence[:1])
    assert _lead(alone).startswith("Note that a link must be saved"), alone
