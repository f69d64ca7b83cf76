"""The FastAPI application: routers, JSON errors, the store's lifetime and an in-process worker."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import Depends, FastAPI

from .. import __version__
from ..compiler.worker import WorkerOptions, run_worker
from ..settings import Settings
from ..storage.factory import open_store
from ..templates import worker as template_worker
from ..tenancy import WorkspaceLink, attach_workspace, server_store_url
from . import (
    auth,
    documents,
    entities,
    errors,
    graph,
    jobs,
    kb_status,
    knowledge_bases,
    outline,
    pages,
    retrieval,
    schedules,
    search,
    templates,
)
from .auth import Service
from .headers import SecurityHeaders
from .limits import BodyLimit, upload_request_limit
from .query import one_value_each

ROUTERS = (
    auth, templates, knowledge_bases, kb_status, documents, jobs, schedules, pages, entities, graph, search,
    retrieval, outline,
)


def create_app(
    settings: Settings, *, data_dir: Path, run_worker: bool = True, admin_key: str | None = None,
    worker_options: WorkerOptions | None = None, max_upload_bytes: int | None = None,
    max_request_bytes: int | None = None, ui: bool = True, workspace: WorkspaceLink | None = None,
) -> FastAPI:
    """The API over one store and one data folder. With run_worker, a worker runs in this
    process (leasing jobs from the shared store like any `compendium worker`).
    max_upload_bytes bounds one uploaded file, max_request_bytes one upload request. With
    `workspace` (`compendium serve` in a workspace) its knowledge base is the tenants'
    (attach_workspace)."""
    svc = Service(settings=settings, data_dir=Path(data_dir).resolve(), admin_key=admin_key or None)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        svc.data_dir.mkdir(parents=True, exist_ok=True)
        svc.store = await open_store(server_store_url(settings.store_url, svc.data_dir), "_system")
        template_worker.warm()  # the first template a tenant sends need not wait for it to start
        if workspace is not None:
            await attach_workspace(svc.store, workspace)
        stop = asyncio.Event()
        task = None
        if run_worker:
            task = asyncio.create_task(run_worker_task(svc, stop, worker_options))
        app.state.worker_stop = stop
        try:
            yield
        finally:
            stop.set()
            if task is not None:
                await task
            store, svc.store = svc.store, None
            await store.close()

    app = FastAPI(
        title="Compendium",
        version=__version__,
        description="Compile knowledge bases into cited, cross-linked wikis, entity graphs and "
        "topics. Authenticate with `Authorization: Bearer <API key>`. Every list is paged: "
        "pass `next_cursor` back as `cursor`. Errors are `{\"error\": {\"code\", \"message\", \"field\"}}`.",
        lifespan=lifespan,
        dependencies=[Depends(one_value_each)],
    )
    app.state.service = svc
    if max_upload_bytes is not None:
        app.state.max_upload_bytes = max_upload_bytes
    file_bytes = max_upload_bytes or documents.MAX_FILE_BYTES
    app.add_middleware(BodyLimit, upload_bytes=max_request_bytes or upload_request_limit(file_bytes))
    app.add_middleware(SecurityHeaders)
    errors.install(app)
    for module in ROUTERS:
        app.include_router(module.router)
    if ui:  # the web UI (api/ui.py) at /ui/
        from .ui import mount_ui

        mount_ui(app)
    errors.document_errors(app)
    return app


async def run_worker_task(svc: Service, stop: asyncio.Event, options: WorkerOptions | None) -> None:
    assert svc.store is not None
    await run_worker(svc.store, svc.settings, svc.data_dir, options=options, stop=stop, wake=svc.wake)


def serve(settings: Settings, *, data_dir: Path, host: str = "127.0.0.1", port: int = 8321,
          admin_key: str | None = None, run_worker: bool = True, workspace: WorkspaceLink | None = None) -> None:
    """`compendium serve`: run the API (and a worker) with uvicorn until interrupted."""
    import uvicorn

    app = create_app(settings, data_dir=data_dir, run_worker=run_worker, admin_key=admin_key,
                     workspace=workspace)
    uvicorn.run(app, host=host, port=port, log_level="info")
