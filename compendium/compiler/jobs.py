"""The compile job queue, kept in the store so workers on several machines share it.

A job is queued, then leased by one worker for `lease_seconds`; the worker heartbeats (which
extends the lease and saves progress) until it finishes. A worker that dies stops
heartbeating, its lease expires and the next worker to look takes the job over; the compile
resumes from what the phases stored. A lease holder on this host whose process is gone is
taken over at once. Every state change is a read-modify-write inside a store transaction, so
two workers never hold one job and a cancel is never lost. The CLI's compiles hold the same
lease (`claim`, trigger "cli"), so one knowledge base and template compile once at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import secrets
import time
from pathlib import Path
from typing import Any

from ..engines.usage import UsageMeter
from ..errors import CompendiumError, NotFound
from ..processes import process_alive, this_host
from ..settings import EmbeddingSettings, LLMSettings, Settings
from ..storage.base import Store
from ..storage.records import Job, KnowledgeBase
from ..tempfiles import DOCUMENTS, sweep
from .context import CompileContext, group_templates
from .events import (
    CompileFinished,
    Event,
    Message,
    PhaseFinished,
    PhaseProgress,
    PhaseStarted,
    event_to_dict,
)
from .report import STATUSES

ACTIVE = ("queued", "running")
FINISHED = STATUSES  # how a job ends: the compile report's own status
MAX_EVENTS = 500  # events kept on the job for late SSE readers; older ones are dropped
PROGRESS_EVERY = 0.5  # seconds between progress writes
MAX_ATTEMPTS = 5  # leases before a job that keeps killing its workers is failed


STALE_LEASES = 10  # a live holder on this host that missed this many leases is presumed hung
SETTLE_SECONDS = 0.5  # for concurrent lease takers to land on a store that does not serialize them
SERIALIZING_BACKENDS = ("sqlite",)


class LeaseLost(CompendiumError):
    """This worker no longer holds the job (its lease expired and another took it)."""


def _system(store: Store) -> Store:
    from ..tenancy import system_store

    return system_store(store)


def new_job_id() -> str:
    # Time first, so ordering by id (what store scans do) is ordering by creation.
    return f"{int(time.time() * 1000):013x}{secrets.token_hex(4)}"


def worker_name() -> str:
    return f"{this_host()}:{os.getpid()}:{secrets.token_hex(3)}"


def lease_holder(owner: str) -> tuple[str, int] | None:
    """(host, pid) of a lease owner named by worker_name(); None for other names."""
    host, sep, _token = owner.rpartition(":")  # host:pid:token; a host name holds no ":"
    host, sep2, pid = host.rpartition(":")
    if not (sep and sep2 and pid.isdigit()):
        return None
    return host, int(pid)


def _holder_alive(owner: str) -> bool | None:
    """Whether the owner's process runs: known only on its own host (None elsewhere)."""
    holder = lease_holder(owner)
    if holder is None or holder[0] != this_host():
        return None
    return process_alive(holder[1])


def lease_free(job: Job, now: float) -> bool:
    """Whether a worker may take this active job: queued, or its holder is gone (on this host,
    its process ended; elsewhere, its lease expired without a heartbeat)."""
    if job.status != "running":
        return True
    alive = _holder_alive(job.lease_owner)
    if alive is False:
        return True
    if alive is True:  # busy, perhaps between heartbeats on a blocked loop: leave it be
        lease = max(job.lease_expires_at - job.heartbeat_at, 1.0)
        return now > job.lease_expires_at + STALE_LEASES * lease
    return job.lease_expires_at <= now


async def _jobs(system: Store, where: dict[str, Any]) -> list[Job]:
    return [job async for job in system.scan(Job, where)]  # type: ignore[misc]


# ---- queue operations --------------------------------------------------------------------


