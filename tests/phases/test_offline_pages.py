"""MAP, PLAN and REFINE with the offline engine and embedder: no network, a real SQLite file."""

from pathlib import Path

from compendium.engines.offline import OfflineEngine
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.usage import UsageMeter
from compendium.phases import map as map_phase
from compendium.phases import plan as plan_phase
from compendium.phases import refine as refine_phase
from compendium.pipeline.context import CompileContext
from compendium.storage.records import Chunk, Document, Extract, Page, Topic
from compendium.templates.schema import Template

from .kb_seed import knowledge_base

CORPUS = Path(__file__).resolve().parents[2] / "samples" / "corpus"


def offline_ctx(store, template):
    usage = UsageMeter()
    return CompileContext(store=store, engine=OfflineEngine(usage=usage), embedder=OfflineEmbedder(usage=usage),
                          template=template)


async def test_offline_map_extracts_every_chunk_and_skips_them_next_time(store):
    template = Template(name="t", map={"batch_chunks": 4})
    docs = sorted(CORPUS.rglob("*.md"))[:3]
    assert docs, "the sample corpus is missing"
    records = []
    for n, path in enumerate(docs):
        records.append(Document(id=f"d{n}", title=path.stem, path=path.name))
        paragraphs = [p for p in path.read_text(encoding="utf-8").split("\n\n") if p.strip()]
        records += [Chunk(id=f"d{n}-{i}", document_id=f"d{n}", ordinal=i, text=p, tokens=len(p) // 4 + 1)
                    for i, p in enumerate(paragraphs)]
    await store.upsert(records)
    chunks = sum(isinstance(r, Chunk) for r in records)
    first = await map_phase.run(template, offline_ctx(store, template))
    assert (first.done, first.failed) == (chunks, 0)
    assert first.details["batches"] >= chunks // 4
    found = [e async for e in store.scan(Extract)]
    assert all(e.status == "done" and e.engine == "offline" for e in found)
    assert sum(len(e.entities) for e in found) > 0
    second = await map_phase.run(template, offline_ctx(store, template))
    assert (second.done, second.skipped) == (0, chunks)


async def test_offline_plan_and_refine_write_cited_linked_pages(store):
    template = Template(name="t", plan={"topics": {"min_size": 3}})
    await store.upsert(knowledge_base())
    ctx = offline_ctx(store, template)
    await plan_phase.run(template, ctx)
    result = await refine_phase.run(template, ctx)
    # Eight entity pages; each community, named after its most central member, has that page.
    assert result.details["created"] == 8 and result.failed == 0
    pages = {p.slug: p async for p in store.scan(Page)}
    topics = [t async for t in store.scan(Topic)]
    subjects = {p.subject_id for p in pages.values()}
    assert len(topics) == 2 and all(t.page_subject in t.members and t.page_subject in subjects for t in topics)
    ada = pages["ada-lovelace"]
    assert ada.cited_chunks and "— chunk d1-k" in ada.markdown
    assert ada.summary and ada.engine == "offline"
    assert set(ada.outlinks) <= set(pages)
    again = await refine_phase.run(template, offline_ctx(store, template))
    assert again.details["unchanged"] == 8
