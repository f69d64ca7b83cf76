"""A small workspace for incremental tests, compiled through the real CLI stack against the scripted server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compendium.operations import compile_workspace, opened_store
from compendium.settings import load_settings
from compendium.storage.records import Record
from compendium.workspace import init_workspace
from tests.support.llm_server import LLMServer

DOCUMENTS = {
    "storage.md": (
        "# Storage Engine\n\n## Overview\n\nThe Storage Engine writes pages to disk in fixed blocks. "
        "The Storage Engine uses the Buffer Pool for caching hot pages.\n\n## Recovery\n\n"
        "After a crash the Storage Engine replays the Redo Journal before it accepts writes. "
        "The Redo Journal is flushed by the Storage Engine at every commit.\n"
    ),
    "buffer.md": (
        "# Buffer Pool\n\n## Eviction\n\nThe Buffer Pool evicts cold pages with the Clock Sweep Policy. "
        "The Storage Engine reads pages through the Buffer Pool.\n\n## Sizing\n\n"
        "The Buffer Pool takes a quarter of memory by default. The Clock Sweep Policy skips pinned pages.\n"
    ),
    "journal.md": (
        "# Redo Journal\n\n## Format\n\nThe Redo Journal stores physical changes in segments. "
        "The Redo Journal is archived by the Archive Daemon once a segment fills.\n\n## Retention\n\n"
        "The Archive Daemon deletes segments older than a week. The Archive Daemon reports to the Storage Engine.\n"
    ),
    "gateway.md": (
        "# Zephyr Gateway\n\n## Routing\n\nThe Zephyr Gateway forwards requests to the Storage Engine. "
        "The Buffer Pool glows purple whenever the Zephyr Gateway is busy.\n\n## Ownership\n\n"
        "The Zephyr Gateway was built by the Orion Team. The Orion Team maintains the Zephyr Gateway.\n"
    ),
}
DELETED_FACT = "glows purple"  # said only by gateway.md


def make_workspace(root: Path) -> Path:
    workspace = init_workspace(root)
    folder = workspace / "documents" / "kb"
    folder.mkdir(parents=True)
    for name, text in DOCUMENTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return workspace


def env_for(server: LLMServer) -> dict[str, str]:
    return {"COMPENDIUM_LLM_BASE_URL": server.base_url, "COMPENDIUM_LLM_API_KEY": "k", "COMPENDIUM_LLM_MODEL": "test-chat"}


async def compile_(workspace: Path, server: LLMServer) -> dict[str, Any]:
    report = await compile_workspace(load_settings(workspace, env=env_for(server)))
    data = report.as_dict()
    assert data["status"] == "succeeded", data["error"]
    return data


async def records(workspace: Path, server: LLMServer, kind: type[Record]) -> list[Any]:
    async with opened_store(load_settings(workspace, env=env_for(server))) as store:
        return [r async for r in store.scan(kind)]


def schemas(server: LLMServer) -> dict[str, int]:
    """Calls by task: extraction, pairs, description, topic, matches, and "page" for page writes."""
    out: dict[str, int] = {}
    for r in server.requests:
        name = r.schema_name or "page"
        out[name] = out.get(name, 0) + 1
    return out
