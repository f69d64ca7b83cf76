"""The compile job queue, kept in the store so workers on several machines share it.

A job is queued, then leased by one worker for `lease_seconds`; the worker heartbeats (which
extends the lease and saves progress) until it finishes. A worker that dies stops
heartbeating, its lease expires and the next worker to look takes the job over; the compile
resumes from what the phases stored (leases.py says when a holder is gone). Every state change
is a read-modify-write inside a store transaction, confirmed after the fact where the store does
not serialize transactions, so two workers never hold one job and a cancel is never lost. The
CLI's compiles hold the same lease (leases.claim), so one knowledge base and template compile
once at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from pathlib import Path
from typing import Any

from ..engines.usage import UsageMeter
from ..errors import Busy, CompendiumError, EngineUnavailable, WorkspaceError
from ..pipeline.context import CompileContext, group_templates
from ..pipeline.events import (
    CompileFinished,
    Event,
    Message,
    PhaseFinished,
    PhaseProgress,
    PhaseStarted,
    event_to_dict,
    phase_end,
)
from ..settings import EmbeddingSettings, LLMSettings, Settings
from ..storage.base import Store
from ..storage.records import Job, KnowledgeBase
from ..tempfiles import DOCUMENTS, sweep
from ..workspace import DOCUMENTS_DIR
from .leases import (
    ACTIVE,
    compile_of,
    jobs_where,
    lease_free,
    new_job_id,
    system_of,
)
from .report import CANCELLED, FAILED, STATUSES

FINISHED = STATUSES  # how a job ends: the compile report's own status
MAX_EVENTS = 500  # events kept on the job for late SSE readers; older ones are dropped
PROGRESS_EVERY = 0.5  # seconds between progress writes
MAX_ATTEMPTS = 5  # leases before a job that keeps killing its workers is failed


class LeaseLost(CompendiumError):
    """This worker no longer holds the job (its lease expired and another took it)."""


# ---- queue operations --------------------------------------------------------------------


async def enqueue(
    store: Store, *, tenant: str, knowledge_base: str, template: str, trigger: str = "api"
) -> tuple[Job, bool]:
    """Queue a compile; if one for this knowledge base and template is queued or running,
    return that one instead. Returns (job, created)."""
    system = system_of(store)
    async with system.transaction():
        active = await jobs_where(
            system,
            {"tenant": tenant, "knowledge_base": knowledge_base, "template": template, "status": list(ACTIVE)},
        )
        if active:
            return active[0], False
        job = Job(
            id=new_job_id(), tenant=tenant, knowledge_base=knowledge_base, template=template,
            status="queued", created_at=time.time(), trigger=trigger,
        )
        await system.upsert([job])
    return job, True


async def get_job(store: Store, job_id: str) -> Job:
    return await system_of(store).get_one(Job, job_id)  # type: ignore[return-value]


async def lease_next(
    store: Store, worker: str, *, lease_seconds: float, now: float | None = None
) -> Job | None:
    """Take the oldest queued job, or a running one whose lease expired; None if there is none.
    A job whose compile (knowledge base and template) another job is running waits for it."""
    system = system_of(store)
    async with system.transaction(serialized=True):
        now = time.time() if now is None else now
        active = await jobs_where(system, {"status": list(ACTIVE)})
        held = {compile_of(job) for job in active if not lease_free(job, now)}
        for job in active:
            if job.trigger == "cli" or compile_of(job) in held:
                continue  # a CLI compile is resumed by the next `compendium compile`, not a worker
            if job.cancel_requested:  # cancelled while its worker was gone
                job.status, job.finished_at, job.lease_owner = CANCELLED, now, ""
                await system.upsert([job])
                continue
            if job.attempts >= MAX_ATTEMPTS:
                job.status, job.finished_at, job.lease_owner = FAILED, now, ""
                job.error = f"given up after {job.attempts} workers lost it"
                await system.upsert([job])
                continue
            job.status, job.lease_owner = "running", worker
            job.lease_expires_at, job.heartbeat_at = now + lease_seconds, now
            job.attempts += 1
            job.started_at = job.started_at or now
            await system.upsert([job])
            return job
    return None


async def _owned(system: Store, job_id: str, worker: str) -> Job:
    job: Job = await system.get_one(Job, job_id)  # type: ignore[assignment]
    if job.lease_owner != worker or job.status != "running":
        raise LeaseLost(f"job {job_id} is no longer leased by {worker}")
    return job


async def heartbeat(
    store: Store, job_id: str, worker: str, *, lease_seconds: float,
    progress: dict[str, Any] | None = None, phase: str | None = None,
) -> Job:
    """Extend the lease (and save progress); raises LeaseLost if another worker has the job."""
    system = system_of(store)
    async with system.transaction():
        job = await _owned(system, job_id, worker)
        now = time.time()
        job.lease_expires_at, job.heartbeat_at = now + lease_seconds, now
        if progress is not None:
            job.progress = progress
        if phase is not None:
            job.phase = phase
        await system.upsert([job])
    return job


async def finish(
    store: Store, job_id: str, worker: str, *, status: str, report: dict[str, Any] | None = None,
    error: str = "", progress: dict[str, Any] | None = None,
) -> Job:
    """Record the outcome; status "queued" hands the job back for another worker to resume."""
    system = system_of(store)
    async with system.transaction():
        job = await _owned(system, job_id, worker)
        job.status, job.error, job.lease_owner, job.lease_expires_at = status, error, "", 0.0
        if report is not None:
            job.report = report
        if progress is not None:
            job.progress = progress
        if status in FINISHED:
            job.finished_at = time.time()
        await system.upsert([job])
    return job


async def request_cancel(store: Store, job_id: str) -> Job:
    """Ask for a cancel: a queued job is cancelled at once; a running one stops after its
    current batch (its worker sees the flag at the next heartbeat)."""
    system = system_of(store)
    async with system.transaction():
        job: Job = await system.get_one(Job, job_id)  # type: ignore[assignment]
        if job.status in FINISHED:
            return job
        job.cancel_requested = True
        if job.status == "queued":
            job.status, job.finished_at = CANCELLED, time.time()
        await system.upsert([job])
    return job


# ---- progress ----------------------------------------------------------------------------


class ProgressRecorder:
    """An EventSink that keeps the job's progress: per phase counts, tokens, cost, messages
    and a numbered log of events that the SSE endpoint streams from the store."""

    def __init__(self, usage: UsageMeter, llm: LLMSettings):
        self.usage, self.llm = usage, llm
        self.phases: dict[str, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self.seq = 0
        self.phase = ""
        self.report: dict[str, Any] | None = None
        self.dirty = False

    def emit(self, event: Event) -> None:
        data = event_to_dict(event)
        if isinstance(event, PhaseStarted):
            self.phase = event.phase
            self.phases[event.phase] = {"status": "running", "done": 0, "total": event.total, "tokens": 0}
        elif isinstance(event, PhaseProgress):
            entry = self.phases.setdefault(event.phase, {"status": "running"})
            entry.update(done=event.done, total=event.total, tokens=event.tokens)
            last = self.events[-1] if self.events else None
            if last and last["event"] == "PhaseProgress" and last["phase"] == event.phase:
                self.events.pop()  # keep one progress line per phase run, not thousands
        elif isinstance(event, PhaseFinished):
            entry = self.phases.setdefault(event.phase, {})
            # How the bar ends, as the CLI's does: what was settled of the total its progress ran
            # on (REDUCE counts chunks, its result entities), and what was withheld or failed.
            ran = (int(entry.get("done") or 0), int(entry["total"])) if entry.get("total") else None
            end = phase_end(event.result, ran)
            entry.update(status="finished", result=event.result, **end)
            data["end"] = end  # the job page's live stream draws the same end
        elif isinstance(event, CompileFinished):
            self.report = event.report
            data = {"event": "CompileFinished", "status": event.report.get("status", "")}
        self.seq += 1
        self.events.append({"seq": self.seq, **data})
        del self.events[:-MAX_EVENTS]
        self.dirty = True

    def snapshot(self) -> dict[str, Any]:
        prompt = sum(u.prompt_tokens for u in self.usage.by_phase.values())
        completion = sum(u.completion_tokens for u in self.usage.by_phase.values())
        cost = prompt / 1000 * self.llm.price_per_1k_prompt + completion / 1000 * self.llm.price_per_1k_completion
        return {
            "phase": self.phase,
            "phases": self.phases,
            "tokens": self.usage.total_tokens,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "estimated_cost": round(cost, 6),
            "budget_tokens": self.usage.budget_tokens,
            "events": list(self.events),
            "seq": self.seq,
        }


# ---- running a job -----------------------------------------------------------------------


def settings_for_kb(settings: Settings, kb: KnowledgeBase) -> Settings:
    """The server's settings as this knowledge base asks for them (engine, model, budget)."""
    if kb.engine == "offline":
        settings = dataclasses.replace(settings, llm=LLMSettings(base_url=None), embedding=EmbeddingSettings())
    elif kb.llm_model:
        settings = dataclasses.replace(settings, llm=dataclasses.replace(settings.llm, model=kb.llm_model))
    if kb.token_budget:
        settings = dataclasses.replace(settings, token_budget=kb.token_budget)
    return settings


