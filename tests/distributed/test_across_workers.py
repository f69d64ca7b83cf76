"""One compile on three Celery worker processes (MariaDB store, Redis broker), one killed midway."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import threading
import time
import uuid
from pathlib import Path

import pytest
import yaml

from compendium.operations import compile_workspace
from compendium.settings import DistributedSettings, load_settings
from compendium.storage.factory import open_store
from compendium.storage.records import CacheEntry
from compendium.templates.registry import show_template
from compendium.workspace import init_workspace
from tests.support.llm_server import ChatRequest, LLMServer
from tests.support.outputs import drop_knowledge_bases, exported
from tests.support.task_workers import (
    forget_tasks,
    start_task_workers,
    stop_task_workers,
    wait_until_answering,
)
from tests.support.workspace_fixtures import SAMPLE_CORPUS

MYSQL_URL = os.environ.get("COMPENDIUM_TEST_MYSQL_URL", "").strip()
REDIS_URL = os.environ.get("COMPENDIUM_TEST_REDIS_URL", "").strip()
pytestmark = [
    pytest.mark.skipif(not MYSQL_URL, reason="COMPENDIUM_TEST_MYSQL_URL is not set: no MariaDB/MySQL server"),
    pytest.mark.skipif(not REDIS_URL, reason="COMPENDIUM_TEST_REDIS_URL is not set: no Redis server for the broker"),
]
pytest.importorskip("celery", reason="celery is not installed: pip install -e '.[distributed]'")

WORKERS, CONCURRENCY = 3, 2
LATENCY = 0.2  # seconds per model answer: the tasks in flight when the worker is killed are real
VISIBILITY = 3.0  # seconds before the killed worker's tasks go to another worker
RESEND = 10.0  # seconds before the compile sends a task still unanswered again
KILL_AFTER_PAGES = 12  # REFINE page calls the server has seen when a worker is killed


class Recording:
    """The scripted server's answers, in order: (arrival time, task key, content)."""

    def __init__(self, responder):  # type: ignore[no-untyped-def]
        self.responder, self.log = responder, []
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str:
        content = self.responder(request)
        with self.lock:
            self.log.append((time.monotonic(), request.task_key, content))
        return content


def _env(server: LLMServer) -> dict[str, str]:
    return {
        "COMPENDIUM_LLM_BASE_URL": server.base_url, "COMPENDIUM_LLM_API_KEY": "test-key",
        "COMPENDIUM_LLM_MODEL": "test-chat", "COMPENDIUM_EMBED_BASE_URL": server.base_url,
        "COMPENDIUM_EMBED_API_KEY": "test-key", "COMPENDIUM_EMBED_MODEL": "test-embed",
        "COMPENDIUM_STORE": MYSQL_URL,
        # Every request the server sees is counted: a hedge (a second request beside a slow one
        # on a loaded machine) would be counted as asked again.
        "COMPENDIUM_LLM_HEDGE": "false",
    }


async def _stored_replies(kb: str) -> set[str]:
    store = await open_store(MYSQL_URL, kb)
    try:
        return {e.value["content"] async for e in store.scan(CacheEntry, {"namespace": "llm"})}  # type: ignore[attr-defined,index]
    finally:
        await store.close()


@pytest.fixture
def knowledge_bases():  # type: ignore[no-untyped-def]
    names = [f"single-{uuid.uuid4().hex[:8]}", f"spread-{uuid.uuid4().hex[:8]}"]
    yield names
    asyncio.run(drop_knowledge_bases(MYSQL_URL, names))


def test_a_compile_spread_over_three_workers_survives_a_killed_worker(tmp_path: Path, knowledge_bases):  # type: ignore[no-untyped-def]
    from compendium.distributed.celery_app import celery_app

    single, spread = knowledge_bases
    workspace = init_workspace(tmp_path / "ws")
    shutil.copytree(SAMPLE_CORPUS, workspace / "documents" / "corpus")
    # The compile keeps as many calls in flight as the three workers run together.
    wiki = yaml.safe_load(show_template("wiki"))
    for phase in ("map", "refine"):
        wiki.setdefault(phase, {})["concurrency"] = WORKERS * CONCURRENCY
    (workspace / "templates" / "wiki.yaml").write_text(yaml.safe_dump(wiki, sort_keys=False), encoding="utf-8")
    server = LLMServer().start()
    server.set_latency(LATENCY)
    recording = server.responder = Recording(server.responder)
    app = celery_app(DistributedSettings(broker=REDIS_URL, visibility_timeout=VISIBILITY))
    forget_tasks(app)  # tasks a previous run left behind
    procs = start_task_workers(WORKERS, CONCURRENCY, {**_env(server), "COMPENDIUM_BROKER": REDIS_URL,
                               "COMPENDIUM_TASK_VISIBILITY_TIMEOUT": str(VISIBILITY)}, tmp_path)
    try:
        # The reference: the embedded default, in this process, no broker.
        alone = load_settings(workspace, env=_env(server), overrides={"knowledge_base": single})
        report = asyncio.run(compile_workspace(alone))
        assert report.status == "succeeded", report.error
        reference_calls = [key for _t, key, _c in recording.log]
        assert len(set(reference_calls)) == len(reference_calls)  # a clean run asks each thing once
        recording.log.clear()
        server.reset()

        wait_until_answering(app, procs)
        killed: dict[str, object] = {}

        def kill_midway() -> None:
            while server.calls["text"] < KILL_AFTER_PAGES and time.monotonic() < started + 60:
                time.sleep(0.01)
            procs[0].send_signal(signal.SIGKILL)
            killed["at"] = time.monotonic()
            killed["in_flight"] = server.in_flight["completions"]
            killed["stored"] = asyncio.run(_stored_replies(spread))

        started = time.monotonic()
        killer = threading.Thread(target=kill_midway)
        killer.start()
        # A task the killed worker had taken off the queue but not yet marked as its own is in
        # no list the broker restores from: only the compile's resend brings it back.
        spread_settings = load_settings(workspace, env={**_env(server), "COMPENDIUM_BROKER": REDIS_URL,
                                                        "COMPENDIUM_TASK_VISIBILITY_TIMEOUT": str(VISIBILITY),
                                                        "COMPENDIUM_TASK_RESEND_AFTER": str(RESEND)},
                                        overrides={"knowledge_base": spread})
        report = asyncio.run(compile_workspace(spread_settings))
        killer.join()
        assert report.status == "succeeded", report.error
        assert procs[0].wait(timeout=5) == -signal.SIGKILL
        assert killed["in_flight"], "the kill came when no call was in flight: it proves nothing"

        # The output is byte for byte the embedded default's.
        ours = exported(MYSQL_URL, spread, tmp_path / "spread")
        theirs = exported(MYSQL_URL, single, tmp_path / "single")
        assert ours.keys() == theirs.keys() and len(ours) > 10
        assert [name for name in ours if ours[name] != theirs[name]] == []

        # No call whose answer the store kept was asked again; only those the killed worker had
        # in flight (at most its concurrency) were.
        before = {key: content for t, key, content in recording.log if t < killed["at"]}  # type: ignore[operator]
        again = [key for t, key, _c in recording.log if t >= killed["at"] and key in before]  # type: ignore[operator]
        stored = killed["stored"]
        assert [key for key in again if before[key] in stored] == []  # type: ignore[operator]
        assert len(again) <= CONCURRENCY
        assert sorted({key for _t, key, _c in recording.log}) == sorted(reference_calls)
        assert len(recording.log) == len(reference_calls) + len(again)
    finally:
        stop_task_workers(procs)
        forget_tasks(app)
        server.stop()
        app.close()
