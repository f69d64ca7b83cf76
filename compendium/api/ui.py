"""Serves the web UI (hand-written static files) at /ui/ with headers that keep page content inert."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from .headers import SECURITY_HEADERS

STATIC_DIR = Path(__file__).with_name("static")

class _UiFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Any:
        response = await super().get_response(path, scope)
        response.headers.update(SECURITY_HEADERS)
        # Revalidate each load: a new release is picked up at once, unchanged files cost a 304.
        response.headers["Cache-Control"] = "no-cache"
        return response


def mount_ui(app: FastAPI) -> None:
    """Serve the UI at /ui/, redirect / to it, and add the few read routes the UI needs."""
    from . import ui_support

    app.include_router(ui_support.router)

    async def to_ui() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)

    app.add_api_route("/", to_ui, methods=["GET"], include_in_schema=False)
    app.add_api_route("/ui", to_ui, methods=["GET"], include_in_schema=False)
    app.mount("/ui", _UiFiles(directory=STATIC_DIR, html=True), name="ui")
