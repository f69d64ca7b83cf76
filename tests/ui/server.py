"""The API (with the UI mounted) served by uvicorn in a thread, and the data the UI tests browse."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from compendium.api.app import create_app
from compendium.api.ui import mount_ui
from compendium.compiler.jobs import FINISHED
from compendium.compiler.worker import WorkerOptions
from compendium.settings import Settings

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "samples" / "corpus"
ADMIN_KEY = "admin-key-for-ui-tests"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class UiServer:
    """`start()` returns once the server answers; `url` is its base address."""

    def __init__(self, settings: Settings, data_dir: Path, **options: Any):
        self.settings, self.data_dir = settings, data_dir
        app = create_app(
            settings, data_dir=data_dir, run_worker=True, admin_key=ADMIN_KEY,
            worker_options=WorkerOptions(poll_seconds=0.2), **options,
        )
        if not any(getattr(route, "path", None) == "/ui" for route in app.routes):
            mount_ui(app)  # until create_app mounts it itself
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="ui-api", daemon=True)

    def start(self) -> UiServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the API server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)

    def client(self, key: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


@dataclass
class Seed:
    tenant: str
    kb: str
    key: str
    job: dict[str, Any]


def create_tenant(server: UiServer, tenant: str) -> str:
    """A new tenant and one API key of it."""
    with server.client(ADMIN_KEY) as admin:
        admin.post("/tenants", json={"name": tenant}).raise_for_status()
        created = admin.post(f"/tenants/{tenant}/keys", json={"name": "ui tests"})
        created.raise_for_status()
        return str(created.json()["key"])


def upload(client: httpx.Client, kb: str, files: dict[str, bytes]) -> None:
    parts = [("files", (name, data, "application/octet-stream")) for name, data in files.items()]
    client.post(f"/knowledge-bases/{kb}/documents", files=parts).raise_for_status()


def corpus_files(extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    files = {p.relative_to(CORPUS).as_posix(): p.read_bytes() for p in sorted(CORPUS.rglob("*")) if p.is_file()}
    return {**files, **(extra or {})}


def wait_for_job(client: httpx.Client, job_id: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}").json()
        if job["status"] in FINISHED:
            return dict(job)
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s")


# A document whose text carries markup that would run if any view inserted it as HTML.
HOSTILE = (
    b"# Hostile Notes\n\n"
    b"## Storing samples\n\n"
    b"The Lumen Sandbox stores untrusted samples for Lumen DB. "
    b"The Lumen Sandbox keeps <script>window.__pwned = 'script'</script> tags as plain text.\n\n"
    b"## Showing samples\n\n"
    b"The Lumen Sandbox shows <img src=x onerror=\"window.__pwned = 'onerror'\"> markup as text. "
    b"The Lumen Sandbox is part of Lumen DB.\n"
)


def seed_knowledge_base(server: UiServer, *, tenant: str, kb: str) -> Seed:
    key = create_tenant(server, tenant)
    with server.client(key) as client:
        client.post("/knowledge-bases", json={"name": kb, "description": "Lumen DB handbook"}).raise_for_status()
        upload(client, kb, corpus_files({"hostile/notes.md": HOSTILE}))
        job = client.post(f"/knowledge-bases/{kb}/compile", json={}).json()
        done = wait_for_job(client, job["id"])
        assert done["status"] == "succeeded", done
    return Seed(tenant=tenant, kb=kb, key=key, job=done)
