"""Small page updates share one call; a page whose part of the reply is bad is asked alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from compendium.storage.records import Page
from tests.support.llm_server import GARBAGE_MARKDOWN, LLMServer

from .corpus import compile_, make_workspace, records, schemas

# One new section that tells three existing pages one new fact each.
NEW_FACTS = {
    "Storage Engine": "The Storage Engine checksums every block it writes.",
    "Redo Journal": "The Redo Journal compresses each segment before archiving.",
    "Archive Daemon": "The Archive Daemon runs once an hour.",
}
NOTES = "\n## Notes\n\n" + " ".join(NEW_FACTS.values()) + "\n"


async def compiled_then_edited(tmp_path: Path, server: LLMServer) -> tuple[Path, dict[str, Page]]:
    workspace = make_workspace(tmp_path / "ws")
    await compile_(workspace, server)
    before = entity_pages(await records(workspace, server, Page))
    path = workspace / "documents" / "kb" / "gateway.md"
    path.write_text(path.read_text(encoding="utf-8") + NOTES, encoding="utf-8")
    server.reset()
    return workspace, before


def entity_pages(pages: list[Page]) -> dict[str, Page]:
    """Pages by title, leaving out the outline's overview pages (a document's overview may share
    its title with the entity it is about)."""
    return {p.title: p for p in pages if p.kind != "topic"}


def single_updates(server: LLMServer) -> list[str]:
    """Titles of the pages updated by a call of their own."""
    return [r.prompt.split('"', 2)[1] for r in server.requests
            if r.schema_name is None and "Answer with ONLY the new sentences" in r.prompt]


def own_paragraph(markdown: str, sentence: str) -> bool:
    """The sentence stands as a paragraph of its own, with a citation."""
    return any(block.startswith(sentence + "[^") for block in markdown.split("\n\n"))


async def test_small_updates_of_several_pages_cost_one_call(llm_server: LLMServer, tmp_path: Path):
    workspace, before = await compiled_then_edited(tmp_path, llm_server)

    report = await compile_(workspace, llm_server)

    assert report["phases"]["refine"]["grouped_updates"] >= len(NEW_FACTS)
    asked = schemas(llm_server)
    assert asked.get("page_additions") == 1, asked
    assert single_updates(llm_server) == []  # every update went into the grouped call
    group = next(r.prompt for r in llm_server.requests if r.schema_name == "page_additions")
    assert all(f"] {title} (entity)" in group for title in NEW_FACTS)
    after = entity_pages(await records(workspace, llm_server, Page))
    for title, fact in NEW_FACTS.items():
        page = after[title]
        assert own_paragraph(page.markdown, fact), page.markdown
        assert page.version == before[title].version + 1
        assert set(page.cited_chunks) > set(before[title].cited_chunks)  # it cites the new chunk
        others = [f for t, f in NEW_FACTS.items() if t != title]
        assert not any(own_paragraph(page.markdown, f) for f in others)  # no page takes another's facts
        # What the page said before is still there: the update added, it did not rewrite.
        assert before[title].markdown.split("\n\n")[0] in page.markdown

    llm_server.reset()
    report = await compile_(workspace, llm_server)
    assert llm_server.calls["chat"] == 0  # a second run costs nothing
    assert report["pages"]["updated"] == 0


@pytest.mark.parametrize("fault", ["bad_item", "lost_item"])
async def test_a_malformed_item_falls_back_to_that_pages_own_call(llm_server: LLMServer, tmp_path: Path, fault: str):
    workspace, _before = await compiled_then_edited(tmp_path, llm_server)
    llm_server.fail_next(1, fault)  # the first page of the group gets prose citing nothing, or no item

    report = await compile_(workspace, llm_server)

    group = next(r.prompt for r in llm_server.requests if r.schema_name == "page_additions")
    first = group.split("### [u1] ", 1)[1].split(" (", 1)[0]
    assert single_updates(llm_server) == [first]  # that page alone is asked again, on its own
    assert schemas(llm_server)["page_additions"] == 1
    after = entity_pages(await records(workspace, llm_server, Page))
    assert not any(GARBAGE_MARKDOWN.split("\n\n")[1] in p.markdown for p in after.values())
    for title, fact in NEW_FACTS.items():
        assert own_paragraph(after[title].markdown, fact), (title, after[title].markdown)
    refine = report["phases"]["refine"]
    assert (refine["failed"], refine["rejected"], refine["updates_asked_alone"]) == (0, 0, 1)

    llm_server.reset()
    await compile_(workspace, llm_server)
    assert llm_server.calls["chat"] == 0