async def run_job(
    store: Store, settings: Settings, data_dir: Path, job: Job, worker: str, *,
    lease_seconds: float, stop: asyncio.Event | None = None, exclusive: Any = None,
) -> Job | None:
    """Compile a leased job to its end; returns the finished job (None if the lease was lost).
    A workspace's knowledge base compiles through `exclusive` (compiler.exclusive's
    compile_exclusively, passed in by the worker), which holds the CLI's lease as well."""
    from ..distributed import distribute
    from ..engines.factory import build_embedder, build_engine
    from ..storage.response_cache import StoreResponseCache
    from ..tenancy import get_kb, kb_records, kb_root, kb_template
    from .orchestrator import run_compile

    usage = UsageMeter(None)
    recorder = ProgressRecorder(usage, settings.llm)
    try:
        kb = await get_kb(store, job.tenant, job.knowledge_base)
        kb_settings = _workspace_settings(settings, kb) if kb.workspace else settings_for_kb(settings, kb)
        template = await kb_template(store, kb, job.template)
        usage.budget_tokens = kb_settings.token_budget
        recorder.llm = kb_settings.llm
        scoped = kb_records(store, kb)
        cache = StoreResponseCache(scoped)
        engine = build_engine(kb_settings, template, usage=usage, cache=cache)
        embedder = build_embedder(kb_settings, template, usage=usage, cache=cache)
    except CompendiumError as exc:
        return await finish(store, job.id, worker, status=FAILED, error=str(exc))
    ctx = CompileContext(
        store=scoped, engine=engine, embedder=embedder, template=template, events=recorder,
        documents_dir=kb_root(data_dir, kb) / DOCUMENTS_DIR,
    )
    try:
        if kb.workspace:
            _apply_workspace_groups(ctx, kb_settings)
        else:
            await _apply_groups(ctx, store, job.tenant, kb.groups)
    except CompendiumError as exc:
        return await finish(store, job.id, worker, status=FAILED, error=str(exc))
    if engine.name == "offline":
        recorder.emit(Message("info", "compiling with the offline engine (no LLM endpoint)"))
    if ctx.documents_dir is not None:
        await asyncio.to_thread(sweep, ctx.documents_dir, earlier=DOCUMENTS)  # what a killed upload left half-written
    state = {"lost": False, "cancelled": job.cancel_requested}
    keeper = asyncio.create_task(_keep_alive(store, job, worker, lease_seconds, recorder, ctx, state, stop))
    try:
        async with distribute(ctx, kb_settings):  # with a broker configured: its calls run on workers
            if kb.workspace and exclusive is not None:
                # The CLI's lease too: a `compendium compile` in the workspace and this job never overlap.
                report = await exclusive(store, ctx, knowledge_base=kb.scope)
            else:
                report = await run_compile(ctx)
    except (Busy, EngineUnavailable) as exc:  # a CLI compile holds its lease; no task worker answers
        busy, report = str(exc), None
    else:
        busy = ""
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
        await engine.close()
        await embedder.close()
    if state["lost"]:
        return None
    if report is None:
        return await finish(store, job.id, worker, status=FAILED, error=busy, progress=recorder.snapshot())
    report_data = report.as_dict(kb_settings.llm)
    status = report.status
    if state["cancelled"]:
        status = CANCELLED
    elif ctx.cancel.is_set():  # the worker is stopping: hand the job back to be resumed
        status = "queued"
    try:
        return await finish(store, job.id, worker, status=status, report=report_data,
                            error=report.error, progress=recorder.snapshot())
    except LeaseLost:
        return None


