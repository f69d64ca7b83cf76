"""Several small page updates in one call: each page keeps only an item that cites its own new evidence."""

from __future__ import annotations

import pytest

from compendium.engines.factory import build_engine
from compendium.engines.offline import OfflineEngine
from compendium.engines.tasks import EvidenceItem, LinkTarget, PageRequest
from compendium.engines.usage import UsageMeter
from compendium.templates.schema import Template
from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import GARBAGE_MARKDOWN, LLMServer

TEMPLATE = Template(name="wiki")
FACTS = {
    "buffer-pool": ("Buffer Pool", "The Buffer Pool prefetches neighbouring pages."),
    "redo-journal": ("Redo Journal", "The Redo Journal compresses every segment."),
    "archive-daemon": ("Archive Daemon", "The Archive Daemon runs once an hour."),
}


def update(slug: str) -> PageRequest:
    """An UPDATE of a page that cites [^1] and [^2] already and has one new item, [^3]."""
    title, fact = FACTS[slug]
    old = [EvidenceItem(ref=n, text=f"{title} old fact {n}.", chunk_id=f"{slug}-old{n}", document="Doc") for n in (1, 2)]
    new = EvidenceItem(ref=3, text=fact, chunk_id="new-chunk", document="Notes", about=["storage-engine"])
    return PageRequest(
        slug=slug, title=title, kind="entity", description=f"{title} is a part.", aliases=[],
        evidence=[*old, new], links=[LinkTarget("storage-engine", "Storage Engine"), LinkTarget("unrelated", "Unrelated")],
        existing_markdown=f"{title} old fact 1. [^1]\n\n## History\n\n{title} old fact 2. [^2]", new_refs=[3],
    )


@pytest.fixture
async def engine(llm_server):
    built = build_engine(settings_for(llm_server), TEMPLATE, usage=UsageMeter())
    yield built
    await built.close()


async def test_one_call_answers_every_page_with_its_own_new_sentences(engine, llm_server: LLMServer):
    written = await engine.update_pages([update(slug) for slug in FACTS], TEMPLATE)
    assert llm_server.calls["chat"] == 1 and llm_server.calls["page_additions"] == 1
    assert set(written) == set(FACTS)
    for slug, (_title, fact) in FACTS.items():
        assert written[slug] == f"{fact} [^3]"
    prompt = llm_server.requests[0].prompt
    # The pages' headings and new evidence travel, not the pages themselves nor their old evidence.
    assert "Sections: History" in prompt and "old fact" not in prompt
    assert "[[storage-engine]]" in prompt and "[[unrelated]]" not in prompt  # links the new evidence names


@pytest.mark.parametrize("fault", ["bad_item", "lost_item"])
async def test_a_bad_item_costs_only_its_own_page(engine, llm_server: LLMServer, fault: str):
    llm_server.fail_next(1, fault)  # the first page's item cites nothing, or is missing
    written = await engine.update_pages([update(slug) for slug in FACTS], TEMPLATE)
    assert llm_server.calls["chat"] == 1  # the other items are good: no repair
    assert set(written) == {"redo-journal", "archive-daemon"}
    assert GARBAGE_MARKDOWN.strip() not in "".join(written.values())


async def test_a_reply_with_no_usable_item_is_repaired_once_then_kept_from_every_page(engine, llm_server: LLMServer):
    llm_server.fail_next(2, "garbage")
    assert await engine.update_pages([update("buffer-pool"), update("redo-journal")], TEMPLATE) == {}
    assert llm_server.calls["chat"] == 2  # the reply and its one repair
    llm_server.reset()
    llm_server.fail_next(1, "garbage")
    written = await engine.update_pages([update("buffer-pool"), update("redo-journal")], TEMPLATE)
    assert set(written) == {"buffer-pool", "redo-journal"} and llm_server.calls["chat"] == 2


async def test_the_offline_engine_answers_a_group_as_it_answers_each_page():
    offline = OfflineEngine()
    requests = [update(slug) for slug in FACTS]
    grouped = await offline.update_pages(requests, TEMPLATE)
    assert grouped == {r.slug: await offline.write_page(r, TEMPLATE) for r in requests}
