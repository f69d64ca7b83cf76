"""Retrieval endpoints: POST retrieve (typed evidence and a context block) and POST ask (a cited
answer streamed as NDJSON or server-sent events, with heartbeats)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ..compiler.jobs import settings_for_kb
from ..retrieval import Options, ask, retrieve
from ..retrieval.workspace import sources_for
from ..storage.records import KnowledgeBase
from ..tenancy import kb_records, resolve_template
from .auth import KB, service, store_of
from .errors import COMMON, errors

router = APIRouter(prefix="/knowledge-bases/{kb}", tags=["retrieval"], responses={**COMMON, **errors(404)})
HEARTBEAT_SECONDS = 10.0


class RetrieveIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=2000, pattern=r"[^\W_]",
                          description="holds a word: a letter or a digit")
    top_k: int = Field(8, ge=1, le=50, description="passages and items per list: a cut-off of one ranking")
    mode: Literal["local", "global", "hybrid"] = Field(
        "hybrid", description="passages are ranked alike in every mode; hybrid adds the entities, relations, "
                              "pages and topics of the subjects the question names, local the subjects with "
                              "their neighbours and relations, global their pages and topics")
    budget_tokens: int = Field(2000, ge=200, le=32000, description="tokens of the context block")
    path_prefix: str | None = Field(None, max_length=1000,
                                    description="only documents whose path starts with this")
    outline_node: str | None = Field(None, max_length=500, description=(
        "only the documents of this outline topic and its subtopics (its title, id or overview slug)"))
    rerank: Literal["words", "llm", "none"] = Field(
        "words", description="what reorders the fused passages: words (how closely their words meet the "
                             "question's), llm (then the knowledge base's model reorders the first 10 in one "
                             "cached call; the fused order is kept, with a note, when it fails), none")


class AskIn(RetrieveIn):
    format: Literal["ndjson", "sse"] | None = Field(
        None, description="ndjson (default) or sse; `Accept: text/event-stream` also asks for sse"
    )


def _options(body: RetrieveIn, kb: KnowledgeBase) -> Options:
    budget = body.budget_tokens
    if kb.token_budget:  # the context must leave the answer room within the knowledge base's budget
        budget = max(200, min(budget, kb.token_budget // 2))
    return Options(top_k=body.top_k, mode=body.mode, budget_tokens=budget, path_prefix=body.path_prefix,
                   outline_node=body.outline_node, rerank_by=body.rerank)


@contextlib.asynccontextmanager
async def _sources(request: Request, kb: KnowledgeBase) -> AsyncIterator[Any]:
    svc = service(request)
    template = await resolve_template(store_of(request), kb.tenant, kb.default_template)
    store = kb_records(store_of(request), kb)
    async with sources_for(store, settings_for_kb(svc.settings, kb), template) as src:
        yield src


@router.post("/retrieve")
async def post_retrieve(kb: KB, body: RetrieveIn, request: Request) -> dict[str, Any]:
    """Entities, relations, pages, topics and passages for a question, best first, and a
    Markdown context block (labels E1, R1, P1, T1, C1 name the items) for a RAG prompt."""
    async with _sources(request, kb) as src:
        result = await retrieve(body.question, src.store, embedder=src.embedder, passages=src.passages,
                                llm=src.llm,
                                options=_options(body, kb))
    return result.as_dict()


def _ndjson(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False) + "\n"


def _sse(event: dict[str, Any]) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"


async def _with_heartbeats(
    events: AsyncIterator[dict[str, Any]], every: float
) -> AsyncIterator[dict[str, Any]]:
    """The events, with {"type": "heartbeat"} whenever none came for `every` seconds."""
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for event in events:
                await queue.put(event)
        except Exception as exc:
            await queue.put({"type": "error", "message": f"the answer failed: {exc}"})
        finally:
            await queue.put(None)

    task = asyncio.create_task(pump())
    try:
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), timeout=every)
            except TimeoutError:
                yield {"type": "heartbeat"}
                continue
            if event is None:
                return
            yield event
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


ASK_EVENT = {"type": "object", "required": ["type"], "properties": {
    "type": {"type": "string", "enum": ["stage", "note", "delta", "sentence", "retract", "final", "error",
                                        "heartbeat"]}}}
# An SSE event is described as its fields: `event` names the type, `data` is the JSON object.
SSE_EVENT = {"type": "object", "required": ["event", "data"], "properties": {
    "event": ASK_EVENT["properties"]["type"], "data": {"type": "string"}}}
ASK_STREAMS = {200: {"description": "the answer's events: one JSON object a line (NDJSON), or SSE",
                     "content": {"application/x-ndjson": {"schema": ASK_EVENT},
                                 "text/event-stream": {"schema": SSE_EVENT}}}}


@router.post("/ask", response_class=StreamingResponse, responses=ASK_STREAMS)
async def post_ask(
    kb: KB, body: AskIn, request: Request,
    accept: Annotated[str | None, Header()] = None,
) -> StreamingResponse:
    """The answer, streamed: `stage` events (retrieve, answer), `note` events (an extractive
    answer, an unreachable model), `delta` events with the model's tokens as they arrive,
    `sentence` events with each sentence that passed its citation check as soon as it is
    complete, `retract` events naming a streamed sentence that failed it (drop its tokens),
    a `final` event with the answer, its citations and the evidence (the retrieve JSON), or an
    `error` event; `heartbeat` events keep the connection alive while the model thinks.
    Every sentence of the answer cites evidence labels such as [C1]."""
    sse = body.format == "sse" or (body.format is None and "text/event-stream" in (accept or ""))
    options = _options(body, kb)
    every = getattr(request.app.state, "heartbeat_seconds", HEARTBEAT_SECONDS)

    async def events() -> AsyncIterator[dict[str, Any]]:
        async with _sources(request, kb) as src:
            answer = ask(body.question, src.store, embedder=src.embedder, passages=src.passages,
                         llm=src.llm, options=options)
            async with contextlib.aclosing(answer):
                async for event in answer:
                    yield event

    async def body_text() -> AsyncIterator[str]:
        async for event in _with_heartbeats(events(), every):
            yield _sse(event) if sse else _ndjson(event)

    media = "text/event-stream" if sse else "application/x-ndjson"
    return StreamingResponse(body_text(), media_type=media, headers={"Cache-Control": "no-cache"})
