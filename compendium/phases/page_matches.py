"""Subjects matched to pages no subject owns: the nearest page embeddings, and the pairs in
the maybe band judged by the engine."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from ..engines.tasks import EntitySketch, MatchQuestion
from ..fingerprint import fingerprint
from ..pipeline.context import CompileContext
from ..storage.records import CacheEntry, Page
from ..templates.schema import Template
from .planning import Subject, pick_knn_matches

KNN_CONCURRENCY = 8


async def nearest_orphans(
    ctx: CompileContext, template: Template, unmatched: Sequence[Subject], orphans: dict[str, Page]
) -> tuple[dict[str, str], list[tuple[str, str, float]]]:
    vectors = await ctx.embedder.embed([f"{s.title}: {s.description}" for s in unmatched])
    gate = asyncio.Semaphore(KNN_CONCURRENCY)
    hits: list[tuple[str, str, float]] = []

    async def nearest(subject: Subject, vector) -> None:  # type: ignore[no-untyped-def]
        async with gate:
            # A few neighbours, since the closest may be a page another subject still owns.
            found = await ctx.store.knn(Page, vector, 3, where={"status": "active", "kind": subject.kind})
        for page, score in found:
            if page.id in orphans:
                hits.append((subject.id, page.id, float(score)))
                break

    await asyncio.gather(*(nearest(s, v) for s, v in zip(unmatched, vectors, strict=True)))
    return pick_knn_matches(hits, template.plan)


async def judged_matches(
    ctx: CompileContext,
    template: Template,
    subjects: Sequence[Subject],
    maybes: Sequence[tuple[str, str, float]],
    orphans: dict[str, Page],
) -> dict[str, str]:
    """Ask the engine about pairs in the maybe band, in batches; every answer is cached."""
    by_id = {s.id: s for s in subjects}
    keys = {
        sid: fingerprint("match", sid, by_id[sid].title, by_id[sid].description,
                         slug, orphans[slug].title, orphans[slug].summary, ctx.engine.model)
        for sid, slug, _ in maybes
    }
    cached = {e.id: bool(e.value) for e in await ctx.store.get(CacheEntry, list(keys.values()))}  # type: ignore[attr-defined]
    answers: dict[str, bool] = {}
    ask: list[tuple[str, str, float]] = []
    for sid, slug, score in maybes:
        if keys[sid] in cached:
            answers[sid] = cached[keys[sid]]
        else:
            ask.append((sid, slug, score))
    size = template.plan.judge_batch
    for start in range(0, len(ask), size):
        batch = ask[start:start + size]
        questions = [
            MatchQuestion(
                label=f"q{n}",
                candidate=EntitySketch(name=by_id[sid].title, type=by_id[sid].type or by_id[sid].kind,
                                       description=by_id[sid].description, aliases=by_id[sid].aliases),
                page_title=orphans[slug].title,
                page_summary=orphans[slug].summary,
                similarity=score,
            )
            for n, (sid, slug, score) in enumerate(batch, start=1)
        ]
        reply = await ctx.engine.judge_matches(questions, template)
        now = time.time()
        entries = []
        for q, (sid, _slug, _score) in zip(questions, batch, strict=True):
            answers[sid] = bool(reply.get(q.label, False))
            entries.append(CacheEntry(id=keys[sid], namespace="match", value=answers[sid], created_at=now))
        await ctx.store.upsert(entries)
    return {sid: slug for sid, slug, _ in maybes if answers.get(sid)}
