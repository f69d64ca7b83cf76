"""The worker: fires due schedules and runs leased jobs until it is told to stop."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from pathlib import Path

from ..errors import CompendiumError, NotFound
from ..settings import Settings
from ..storage.base import Store
from .exclusive import compile_exclusively
from .jobs import LeaseLost, finish, lease_next, run_job
from .leases import SETTLE_SECONDS, still_leased, store_serializes, worker_name
from .schedules import fire_due_schedules


@dataclasses.dataclass
class WorkerOptions:
    lease_seconds: float = 60.0
    poll_seconds: float = 1.0
    run_schedules: bool = True


async def run_worker(
    store: Store, settings: Settings, data_dir: Path, *, worker: str | None = None,
    options: WorkerOptions | None = None, stop: asyncio.Event | None = None,
    wake: asyncio.Event | None = None,
) -> None:
    """Lease and run jobs (and fire due schedules) until `stop` is set."""
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
                              lease_seconds=options.lease_seconds, stop=stop, exclusive=compile_exclusively)
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
