"""A task lost with its worker (SIGKILL while the task runs, before it is acknowledged) is still
answered: sent again by the compile, or given back by the broker; no kept answer is paid twice."""

from __future__ import annotations

import asyncio
import shutil
import signal
import threading
import uuid
from pathlib import Path

import pytest
import yaml

from compendium.distributed.celery_app import QUEUE
from compendium.operations import compile_workspace
from compendium.settings import DistributedSettings, load_settings
from compendium.templates.registry import show_template
from compendium.workspace import init_workspace
from tests.support.llm_server import ChatRequest, LLMServer
from tests.support.outputs import drop_knowledge_bases
from tests.support.task_workers import (
    forget_tasks,
    start_task_workers,
    stop_task_workers,
    wait_until_answering,
)
from tests.support.workspace_fixtures import SAMPLE_CORPUS

from .test_across_workers import MYSQL_URL, REDIS_URL, _env, _stored_replies

pytestmark = [
    pytest.mark.skipif(not MYSQL_URL, reason="COMPENDIUM_TEST_MYSQL_URL is not set: no MariaDB/MySQL server"),
    pytest.mark.skipif(not REDIS_URL, reason="COMPENDIUM_TEST_REDIS_URL is not set: no Redis server for the broker"),
]
pytest.importorskip("celery", reason="celery is not installed: pip install -e '.[distributed]'")

CONCURRENCY = 2  # tasks each worker runs at once, and calls the compile offers at a time
HOLD_SECONDS = 60.0  # the held call waits at most this long for the kill (then the test fails)
# Which of the two recoveries is the only one that can answer within the test: the other waits
# two minutes.
PATHS = {
    "the compile sends it again": {"visibility": 120.0, "resend": 3.0},
    "the broker gives it back": {"visibility": 2.0, "resend": 120.0},
}


class Holding:
    """Records every chat request's task key; holds the first REFINE page request (the worker
    that sent it is running that task) until the test lets it go."""

    def __init__(self, responder):  # type: ignore[no-untyped-def]
        self.responder, self.keys = responder, []  # on arrival
        self.answers: dict[str, str] = {}
        self.lock = threading.Lock()
        self.held_key: str | None = None
        self.held, self.release = threading.Event(), threading.Event()

    def __call__(self, request: ChatRequest) -> str:
        with self.lock:
            self.keys.append(request.task_key)
            hold = request.schema_name is None and self.held_key is None
            if hold:
                self.held_key = request.task_key
        if hold:
            self.held.set()
            self.release.wait(HOLD_SECONDS)
        content = self.responder(request)
        with self.lock:
            self.answers[request.task_key] = content
        return content


@pytest.fixture
def knowledge_base():  # type: ignore[no-untyped-def]
    name = f"lost-{uuid.uuid4().hex[:8]}"
    yield name
    asyncio.run(drop_knowledge_bases(MYSQL_URL, [name]))


@pytest.mark.parametrize("path", PATHS)
def test_a_task_lost_with_its_worker_is_answered_and_no_kept_call_is_asked_again(
    path: str, tmp_path: Path, knowledge_base: str
):
    from compendium.distributed.celery_app import celery_app

    timeouts = PATHS[path]
    workspace = init_workspace(tmp_path / "ws")
    shutil.copytree(SAMPLE_CORPUS, workspace / "documents" / "corpus")
    wiki = yaml.safe_load(show_template("wiki"))
    for phase in ("map", "refine"):
        wiki.setdefault(phase, {})["concurrency"] = CONCURRENCY
    (workspace / "templates" / "wiki.yaml").write_text(yaml.safe_dump(wiki, sort_keys=False), encoding="utf-8")
    server = LLMServer().start()
    server.set_latency(0.05)
    recording = server.responder = Holding(server.responder)
    distributed = {"COMPENDIUM_BROKER": REDIS_URL,
                   "COMPENDIUM_TASK_VISIBILITY_TIMEOUT": str(timeouts["visibility"]),
                   "COMPENDIUM_TASK_RESEND_AFTER": str(timeouts["resend"])}
    env = {**_env(server), **distributed}
    app = celery_app(DistributedSettings(broker=REDIS_URL, visibility_timeout=timeouts["visibility"]))
    forget_tasks(app)  # tasks a previous run left behind
    first = start_task_workers(1, CONCURRENCY, env, tmp_path)
    logs = tmp_path / "second"
    logs.mkdir()
    procs = list(first)
    seen: dict[str, object] = {}
    standby: list[str] = []  # the worker that answers instead: up before the compile, taking nothing

    def kill_while_held() -> None:
        if not recording.held.wait(HOLD_SECONDS):
            return
        first[0].send_signal(signal.SIGKILL)
        first[0].wait(timeout=10)
        seen["stored"] = asyncio.run(_stored_replies(knowledge_base))
        seen["asked"] = len(recording.keys)
        recording.release.set()  # its answer goes to a closed connection
        # The standby takes tasks from now on. Started here, it answered only if it booted within
        # the compile's sends (3 s each) on a loaded machine; it is up already, whatever the load.
        assert app.control.add_consumer(QUEUE, destination=standby, reply=True, timeout=HOLD_SECONDS)

    killer = threading.Thread(target=kill_while_held, daemon=True)
    try:
        wait_until_answering(app, first)
        names = _answering(app)
        procs.extend(start_task_workers(1, CONCURRENCY, env, logs))
        wait_until_answering(app, procs)
        standby.extend(_answering(app) - names)
        assert len(standby) == 1 and app.control.cancel_consumer(QUEUE, destination=standby, reply=True,
                                                                 timeout=HOLD_SECONDS)
        killer.start()
        settings = load_settings(workspace, env=env, overrides={"knowledge_base": knowledge_base})
        report = asyncio.run(compile_workspace(settings))
        killer.join(timeout=HOLD_SECONDS)
        assert recording.held_key is not None and "stored" in seen, "no REFINE page was asked: nothing was held"
        assert first[0].returncode == -signal.SIGKILL
        assert report.status == "succeeded", report.error

        # The held task was lost with its worker and answered by the second one.
        before, after = recording.keys[: seen["asked"]], recording.keys[seen["asked"] :]  # type: ignore[misc]
        assert recording.held_key in after
        # Asked again: only what the killed worker had in flight; no call whose answer was kept.
        again = [key for key in after if key in before]
        assert len(again) <= CONCURRENCY
        assert len(after) == len(set(after))  # and nothing twice since
        kept = seen["stored"]
        assert not [key for key in again if recording.answers[key] in kept]  # type: ignore[operator]
    finally:
        recording.release.set()
        stop_task_workers(procs)
        forget_tasks(app)
        server.stop()
        app.close()


