"""Fixtures: the API in-process over httpx's ASGI transport, on a real SQLite store."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from compendium.api.app import create_app
from compendium.compiler.worker import WorkerOptions
from compendium.settings import Settings

ADMIN_KEY = "admin-test-key-0123456789"
REPO = Path(__file__).resolve().parents[2]
SAMPLE_CORPUS = REPO / "samples" / "corpus"


class Api:
    """A running app and a client; `as_(key)` gives headers for a key."""

    def __init__(self, app: Any, client: httpx.AsyncClient, data_dir: Path):
        self.app, self.client, self.data_dir = app, client, data_dir

    @property
    def store(self) -> Any:
        return self.app.state.service.store

    @staticmethod
    def as_(key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}

    async def tenant_key(self, tenant: str) -> str:
        admin = self.as_(ADMIN_KEY)
        r = await self.client.post("/tenants", json={"name": tenant}, headers=admin)
        assert r.status_code == 201, r.text
        r = await self.client.post(f"/tenants/{tenant}/keys", json={"name": "ci"}, headers=admin)
        assert r.status_code == 201, r.text
        return r.json()["key"]

    async def upload_corpus(self, kb: str, key: str, *, only: int | None = None) -> int:
        paths = sorted(p for p in SAMPLE_CORPUS.rglob("*") if p.is_file())[:only]
        files = [
            ("files", (p.relative_to(SAMPLE_CORPUS).as_posix(), p.read_bytes(), _type(p)))
            for p in paths
        ]
        r = await self.client.post(f"/knowledge-bases/{kb}/documents", files=files,
                                   data={"folder": "corpus"}, headers=self.as_(key))
        assert r.status_code == 201, r.text
        return len(r.json())

    async def follow(self, job_id: str, key: str) -> list[tuple[str, dict[str, Any]]]:
        """Every SSE event of the job until its final report."""
        async with self.client.stream("GET", f"/jobs/{job_id}/events", headers=self.as_(key)) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            text = "".join([chunk async for chunk in r.aiter_text()])
        return parse_sse(text)


def _type(path: Path) -> str:
    return {".md": "text/markdown", ".html": "text/html"}.get(path.suffix, "text/plain")


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.split("\n\n"):
        name, data = "message", None
        for line in block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if data is not None:
            events.append((name, data))
    return events


@pytest.fixture
def make_api(tmp_path: Path) -> Callable[..., contextlib.AbstractAsyncContextManager[Api]]:
    """make_api(settings=..., run_worker=True, ...) -> async context of an Api."""

    @contextlib.asynccontextmanager
    async def make(settings: Settings | None = None, *, run_worker: bool = True,
                   data_dir: Path | None = None, **options: Any) -> AsyncIterator[Api]:
        folder = data_dir or tmp_path / "data"
        worker = WorkerOptions(lease_seconds=5.0, poll_seconds=0.05)
        app = create_app(settings or Settings(), data_dir=folder, run_worker=run_worker,
                         admin_key=ADMIN_KEY, worker_options=worker, **options)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://api") as client:
                yield Api(app, client, folder)

    return make
