"""The offline engine: the Engine protocol answered by rules, with no network and no model."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ...templates.schema import Template
from ..tasks import (
    DescriptionRequest,
    ExtractionBatch,
    ExtractionReply,
    MatchQuestion,
    PageRequest,
    PairQuestion,
    TopicReply,
    TopicRequest,
)
from ..usage import UsageMeter
from . import extract, summary, topics, writer
from . import pairs as pair_rules


class OfflineEngine:
    """Does MAP, REDUCE tier 3, topic naming and REFINE by rules; records no tokens.

    `model` enters fingerprints: bump its version whenever the rules change their output.
    """

    name = "offline"
    model = "offline-rules-v14"

    def __init__(self, usage: UsageMeter | None = None):
        self.usage = usage if usage is not None else UsageMeter()

    async def extract(self, batch: ExtractionBatch, template: Template) -> ExtractionReply:
        return extract.extract(batch, template)

    async def judge_pairs(
        self, pairs: Sequence[PairQuestion], template: Template
    ) -> dict[str, bool]:
        return pair_rules.judge_pairs(pairs)

    async def summarize(self, request: DescriptionRequest, template: Template) -> str:
        return summary.summarize(request)

    async def judge_matches(
        self, questions: Sequence[MatchQuestion], template: Template
    ) -> dict[str, bool]:
        return pair_rules.judge_matches(questions)

    async def name_topic(self, request: TopicRequest, template: Template) -> TopicReply:
        return topics.name_topic(request)

    async def write_page(self, request: PageRequest, template: Template) -> str:
        if template.refine.page_template.strip():
            # A template's own layout renders in a worker process: wait off the event loop.
            return await asyncio.to_thread(writer.write_page, request, template)
        return writer.write_page(request, template)

    async def update_pages(self, requests: Sequence[PageRequest], template: Template) -> dict[str, str]:
        # Rules rebuild each page from its evidence: grouping saves no call, but keeps one path.
        return {request.slug: await self.write_page(request, template) for request in requests}

    async def close(self) -> None:
        return None
