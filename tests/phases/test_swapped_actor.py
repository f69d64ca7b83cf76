"""REFINE through the scripted server: a sentence that gives its evidence's action to another
actor is dropped from the published page, the sentences that restate the evidence stay."""

from __future__ import annotations

import re

from compendium.phases import plan as plan_phase
from compendium.phases import refine as refine_phase
from compendium.storage.records import Chunk, Page
from compendium.templates.schema import Template
from tests.support.llm_responder import EVIDENCE_LINE

from .kb_seed import knowledge_base

TEMPLATE = Template(name="t", artifacts=["wiki_pages"])
BOOKKEEPING = ("Vacuum records each page's free space in the Free Space Map, sets the all-visible and "
               "all-frozen bits in the Visibility Map, and updates the table's `relfrozenxid`.")
SCAN = ("Vacuum reads the table's Heap Files page by page, skipping pages that the Visibility Map marks "
        "all-visible.")
# As the 1.5B model wrote it (benchmarks/reports/real_model.md): every word is the evidence's.
SWAPPED = "The Visibility Map records each page's free space in the Free Space Map."


def vacuum_kb() -> list:
    """kb_seed's small knowledge base, its two subjects Vacuum and the Visibility Map, its passages
    the sample corpus's on what one Vacuum run does."""
    records = knowledge_base(people=["Vacuum", "Visibility Map"], planets=[])
    for record in records:
        if isinstance(record, Chunk):
            record.text = f"{SCAN} {BOOKKEEPING}"
    return records


def writer(written: list[str]):
    """Writes every evidence line as given, then the swapped sentence citing the line it twists."""

    def respond(request) -> str:  # type: ignore[no-untyped-def]
        lines = list(EVIDENCE_LINE.finditer(request.prompt))
        twisted = next((m["ref"] for m in lines if "records each page's free space" in m["text"]), None)
        page = "\n\n".join(f"{m['text'].strip()} [^{m['ref']}]" for m in lines)
        if twisted is not None:
            page += f"\n\n{SWAPPED} [^{twisted}]"
        written.append(page)
        return page

    return respond


async def test_a_swapped_actor_is_dropped_from_the_published_page(server, store, make_ctx):
    await store.upsert(vacuum_kb())
    written: list[str] = []
    server.responder = writer(written)
    ctx = make_ctx(TEMPLATE)
    await plan_phase.run(TEMPLATE, ctx)
    result = await refine_phase.run(TEMPLATE, ctx)
    assert result.failed == 0, result.details
    assert any(SWAPPED in page for page in written)  # the model did write it
    pages = {p.slug: p async for p in store.scan(Page)}
    published = [p for p in pages.values() if p.status == "active" and "Free Space Map" in p.markdown]
    assert published
    for page in published:
        body = re.sub(r"\[\^\d+\]", "", page.markdown)
        assert "The Visibility Map records" not in body
        assert "Vacuum records each page's free space in the Free Space Map" in body