async def enqueue(
    store: Store, *, tenant: str, knowledge_base: str, template: str, trigger: str = "api"
) -> tuple[Job, bool]:
    """Queue a compile; if one for this knowledge base and template is queued or running,
    return that one instead. Returns (job, created)."""
    system = _system(store)
    async with system.transaction():
        active = await _jobs(
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
    return await _system(store).get_one(Job, job_id)  # type: ignore[return-value]


async def lease_next(
    store: Store, worker: str, *, lease_seconds: float, now: float | None = None
) -> Job | None:
    """Take the oldest queued job, or a running one whose lease expired; None if there is none.
    A job whose compile (knowledge base and template) another job is running waits for it."""
    system = _system(store)
    async with system.transaction():
        now = time.time() if now is None else now
        active = await _jobs(system, {"status": list(ACTIVE)})
        held = {_compile_of(job) for job in active if not lease_free(job, now)}
        for job in active:
            if job.trigger == "cli" or _compile_of(job) in held:
                continue  # a CLI compile is resumed by the next `compendium compile`, not a worker
            if job.cancel_requested:  # cancelled while its worker was gone
                job.status, job.finished_at, job.lease_owner = "cancelled", now, ""
                await system.upsert([job])
                continue
            if job.attempts >= MAX_ATTEMPTS:
                job.status, job.finished_at, job.lease_owner = "failed", now, ""
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


def _compile_of(job: Job) -> tuple[str, str, str]:
    return job.tenant, job.knowledge_base, job.template


async def store_serializes(store: Store) -> bool:
    """Whether the store's transactions serialize a read and the write after it (SQLite holds
    its write lock); elsewhere a lease taken is confirmed once concurrent takers have landed."""
    return (await store.info()).get("backend") in SERIALIZING_BACKENDS


async def still_leased(store: Store, job: Job, worker: str) -> bool:
    """After SETTLE_SECONDS: whether `worker` kept the job it leased (no concurrent lease won)."""
    current: Job = await _system(store).get_one(Job, job.id)  # type: ignore[assignment]
    return current.lease_owner == worker and current.status == "running"


async def claim(
    store: Store, *, tenant: str, knowledge_base: str, template: str, worker: str,
    lease_seconds: float, trigger: str = "cli", now: float | None = None,
) -> tuple[Job | None, Job | None]:
    """Lease the compile of this knowledge base and template for `worker` now: a new job, or the
    active one whose holder is gone (it resumes). Returns (leased job, None), or (None, the job
    whose live holder has it)."""
    system = _system(store)
    async with system.transaction():
        now = time.time() if now is None else now
        where = {"tenant": tenant, "knowledge_base": knowledge_base, "template": template, "status": list(ACTIVE)}
        active = await _jobs(system, where)
        held = [job for job in active if not lease_free(job, now)]
        if held:
            return None, held[0]
        if active:
            job = active[0]
            job.attempts += 1
        else:
            job = Job(
                id=new_job_id(), tenant=tenant, knowledge_base=knowledge_base, template=template,
                created_at=now, trigger=trigger, attempts=1,
            )
        job.status, job.lease_owner, job.cancel_requested = "running", worker, False
        job.lease_expires_at, job.heartbeat_at = now + lease_seconds, now
        job.started_at = job.started_at or now
        await system.upsert([job])
    return job, None


async def confirm_claim(store: Store, job: Job, worker: str) -> Job | None:
    """Whether a claim stands, on a store whose transactions do not serialize a read and the
    write after it (MariaDB, Elasticsearch: two claims may both see the lease free). Called once
    concurrent claims have landed: the claim stands if this worker still holds its job and no
    older job of the same compile is running; else it is withdrawn. Returns the winner's job
    (None when the claim stands)."""
    system = _system(store)
    where = {"tenant": job.tenant, "knowledge_base": job.knowledge_base, "template": job.template,
             "status": list(ACTIVE)}
    active = await _jobs(system, where)
    mine = next((j for j in active if j.id == job.id), None)
    if mine is None or mine.lease_owner != worker:
        return mine or (active[0] if active else job)  # another took it over after us
    older = [j for j in active if j.id < job.id and j.status == "running"]
    if older:  # two new jobs raced: the older one runs, ours never started
        await system.delete(Job, {"id": job.id})
        return older[0]
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
    system = _system(store)
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
    system = _system(store)
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
    system = _system(store)
    async with system.transaction():
        job: Job = await system.get_one(Job, job_id)  # type: ignore[assignment]
        if job.status in FINISHED:
            return job
        job.cancel_requested = True
        if job.status == "queued":
            job.status, job.finished_at = "cancelled", time.time()
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
            entry.update(status="finished", result=event.result)
            entry["done"] = event.result.get("done", entry.get("done", 0))
            entry["total"] = event.result.get("items", entry.get("total", 0))
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


@dataclasses.dataclass
class WorkerOptions:
    lease_seconds: float = 60.0
    poll_seconds: float = 1.0
    run_schedules: bool = True


async def run_job(
    store: Store, settings: Settings, data_dir: Path, job: Job, worker: str, *,
    lease_seconds: float, stop: asyncio.Event | None = None,
) -> Job | None:
    """Compile a leased job to its end; returns the finished job (None if the lease was lost)."""
    from ..engines.factory import build_embedder, build_engine
    from ..tenancy import get_kb, kb_documents, kb_store, resolve_template
    from .orchestrator import run_compile

    usage = UsageMeter(None)
    recorder = ProgressRecorder(usage, settings.llm)
    try:
        kb = await get_kb(store, job.tenant, job.knowledge_base)
        template = await resolve_template(store, job.tenant, job.template)
        kb_settings = settings_for_kb(settings, kb)
        usage.budget_tokens = kb_settings.token_budget
        recorder.llm = kb_settings.llm
        scoped = kb_store(store, job.tenant, job.knowledge_base)
        engine = build_engine(kb_settings, template, usage=usage, cache=scoped)
        embedder = build_embedder(kb_settings, template, usage=usage, cache=scoped)
    except CompendiumError as exc:
        return await finish(store, job.id, worker, status="failed", error=str(exc))
    ctx = CompileContext(
        store=scoped, engine=engine, embedder=embedder, template=template, events=recorder,
        documents_dir=kb_documents(data_dir, job.tenant, job.knowledge_base),
    )
    try:
        await _apply_groups(ctx, store, job.tenant, kb.groups)
    except CompendiumError as exc:
        return await finish(store, job.id, worker, status="failed", error=str(exc))
    if engine.name == "offline":
        recorder.emit(Message("info", "compiling with the offline engine (no LLM endpoint)"))
    if ctx.documents_dir is not None:
        await asyncio.to_thread(sweep, ctx.documents_dir, earlier=DOCUMENTS)  # what a killed upload left half-written
    state = {"lost": False, "cancelled": job.cancel_requested}
    keeper = asyncio.create_task(_keep_alive(store, job, worker, lease_seconds, recorder, ctx, state, stop))
    try:
        report = await run_compile(ctx)
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
        await engine.close()
        await embedder.close()
    if state["lost"]:
        return None
    report_data = report.as_dict(kb_settings.llm)
    status = report.status
    if state["cancelled"]:
        status = "cancelled"
    elif ctx.cancel.is_set():  # the worker is stopping: hand the job back to be resumed
        status = "queued"
    try:
        return await finish(store, job.id, worker, status=status, report=report_data,
                            error=report.error, progress=recorder.snapshot())
    except LeaseLost:
        return None


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


async def run_worker(
    store: Store, settings: Settings, data_dir: Path, *, worker: str | None = None,
    options: WorkerOptions | None = None, stop: asyncio.Event | None = None,
    wake: asyncio.Event | None = None,
) -> None:
    """Lease and run jobs (and fire due schedules) until `stop` is set."""
    from .schedules import fire_due_schedules

    options = options or WorkerOptions()
    worker = worker or worker_name()
    stop = stop or asyncio.Event()
    serialized = await store_serializes(store)
    while not stop.is_set():
        if options.run_schedules:
            with contextlib.suppress(CompendiumError):
                await fire_due_schedules(store)
        job = await lease_next(store, worker, lease_seconds=options.lease_seconds)
        if job is not None and not serialized:
            await asyncio.sleep(SETTLE_SECONDS)
            if not await still_leased(store, job, worker):
                continue  # another worker leased it at the same instant, and won
        if job is not None:
            try:
                await run_job(store, settings, data_dir, job, worker,
                              lease_seconds=options.lease_seconds, stop=stop)
            except (LeaseLost, NotFound):
                pass
            except Exception as exc:  # a bug must fail the job, not kill the worker
                with contextlib.suppress(CompendiumError):
                    await finish(store, job.id, worker, status="failed",
                                 error=f"internal error: {type(exc).__name__}: {exc}")
            continue
        await _sleep(options.poll_seconds, stop, wake)


async def _sleep(seconds: float, stop: asyncio.Event, wake: asyncio.Event | None) -> None:
    waits = [asyncio.ensure_future(stop.wait())]
    if wake is not None:
        waits.append(asyncio.ensure_future(wake.wait()))
    _, pending = await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.gather(*pending, return_exceptions=True)
    if wake is not None:
        wake.clear()


async def work(settings: Settings, data_dir: Path, *, options: WorkerOptions | None = None,
               stop: asyncio.Event | None = None) -> None:
    """`compendium worker`: open the server's store and run jobs until `stop` (or Ctrl-C)."""
    from ..storage.factory import open_store
    from ..tenancy import SYSTEM_SCOPE, server_store_url

    store = await open_store(server_store_url(settings.store_url, data_dir), SYSTEM_SCOPE)
    try:
        await run_worker(store, settings, Path(data_dir), options=options, stop=stop)
    finally:
        await store.close()
