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
from . import extract, summary, topic_pages, topics, writer
from . import pairs as pair_rules


class OfflineEngine:
    """Does MAP, REDUCE tier 3, topic naming and REFINE by rules; records no tokens.

    `model` enters fingerprints: bump its version whenever the rules change their output.
    """

    name = "offline"
    model = "offline-rules-v66"

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
            return await asyncio.to_thread(_write, request, template)
        return _write(request, template)

    async def update_pages(self, requests: Sequence[PageRequest], template: Template) -> dict[str, str]:
        # Rules rebuild each page from its evidence: grouping saves no call, but keeps one path.
        return {request.slug: await self.write_page(request, template) for request in requests}

    async def close(self) -> None:
        return None


def _write(request: PageRequest, template: Template) -> str:
    """A topic's page lists its members with what each is (topic_pages), where the sources say
    what the group or a member is; any other page, or a topic with no such line, is written
    from its evidence sentences (writer)."""
    if request.kind == "topic":
        written = topic_pages.write_topic(request, template)
        if written is not None:
            return written
    return writer.write_page(request, template)
