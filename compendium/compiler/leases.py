"""Who holds a compile's lease: holders named host:pid:token, taken over once gone, and claims
confirmed where the store's transactions do not serialize them.

A lease is held by a worker (`compendium worker`, the server) or a CLI compile. Its holder is
gone when, on this host, its process has ended (taken over at once), or, elsewhere, when its
lease expired without a heartbeat. SQLite runs a transaction under its write lock, so a
read-check-write there is atomic; MariaDB and Elasticsearch do not lock what a transaction
read, so two takers may both see a lease free: each then waits SETTLE_SECONDS and keeps the
lease only if it still holds it (or, for two new jobs, if its job is the older).
"""

from __future__ import annotations

import os
import secrets
import time
from typing import Any

from ..processes import process_alive, this_host
from ..storage.base import Store
from ..storage.records import Job

ACTIVE = ("queued", "running")

STALE_LEASES = 10  # a live holder on this host that missed this many leases is presumed hung
SETTLE_SECONDS = 0.5  # for concurrent lease takers to land on a store that does not serialize them


def system_of(store: Store) -> Store:
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


async def jobs_where(system: Store, where: dict[str, Any]) -> list[Job]:
    return [job async for job in system.scan(Job, where)]  # type: ignore[misc]


def compile_of(job: Job) -> tuple[str, str, str]:
    return job.tenant, job.knowledge_base, job.template


async def store_serializes(store: Store) -> bool:
    """Whether the store's serialized transactions hold a read and the write after it together
    (SQLite's write lock, MySQL's named lock); elsewhere a lease taken is confirmed once
    concurrent takers have landed."""
    return bool((await store.info()).get("serialized_transactions"))


async def still_leased(store: Store, job: Job, worker: str) -> bool:
    """After SETTLE_SECONDS: whether `worker` kept the job it leased (no concurrent lease won)."""
    current: Job = await system_of(store).get_one(Job, job.id)  # type: ignore[assignment]
    return current.lease_owner == worker and current.status == "running"


async def claim(
    store: Store, *, tenant: str, knowledge_base: str, template: str, worker: str,
    lease_seconds: float, trigger: str = "cli", now: float | None = None,
) -> tuple[Job | None, Job | None]:
    """Lease the compile of this knowledge base and template for `worker` now: a new job, or the
    active one whose holder is gone (it resumes). Returns (leased job, None), or (None, the job
    whose live holder has it)."""
    system = system_of(store)
    async with system.transaction(serialized=True):
        now = time.time() if now is None else now
        where = {"tenant": tenant, "knowledge_base": knowledge_base, "template": template, "status": list(ACTIVE)}
        active = await jobs_where(system, where)
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
    system = system_of(store)
    where = {"tenant": job.tenant, "knowledge_base": job.knowledge_base, "template": job.template,
             "status": list(ACTIVE)}
    active = await jobs_where(system, where)
    mine = next((j for j in active if j.id == job.id), None)
    if mine is None or mine.lease_owner != worker:
        return mine or (active[0] if active else job)  # another took it over after us
    older = [j for j in active if j.id < job.id and j.status == "running"]
    if older:  # two new jobs raced: the older one runs, ours never started
        await system.delete(Job, {"id": job.id})
        return older[0]
    return None
