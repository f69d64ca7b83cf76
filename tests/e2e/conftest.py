"""End-to-end fixtures: the sample corpus compiled once through the CLI against the scripted server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compendium.cli import main
from compendium.storage.factory import open_store
from compendium.storage.records import Record
from tests.support.llm_server import ChatRequest, LLMServer
from tests.support.workspace_fixtures import SAMPLE_CORPUS

STORE = Path(".compendium") / "store.db"


def llm_env(server: LLMServer) -> dict[str, str]:
    """The environment a `compendium` process needs to use the scripted server. No hedging:
    these tests hold the report's calls and tokens to the server's counts, and a hedge the
    loaded machine provokes is a request the server counts and the report cannot (its reply
    is dropped unread); hedging has tests of its own (tests/engines/test_hedged_calls.py)."""
    return {
        "COMPENDIUM_LLM_BASE_URL": server.base_url,
        "COMPENDIUM_LLM_API_KEY": "test-key",
        "COMPENDIUM_LLM_MODEL": "test-chat",
        "COMPENDIUM_LLM_HEDGE": "false",
    }


@contextlib.contextmanager
def pointed_at(server: LLMServer) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for name, value in llm_env(server).items():
            mp.setenv(name, value)
        mp.delenv("COMPENDIUM_STORE", raising=False)
        yield


def compile_in_process(workspace: Path, server: LLMServer, report: Path | None = None) -> dict[str, Any]:
    """`compendium -w WS compile --plain --report FILE`, run in this process; returns the report."""
    report = report or workspace.parent / f"{workspace.name}-report.json"
    with pointed_at(server):
        code = main(["-w", str(workspace), "compile", "--plain", "--report", str(report)])
    data = json.loads(report.read_text(encoding="utf-8"))
    assert code == 0, data.get("error")
    return data


def read_store(workspace: Path, *kinds: type[Record]) -> list[list[Any]]:
    """Every record of each kind in the workspace's SQLite store."""

    async def scan() -> list[list[Any]]:
        store = await open_store(f"sqlite:///{(workspace / STORE).resolve()}", "default")
        try:
            return [[r async for r in store.scan(kind)] for kind in kinds]
        finally:
            await store.close()

    return asyncio.run(scan())


def new_workspace(root: Path) -> Path:
    from compendium.workspace import init_workspace

    workspace = init_workspace(root)
    shutil.copytree(SAMPLE_CORPUS, workspace / "documents" / "corpus")
    return workspace


@dataclass
class CompiledSample:
    workspace: Path
    report: dict[str, Any]
    requests: list[ChatRequest]
    calls: dict[str, int]
    prompt_tokens: int
    completion_tokens: int

    def copy(self, target: Path) -> Path:
        """A workspace in the same state, to change without touching the shared one."""
        shutil.copytree(self.workspace, target)
        return target


@pytest.fixture(scope="session")
def e2e_server() -> Iterator[LLMServer]:
    server = LLMServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def compiled_sample(tmp_path_factory: pytest.TempPathFactory, e2e_server: LLMServer) -> CompiledSample:
    """The sample corpus compiled once with the LLM engine; tests must not change it (copy it)."""
    root = tmp_path_factory.mktemp("sample")
    workspace = new_workspace(root / "ws")
    e2e_server.reset()
    report = compile_in_process(workspace, e2e_server, root / "report.json")
    return CompiledSample(
        workspace=workspace,
        report=report,
        requests=list(e2e_server.requests),
        calls=dict(e2e_server.calls),
        prompt_tokens=e2e_server.prompt_tokens,
        completion_tokens=e2e_server.completion_tokens,
    )