def _workspace_settings(settings: Settings, kb: KnowledgeBase) -> Settings:
    """A workspace's knowledge base compiles with that workspace's settings, as the CLI does
    there: only a server started in the workspace has them."""
    if settings.workspace is None or Path(settings.workspace).resolve() != Path(kb.workspace).resolve():
        raise WorkspaceError(
            f"knowledge base {kb.name!r} is the workspace {kb.workspace}, which this server does not serve",
            hint=f"run `compendium serve` (or `compendium compile`) in {kb.workspace}",
        )
    return settings


def _apply_workspace_groups(ctx: CompileContext, settings: Settings) -> None:
    """Template groups of the workspace's compendium.yaml, with its own templates (as the CLI)."""
    from ..settings import load_groups
    from ..templates.registry import load_template

    assert settings.workspace is not None
    ctx.groups = load_groups(settings.workspace)
    ctx.templates = {name: load_template(name, workspace=settings.workspace) for name in group_templates(ctx)}


async def _apply_groups(ctx: CompileContext, store: Store, tenant: str, groups: list[dict]) -> None:
    """The knowledge base's template groups: documents they match are extracted with their template."""
    from ..templates.groups import TemplateGroup
    from ..tenancy import resolve_template

    ctx.groups = [TemplateGroup(**g) for g in groups or []]
    ctx.templates = {name: await resolve_template(store, tenant, name) for name in group_templates(ctx)}


async def _keep_alive(
    store: Store, job: Job, worker: str, lease_seconds: float, recorder: ProgressRecorder,
    ctx: CompileContext, state: dict[str, bool], stop: asyncio.Event | None,
) -> None:
    """Heartbeat and save progress while the compile runs; raise the cancel flag when asked."""
    interval = min(PROGRESS_EVERY, lease_seconds / 3)
    last_beat = 0.0
    while True:
        now = time.monotonic()
        if recorder.dirty or now - last_beat >= lease_seconds / 3:
            recorder.dirty = False
            try:
                current = await heartbeat(store, job.id, worker, lease_seconds=lease_seconds,
                                          progress=recorder.snapshot(), phase=recorder.phase)
            except LeaseLost:
                state["lost"] = True
                ctx.cancel.set()
                return
            except CompendiumError:
                current = None  # the store hiccuped: try again at the next tick
            last_beat = now
            if current is not None and current.cancel_requested:
                state["cancelled"] = True
                ctx.cancel.set()
        if stop is not None and stop.is_set():
            ctx.cancel.set()
        await asyncio.sleep(interval)
