"""What a task worker does with a task: answers it as the compile's engine would, from the store
when it can, and refuses a compile it is not configured to answer for."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from compendium.distributed.base import CompileIdentity
from compendium.distributed.calls import encode_template, task_payload
from compendium.distributed.worker import TaskRuntime
from compendium.engines.offline import OfflineEngine
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.tasks import (
    ChunkInput,
    EvidenceItem,
    ExtractionBatch,
    LinkTarget,
    PageRequest,
)
from compendium.engines.usage import UsageMeter
from compendium.settings import Settings
from compendium.templates.registry import load_template
from tests.support.llm_fixtures import settings_for
from tests.support.llm_server import LLMServer

PAGE = PageRequest(
    "write-ahead-log", "Write-ahead log", "entity", "Records every change before data pages are written.", ["WAL"],
    [EvidenceItem(1, "The write-ahead log records every change before data pages are written.", "k1", "Guide"),
     EvidenceItem(2, "Crash recovery replays the write-ahead log from the last checkpoint.", "k2", "Guide")],
    [LinkTarget("checkpointer", "Checkpointer")],
)
OFFLINE_EMBEDDER = OfflineEmbedder().model
OFFLINE_MODEL = OfflineEngine(usage=UsageMeter()).model


@pytest.fixture
def runtime(llm_server: LLMServer, tmp_path: Path) -> Iterator[TaskRuntime]:
    settings = dataclasses.replace(settings_for(llm_server), store_url=f"sqlite:///{tmp_path / 'store.db'}")
    worker = TaskRuntime(settings, "w-test@localhost")
    try:
        yield worker
    finally:
        worker.close()


def _payload(method: str, request: object, *, engine: str = "llm", embedder: str = OFFLINE_EMBEDDER) -> dict:
    identity = CompileIdentity("default", engine, "test-chat" if engine == "llm" else OFFLINE_MODEL, embedder)
    return task_payload(identity, method, request, encode_template(load_template("wiki")))


def test_a_task_run_again_is_answered_from_the_store_without_asking_the_model(runtime: TaskRuntime, llm_server: LLMServer):
    first = runtime.run(_payload("write_page", PAGE))
    assert "error" not in first, first
    assert first["usage"]["llm_calls"] == 1 and "[^" in first["reply"]
    asked = llm_server.calls["chat"]

    again = runtime.run(_payload("write_page", PAGE))  # a killed worker's task, delivered again

    assert again["reply"] == first["reply"]
    assert again["usage"]["llm_calls"] == 0 and again["usage"]["cached_calls"] == 1
    assert llm_server.calls["chat"] == asked


def test_a_compile_using_another_embedder_is_refused_naming_both(runtime: TaskRuntime):
    answer = runtime.run(_payload("write_page", PAGE, embedder="text-embedding-3-large"))
    assert answer["error"]["type"] == "ConfigError"
    assert "text-embedding-3-large" in answer["error"]["message"] and OFFLINE_EMBEDDER in answer["error"]["message"]
    assert answer["worker"] == "w-test@localhost"


def test_an_offline_compile_is_answered_by_the_offline_engine(runtime: TaskRuntime, llm_server: LLMServer):
    batch = ExtractionBatch([ChunkInput("c1", "The Checkpointer flushes dirty pages and writes a checkpoint into "
                                              "the Write-Ahead Log (WAL).", ["Storage"], "Lumen DB guide")])
    answer = runtime.run(_payload("extract", batch, engine="offline"))
    assert "error" not in answer, answer
    assert answer["reply"]["entities"] and llm_server.calls["chat"] == 0


def test_a_worker_without_an_endpoint_refuses_an_llm_compile(tmp_path: Path):
    worker = TaskRuntime(Settings(store_url=f"sqlite:///{tmp_path / 'store.db'}"), "w-bare")
    try:
        answer = worker.run(_payload("write_page", PAGE))
    finally:
        worker.close()
    assert answer["error"]["type"] == "EngineUnavailable"
    assert "COMPENDIUM_LLM_BASE_URL" in (answer["error"]["hint"] or "")
