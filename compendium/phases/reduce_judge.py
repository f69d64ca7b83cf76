"""REDUCE tier 3: pairs of groups the engine judges the same thing or not, each decision cached
by the pair's fingerprint so it is never asked twice."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence

from ..engines.tasks import EntitySketch, PairQuestion
from ..fingerprint import fingerprint
from ..pipeline.context import CompileContext
from ..storage.records import CacheEntry, Extract
from ..storage.response_cache import answers_with_records
from ..templates.schema import Template
from .reduce_calls import cached_entries, prompt_key, run_all
from .resolution import Evidence, normalize_name

PHASE = "reduce"
EVIDENCE_CHUNKS = 20  # a group's first chunks a tier-3 question quotes sentences from


def claim_sentences(extracts: Iterable[Extract]) -> dict[str, list[tuple[str, set[str]]]]:
    """Each chunk's claim sentences, each with the normalised names it is about."""
    index: dict[str, list[tuple[str, set[str]]]] = {}
    for ex in extracts:
        for item in ex.claims:
            text = str(item.get("text") or "").strip()
            if text:
                names = {normalize_name(n) for n in item.get("entities") or [] if isinstance(n, str)}
                index.setdefault(ex.id, []).append((text, names))
    return index


def sketch(group: Evidence, evidence: dict[str, list[tuple[str, set[str]]]]) -> EntitySketch:
    sentences: list[str] = []
    for chunk in sorted(group.chunk_ids)[:EVIDENCE_CHUNKS]:
        for text, names in evidence.get(chunk, ()):
            if names & group.norms and text not in sentences:
                sentences.append(text)
        if len(sentences) >= 3:
            break
    described = group.ranked_descriptions()
    return EntitySketch(
        name=group.name, type=group.type, description=described[0] if described else "",
        aliases=group.aliases[:5], evidence=sentences[:3],
    )


async def judge(
    ctx: CompileContext, template: Template, groups: Sequence[Evidence], pairs: list[tuple[int, int, float]],
    evidence_for: Callable[[Sequence[str]], Awaitable[dict[str, list[tuple[str, set[str]]]]]],
    asking: Callable[[], object] | None = None, progress: Callable[[int, int], None] | None = None,
) -> tuple[list[tuple[int, int]], int]:
    """Tier 3: pairs the engine says are the same thing; cached decisions are never re-asked.

    `evidence_for` gives chunks' claim sentences (each with its names): read only when a pair has
    to be asked, which a recompile seldom needs, and only for a group's first chunks. `asking`
    is called once before any pair is asked (not when every decision is cached); `progress` with
    (pairs answered, pairs to ask) as batches are answered."""
    prompt = prompt_key(template.reduce.prompt, PHASE)
    keys = [fingerprint("pair", sorted([groups[a].identity(), groups[b].identity()]), ctx.engine.model, prompt) for a, b, _ in pairs]
    cached = await cached_entries(ctx, list(dict.fromkeys(keys)))
    same: list[tuple[int, int]] = []
    todo: list[int] = []
    for i, key in enumerate(keys):
        if key in cached:
            if (cached[key].value or {}).get("same"):
                same.append(pairs[i][:2])
        else:
            todo.append(i)
    evidence: dict[str, list[tuple[str, set[str]]]] = {}
    if todo and asking is not None:
        asking()
    if todo:
        evidence = await evidence_for(sorted({c for i in todo for g in pairs[i][:2]
                                              for c in sorted(groups[g].chunk_ids)[:EVIDENCE_CHUNKS]}))
    batch_size = template.reduce.judge_batch
    batches = [todo[s : s + batch_size] for s in range(0, len(todo), batch_size)]
    found: list[list[tuple[int, int]]] = [[] for _ in batches]  # in batch order, whatever answers first
    gate = asyncio.Semaphore(max(1, template.map.concurrency))
    done = 0

    async def one(n_batch: int, batch: list[int]) -> None:
        nonlocal done
        questions = [
            PairQuestion(f"p{n + 1}", sketch(groups[pairs[i][0]], evidence), sketch(groups[pairs[i][1]], evidence),
                         round(pairs[i][2], 4))
            for n, i in enumerate(batch)
        ]
        async with answers_with_records(ctx.store) as held:  # the reply lands with its decisions
            async with gate:
                answers = await ctx.engine.judge_pairs(questions, template)
            now = time.time()
            entries = []
            for q, i in zip(questions, batch, strict=True):
                if q.label in answers:  # an unanswered pair is asked again next time
                    entries.append(CacheEntry(id=keys[i], namespace="pair", value={"same": bool(answers[q.label])}, created_at=now))
                    if answers[q.label]:
                        found[n_batch].append(pairs[i][:2])
            await ctx.store.upsert([*held, *entries])  # at once: a crash later loses no decision
            held.clear()
        done += len(batch)
        if progress is not None:
            progress(done, len(todo))

    # Batches are asked together (map.concurrency at a time, as summaries are), not one by one.
    await run_all([one(n, batch) for n, batch in enumerate(batches)])
    return same + [pair for batch in found for pair in batch], len(pairs) - len(todo)
