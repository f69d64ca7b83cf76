"""The FastAPI application: routers, JSON errors, the store's lifetime and an in-process worker."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import Depends, FastAPI

from .. import __version__
from ..compiler.worker import WorkerOptions, run_worker
from ..errors import InputError
from ..ingest.bounded_reading import MAX_UNPACKED, MAX_UPLOAD_UNPACKED, ReadLimits
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
from .limits import BodyLimit, FailedLogins, redact_query, upload_request_limit
from .query import one_value_each

ROUTERS = (
    auth, templates, knowledge_bases, kb_status, documents, jobs, schedules, pages, entities, graph, search,
    retrieval, outline,
)


def create_app(
    settings: Settings, *, data_dir: Path, run_worker: bool = True, admin_key: str | None = None,
    worker_options: WorkerOptions | None = None, max_upload_bytes: int | None = None,
    max_request_bytes: int | None = None, ui: bool = True, workspace: WorkspaceLink | None = None,
    max_unpacked_bytes: int | None = None, max_upload_unpacked: int | None = None,
    failed_logins: FailedLogins | None = None,
) -> FastAPI:
    """The API over one store and one data folder. With run_worker, a worker runs in this
    process (leasing jobs from the shared store like any `compendium worker`).
    max_upload_bytes bounds one uploaded file, max_request_bytes one upload request,
    max_unpacked_bytes what one zip-based file (DOCX) may unpack to and max_upload_unpacked
    what those of one upload may together; `failed_logins` how failed sign-ins are limited. With
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
    app.state.failed_logins = failed_logins or FailedLogins()
    app.state.document_limits = ReadLimits(max_unpacked=max_unpacked_bytes or MAX_UNPACKED)
    app.state.max_upload_unpacked = max_upload_unpacked or MAX_UPLOAD_UNPACKED
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
    """`compendium serve`: run the API (and a worker) with uvicorn until interrupted. A port
    another program holds is an InputError naming it; a credential in a logged query string
    is redacted."""
    import uvicorn

    sock = bind(host, port)
    app = create_app(settings, data_dir=data_dir, run_worker=run_worker, admin_key=admin_key,
                     workspace=workspace)
    config = uvicorn.Config(app, host=host, port=port, log_level="info")
    server = uvicorn.Server(config)
    config.load()  # configures uvicorn's loggers; the filter goes on after
    logging.getLogger("uvicorn.access").addFilter(RedactCredentials())
    server.run(sockets=[sock])


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); InputError (exit 2) naming the port when another
    program holds it or it cannot be had."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} on {host} is in use by another program",
                             hint="stop that program or choose another port with --port") from None
        raise InputError(f"cannot listen on port {port} of {host}: {exc.strerror or exc}",
                         hint="choose another port with --port or another address with --host") from None
    sock.set_inheritable(True)
    return sock


class RedactCredentials(logging.Filter):
    """Rewrites an access log line's path so that no credential in its query string is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], redact_query(args[2]), *args[3:])
        elif isinstance(record.msg, str):
            record.msg = redact_query(record.msg)
        return True