def _answering(app) -> set[str]:  # type: ignore[no-untyped-def]
    """The names of the workers that answer a ping now."""
    return {name for reply in app.control.ping(timeout=1.0) or [] for name in reply}


def test_a_task_a_dead_worker_took_off_the_queue_is_sent_again_without_waiting_for_its_time(tmp_path: Path):
    """Taken off the queue and not yet recorded as taken when its worker died, a task is in no
    list the broker gives back from: the compile finds it missing and sends it again, long
    before its resend time or the visibility timeout."""
    from compendium.distributed.base import CompileIdentity
    from compendium.distributed.celery_executor import CeleryExecutor
    from compendium.engines.offline import OfflineEngine
    from compendium.engines.offline_embedder import OfflineEmbedder
    from compendium.engines.tasks import ChunkInput, ExtractionBatch
    from compendium.engines.usage import UsageMeter
    from compendium.templates.registry import load_template

    patience = 120.0
    settings = DistributedSettings(broker=REDIS_URL, visibility_timeout=patience, resend_after=patience)
    identity = CompileIdentity("default", "offline", OfflineEngine(usage=UsageMeter()).model, OfflineEmbedder().model)
    executor = CeleryExecutor(settings, identity)
    forget_tasks(executor.app)
    batch = ExtractionBatch([ChunkInput("c1", "The Checkpointer flushes dirty pages into the Write-Ahead Log (WAL).",
                                        ["Storage"], "Lumen DB guide")])
    env = {"COMPENDIUM_BROKER": REDIS_URL, "COMPENDIUM_STORE": f"sqlite:///{tmp_path / 'store.db'}",
           "COMPENDIUM_TASK_VISIBILITY_TIMEOUT": str(patience)}

    async def lose_then_answer() -> object:
        asked = asyncio.create_task(executor.run("extract", batch, load_template("wiki")))
        client = executor.app.backend.client
        taken = None
        for _ in range(1000):  # the task reaches the queue; a worker takes it and dies with it
            if taken := await asyncio.to_thread(client.rpop, QUEUE):
                break
            await asyncio.sleep(0.01)
        assert taken, "the task never reached the queue"
        procs = start_task_workers(1, 1, env, tmp_path)
        try:
            return await asyncio.wait_for(asked, patience / 2)
        finally:
            stop_task_workers(procs)
            forget_tasks(executor.app)
            await executor.close()

    outcome = asyncio.run(lose_then_answer())
    assert outcome.reply.entities  # type: ignore[attr-defined]


def test_a_task_no_worker_answers_fails_the_call_naming_it_after_three_sends():
    from compendium.distributed.base import CompileIdentity
    from compendium.distributed.celery_executor import CeleryExecutor
    from compendium.engines.offline import OfflineEngine
    from compendium.engines.offline_embedder import OfflineEmbedder
    from compendium.engines.tasks import ChunkInput, ExtractionBatch
    from compendium.engines.usage import UsageMeter
    from compendium.errors import EngineUnavailable
    from compendium.templates.registry import load_template

    settings = DistributedSettings(broker=REDIS_URL, visibility_timeout=60.0, resend_after=0.5)
    identity = CompileIdentity("default", "offline", OfflineEngine(usage=UsageMeter()).model, OfflineEmbedder().model)
    executor = CeleryExecutor(settings, identity)
    forget_tasks(executor.app)
    batch = ExtractionBatch([ChunkInput("c1", "The Checkpointer writes a checkpoint.", [], "Lumen DB guide")])

    async def ask() -> None:
        try:
            await executor.run("extract", batch, load_template("wiki"))
        finally:
            forget_tasks(executor.app)
            await executor.close()

    with pytest.raises(EngineUnavailable) as raised:
        asyncio.run(ask())  # no worker runs: the three sends wait in the queue
    message = str(raised.value)
    assert "MAP extraction of 1 chunk(s) of 'Lumen DB guide'" in message and "sent 3 times" in message
    assert "0 worker(s) answer a ping" in message
