"""REDUCE's descriptions: each entity's own, or a summary of its best supported ones (cached under
exactly what it is written from, so a function of the documents alone)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..engines.cache import SOURCES, drawn_from
from ..engines.tasks import DescriptionRequest
from ..fingerprint import fingerprint
from ..pipeline.context import CompileContext
from ..storage.records import CacheEntry
from ..storage.response_cache import answers_with_records
from ..templates.schema import Template
from .reduce_calls import cached_entries, prompt_key
from .resolution import Evidence, clip, join_descriptions

SUMMARY_INPUTS = 12  # descriptions a summary is written from


def summary_inputs(ranked: Sequence[str]) -> list[str]:
    """The descriptions a summary is written from: the best supported few, fullest first.

    Capped so that one more (or one fewer) rarely-seen description leaves the summary's cache
    key, and so its cost, unchanged; a removed description that was among them changes the key,
    so removed text disappears from the summary. They are sent in an order of their text alone
    (longest first), not of their support: a document that makes one of them more often said
    than another changes no input, and asks for no new summary.
    """
    return sorted(ranked[:SUMMARY_INPUTS], key=lambda text: (-len(text), text))


class Summaries:
    """Each cluster's description; clusters with many distinct ones are summarised (cached).

    A summary is written from the best supported descriptions of its cluster now, whatever an
    earlier compile wrote it from, so a recompile describes an entity as a compile from scratch
    does; it is asked again only when those change. Summaries are asked concurrently
    (bounded by map.concurrency), cache reads are one batch, and each answer is stored as soon
    as it arrives, so a crash loses no paid answer.

    A summary is asked once per run under its cache key, however many times `describe` is
    called: the clusters that the pair judgments cannot change are described while those
    judgments are asked, and the final describe finds their summaries under way or done.
    """

    def __init__(self, ctx: CompileContext, template: Template, progress: Callable[[int, int], None] | None = None):
        self.ctx, self.template = ctx, template
        self.progress = progress  # (summaries written, summaries asked so far)
        self.prompt = prompt_key(template.reduce.summary_prompt, "reduce_summary")
        self.gate = asyncio.Semaphore(max(1, template.map.concurrency))
        self.asked: dict[str, asyncio.Task[str]] = {}
        self.early: list[asyncio.Task[Any]] = []
        self.done = 0

    def describe_early(self, clusters: Sequence[Evidence]) -> None:
        """Start describing these clusters now; the answers are for a later `describe`."""
        self.early.append(asyncio.create_task(self.describe(clusters)))

    def inputs(self, clusters: Sequence[Evidence]) -> tuple[list[list[str]], list[list[str]]]:
        """Each cluster's ranked descriptions, and what its summary is written from ([]: none)."""
        over = self.template.reduce.summarize_over
        ranked = [c.ranked_descriptions() for c in clusters]
        return ranked, [summary_inputs(r) if len(r) > over else [] for r in ranked]

    async def describe(self, clusters: Sequence[Evidence]) -> list[str]:
        """The clusters' descriptions."""
        settings = self.template.reduce
        ranked, inputs = self.inputs(clusters)
        # The inputs in the order they are sent: a summary written from them in another order reads otherwise.
        keys = [fingerprint("summary", i, self.ctx.engine.model, self.prompt) if i else "" for i in inputs]
        hits = await cached_entries(self.ctx, sorted({k for k in keys if k and k not in self.asked}))
        out = [
            join_descriptions(r, settings.description_max_chars) if not k
            else str((hits[k].value or {}).get("description", "")) if k in hits else ""
            for r, k in zip(ranked, keys, strict=True)
        ]
        todo: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            if key and key not in hits:
                todo.setdefault(key, []).append(i)
        for key, members in todo.items():
            if key not in self.asked:
                first = clusters[members[0]]
                request = DescriptionRequest(first.name, first.type, inputs[members[0]], settings.description_max_chars)
                sources = sorted({c for i in members for c in clusters[i].chunk_ids})
                self.asked[key] = asyncio.create_task(self._ask(key, request, sources))
        keys_todo = list(todo)
        outcomes = await asyncio.gather(*(self.asked[k] for k in keys_todo), return_exceptions=True)
        errors = [o for o in outcomes if isinstance(o, BaseException)]  # answers that arrived stay stored
        if errors:
            raise errors[0]
        for key, text in zip(keys_todo, outcomes, strict=True):
            for i in todo[key]:
                out[i] = str(text)
        return out

    async def _ask(self, key: str, request: DescriptionRequest, sources: list[str]) -> str:
        """The summary, kept with the passages its descriptions came from (`sources`): deleting
        one of them forgets it and the model's reply (compiler/forget.py)."""
        max_chars = self.template.reduce.description_max_chars
        async with answers_with_records(self.ctx.store) as held:  # the reply lands with the summary
            async with self.gate:  # around the call only: storing its answer does not hold a slot
                with drawn_from(sources):
                    text = clip((await self.ctx.engine.summarize(request, self.template)).strip(), max_chars)
            await self.ctx.store.upsert([*held, CacheEntry(id=key, namespace="summary", created_at=time.time(),
                                                           value={"description": text, SOURCES: sources})])
            held.clear()
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, len(self.asked))
        return text

    async def settle(self) -> None:
        """Wait for every summary asked (one asked early for a cluster that then changed, too)."""
        await asyncio.gather(*self.early, return_exceptions=True)
        await asyncio.gather(*self.asked.values(), return_exceptions=True)
