"""One compile per knowledge base and template at a time: a CLI compile holds a job lease too."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from ..errors import Busy, CompendiumError
from ..pipeline.context import CompileContext
from ..storage.base import Store
from ..storage.records import Job
from .jobs import LeaseLost, finish, heartbeat
from .leases import (
    SETTLE_SECONDS,
    claim,
    confirm_claim,
    lease_free,
    lease_holder,
    store_serializes,
    system_of,
    worker_name,
)
from .report import CANCELLED, FAILED, CompileReport

LOCAL_TENANT = ""  # a workspace's compiles belong to no tenant of the server


def describe_holder(job: Job, now: float | None = None) -> str:
    """'pid 123 on host h, since 08:40:12 UTC (last heartbeat 3 s ago)', for messages."""
    now = time.time() if now is None else now
    holder = lease_holder(job.lease_owner)
    who = f"pid {holder[1]} on host {holder[0]}" if holder else f"worker {job.lease_owner}"
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(job.started_at))
    return f"{who}, since {since} (last heartbeat {max(0.0, now - job.heartbeat_at):.0f} s ago)"


async def running_compiles(store: Store, knowledge_base: str) -> list[dict[str, object]]:
    """The workspace's compiles whose holder still has the lease (for `compendium status`)."""
    now = time.time()
    where = {"tenant": LOCAL_TENANT, "knowledge_base": knowledge_base, "status": "running"}
    jobs: list[Job] = [j async for j in system_of(store).scan(Job, where)]  # type: ignore[misc]
    found: list[dict[str, object]] = []
    for job in jobs:
        if lease_free(job, now):
            continue
        host, pid = lease_holder(job.lease_owner) or (None, None)
        found.append({"template": job.template, "host": host, "pid": pid, "started_at": job.started_at,
                      "heartbeat_at": job.heartbeat_at, "holder": describe_holder(job, now)})
    return found


async def acquire(
    store: Store, *, knowledge_base: str, template: str, worker: str, wait: bool,
    lease_seconds: float, poll_seconds: float, waiting: Callable[[Job], None] | None = None,
) -> Job:
    """The lease of this compile for `worker`; Busy if a live holder has it (unless `wait`)."""
    told = False
    serialized = await store_serializes(store)
    while True:
        job, holder = await claim(
            store, tenant=LOCAL_TENANT, knowledge_base=knowledge_base, template=template,
            worker=worker, lease_seconds=lease_seconds,
        )
        if job is not None and not serialized:
            await asyncio.sleep(SETTLE_SECONDS)
            holder = await confirm_claim(store, job, worker)
            job = job if holder is None else None
        if job is not None:
            return job
        assert holder is not None
        if not wait:
            raise Busy(
                f"another compile of knowledge base {knowledge_base!r} with template {template!r} is "
                f"running: {describe_holder(holder)}",
                hint="wait for it with `compendium compile --wait`",
            )
        if not told and waiting is not None:
            waiting(holder)
            told = True
        await asyncio.sleep(poll_seconds)


async def compile_exclusively(
    store: Store, ctx: CompileContext, *, knowledge_base: str, wait: bool = False,
    lease_seconds: float = 60.0, poll_seconds: float = 1.0,
) -> CompileReport:
    """run_compile under the compile's lease: heartbeating while it runs, released at the end
    with the report's status. A killed holder's lease is taken over by the next compile."""
    from ..pipeline.events import Message
    from .orchestrator import run_compile

    worker = worker_name()
    job = await acquire(
        store, knowledge_base=knowledge_base, template=ctx.template.name, worker=worker, wait=wait,
        lease_seconds=lease_seconds, poll_seconds=poll_seconds,
        waiting=lambda holder: ctx.events.emit(
            Message("info", f"waiting for the compile held by {describe_holder(holder)}")
        ),
    )
    if job.attempts > 1:
        ctx.info("resuming a compile whose process ended before it finished")
    lost: list[str] = []
    keeper = asyncio.create_task(_keep_lease(store, job, worker, lease_seconds, ctx, lost))
    status, error, report = CANCELLED, "interrupted", None  # what is recorded if the compile is
    try:  # interrupted (Ctrl-C) before it reports
        report = await run_compile(ctx)
        status, error = report.status, report.error
    except Exception as exc:
        status, error = FAILED, f"internal error: {type(exc).__name__}: {exc}"
        raise
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
        with contextlib.suppress(CompendiumError):  # LeaseLost among them: the new holder owns it
            await finish(store, job.id, worker, status=status, error=error,
                         report=report.as_dict() if report is not None else None)
    if lost:
        report.status, report.error = CANCELLED, lost[0]
    return report


async def _keep_lease(
    store: Store, job: Job, worker: str, lease_seconds: float, ctx: CompileContext, lost: list[str]
) -> None:
    """Heartbeat every third of the lease; stop the compile if the lease is lost or a cancel
    is asked for (through the API of a shared store)."""
    while True:
        await asyncio.sleep(lease_seconds / 3)
        try:
            current = await heartbeat(store, job.id, worker, lease_seconds=lease_seconds)
        except LeaseLost:
            lost.append("another process took over this compile's lease (were its heartbeats stalled?)")
            ctx.cancel.set()
            return
        except CompendiumError:
            continue  # the store hiccuped: try again at the next beat
        if current.cancel_requested:
            ctx.cancel.set()
