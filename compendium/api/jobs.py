"""Compile jobs: start (one per knowledge base and template), list, read, cancel, and follow
their progress as Server-Sent Events."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse

from ..compiler.jobs import FINISHED, enqueue, get_job, request_cancel
from ..errors import NotFound
from ..storage.records import Job
from ..tenancy import kb_template_exists, system_store
from .auth import KB, Tenant_, service, store_of
from .errors import COMMON, errors
from .pagination import Paged, PageParams, page_of_scan
from .schemas import CompileIn, JobOut

router = APIRouter(tags=["jobs"], responses=COMMON)

STREAM_POLL = 0.25  # seconds between looks at the job record
KEEPALIVE = 15.0


def job_out(job: Job) -> dict[str, Any]:
    return job.to_dict()


@router.post("/knowledge-bases/{kb}/compile", status_code=202, response_model=JobOut,
             responses={200: {"model": JobOut, "description": "a compile of this template is already "
                                                              "queued or running: that job is returned"},
                        **errors(404)})
async def start_compile(kb: KB, request: Request, body: CompileIn | None = None) -> Any:
    template = (body.template if body else None) or kb.default_template
    store = store_of(request)
    if not await kb_template_exists(store, kb, template):
        raise NotFound(f"no template {template!r} (GET /templates lists them)", field="template")
    job, created = await enqueue(store, tenant=kb.tenant, knowledge_base=kb.name, template=template)
    service(request).wake.set()
    if not created:
        return JSONResponse(JobOut.model_validate(job_out(job)).model_dump(mode="json"), status_code=200)
    return job_out(job)


async def _own_job(request: Request, job_id: str, tenant: str) -> Job:
    try:
        job = await get_job(store_of(request), job_id)
    except NotFound:
        job = None
    if job is None or job.tenant != tenant:
        raise NotFound(f"no job {job_id!r}", field="job_id")
    return job


@router.get("/jobs", response_model=Paged[JobOut])
async def list_jobs(
    request: Request, who: Tenant_, page: Annotated[PageParams, Depends()],
    knowledge_base: str | None = None, status: str | None = None, template: str | None = None,
) -> dict:
    where: dict[str, Any] = {"tenant": who}
    for name, value in (("knowledge_base", knowledge_base), ("status", status), ("template", template)):
        if value:
            where[name] = value
    return await page_of_scan(system_store(store_of(request)).scan(Job, where), page, render=job_out)


@router.get("/jobs/{job_id}", response_model=JobOut, responses=errors(404))
async def read_job(job_id: str, request: Request, who: Tenant_) -> dict:
    return job_out(await _own_job(request, job_id, who))


@router.post("/jobs/{job_id}/cancel", response_model=JobOut, responses=errors(404))
async def cancel_job(job_id: str, request: Request, who: Tenant_) -> dict:
    """A queued job is cancelled at once; a running one stops after its current batch, with
    everything written so far complete (the next compile resumes from it)."""
    await _own_job(request, job_id, who)
    return job_out(await request_cancel(store_of(request), job_id))


def _sse(event: str, data: dict[str, Any], event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {event}\ndata: {json.dumps(data, default=str)}\n\n"


@router.get("/jobs/{job_id}/events", response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}}}, **errors(404)})
async def job_events(
    job_id: str, request: Request, who: Tenant_,
    last_event_id: Annotated[str | None, Header(description="an event id, as browsers resend it")] = None,
    after: Annotated[int | None, Query(ge=0, description="resume after this event id")] = None,
) -> StreamingResponse:
    """Server-Sent Events: `status` when the job changes state, then each progress event
    (PhaseStarted, PhaseProgress, PhaseFinished, Message, CompileFinished) with its id, and
    last a `report` event with the job's final status and compile report."""
    await _own_job(request, job_id, who)
    store = store_of(request)
    # Last-Event-ID is whatever the client kept; one that is not an id replays from the start.
    resend = int(last_event_id) if re.fullmatch(r"[0-9]{1,18}", last_event_id or "") else 0
    start = after if after is not None else resend

    async def stream() -> AsyncIterator[str]:
        sent, status, quiet = start, "", 0.0
        while True:
            job = await get_job(store, job_id)
            changed = job.status != status
            status = job.status
            if changed and status not in FINISHED:
                yield _sse("status", {"status": status, "attempts": job.attempts})
            for event in job.progress.get("events", []):
                if event.get("seq", 0) > sent:
                    sent = event["seq"]
                    yield _sse(event.get("event", "message"), event, sent)
                    quiet = 0.0
            if job.status in FINISHED:
                yield _sse("status", {"status": status, "attempts": job.attempts})
                final = {"status": job.status, "error": job.error, "report": job.report,
                         "progress": {k: v for k, v in job.progress.items() if k != "events"}}
                yield _sse("report", final)
                return
            if await request.is_disconnected():
                return
            await asyncio.sleep(STREAM_POLL)
            quiet += STREAM_POLL
            if quiet >= KEEPALIVE:
                quiet = 0.0
                yield ": keep-alive\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
