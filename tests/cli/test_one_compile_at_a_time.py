"""One compile per knowledge base and template at a time, for the CLI too: a second
`compendium compile` exits at once naming the one running, or waits with --wait; a compile
whose process was killed is taken over by the next one."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compendium.compiler.exclusive import LOCAL_TENANT
from compendium.compiler.leases import claim, worker_name
from compendium.errors import Busy
from compendium.storage.factory import open_store
from compendium.storage.records import Job
from compendium.tenancy import system_store
from compendium.workspace import init_workspace
from tests.support.llm_server import LLMServer
from tests.support.workspace_fixtures import REPO, SAMPLE_CORPUS

DEADLINE = 60.0


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = init_workspace(tmp_path / "ws")
    shutil.copytree(SAMPLE_CORPUS / "storage", ws / "documents" / "storage")
    return ws


def compile_process(workspace: Path, server: LLMServer, *extra: str, report: Path | None = None) -> subprocess.Popen:
    env = {
        **os.environ,
        "COMPENDIUM_LLM_BASE_URL": server.base_url,
        "COMPENDIUM_LLM_API_KEY": "test-key",
        "COMPENDIUM_LLM_MODEL": "test-chat",
        # The held call stalls while other processes start: on a loaded machine past the hedge's
        # delay, and its hedge is a request the server counts and the report cannot (48 for 49).
        "COMPENDIUM_LLM_HEDGE": "false",
    }
    env.pop("COMPENDIUM_STORE", None)
    argv = [sys.executable, "-m", "compendium.cli", "-w", str(workspace), "compile", "--plain", *extra]
    if report is not None:
        argv += ["--report", str(report)]
    return subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_requests(server: LLMServer, proc: subprocess.Popen, n: int) -> None:
    deadline = time.monotonic() + DEADLINE
    while len(server.requests) < n:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the compile never reached the LLM"
        time.sleep(0.01)


def jobs_of(workspace: Path) -> list[Job]:
    async def scan() -> list[Job]:
        store = await open_store(f"sqlite:///{workspace / '.compendium' / 'store.db'}", "default")
        try:
            return [j async for j in system_store(store).scan(Job)]  # type: ignore[misc]
        finally:
            await store.close()

    return asyncio.run(scan())


class HeldResponder:
    """The scripted server's answers, held until `release()`: a compile that reached the LLM
    stays running, however slow the machine, until the test lets it go."""

    def __init__(self, inner: Callable[[Any], str]) -> None:
        self.inner, self.gate = inner, threading.Event()

    def __call__(self, request: Any) -> str:
        self.gate.wait()
        return self.inner(request)

    def release(self) -> None:
        self.gate.set()


def finish(*procs: subprocess.Popen | None) -> None:
    """Kill what still runs and close every pipe (a test that failed midway leaks nothing)."""
    for proc in procs:
        if proc is None:
            continue
        if proc.poll() is None:
            proc.kill()
        if any(pipe is not None and not pipe.closed for pipe in (proc.stdin, proc.stdout, proc.stderr)):
            proc.communicate()


def test_a_second_compile_exits_at_once_and_a_waiting_one_costs_nothing(workspace, llm_server, tmp_path):
    held = HeldResponder(llm_server.responder)
    llm_server.responder = held  # the first compile runs until released, on any machine
    first = compile_process(workspace, llm_server, report=tmp_path / "first.json")
    second = third = None
    try:
        wait_for_requests(llm_server, first, 1)
        second = compile_process(workspace, llm_server)
        _, err = second.communicate(timeout=DEADLINE)
        assert second.returncode == Busy.exit_code, err
        assert f"pid {first.pid} on host {socket.gethostname()}" in err and "--wait" in err
        assert first.poll() is None  # refused while the first one ran: it never waited for it
        status = subprocess.run(
            [sys.executable, "-m", "compendium.cli", "-w", str(workspace), "status", "--json"],
            cwd=REPO, capture_output=True, text=True, check=True, env={**os.environ, "COMPENDIUM_STORE": ""},
        )
        (running,) = json.loads(status.stdout)["running_compiles"]
        assert running["pid"] == first.pid and running["template"] == "wiki"

        third = compile_process(workspace, llm_server, "--wait", report=tmp_path / "third.json")
        assert f"waiting for the compile held by pid {first.pid}" in third.stderr.readline()  # type: ignore[union-attr]
        held.release()
        _, err = first.communicate(timeout=DEADLINE)
        assert first.returncode == 0, err
        _, err = third.communicate(timeout=DEADLINE)
        assert third.returncode == 0, err
    finally:
        held.release()
        finish(first, second, third)
    report = json.loads((tmp_path / "first.json").read_text())
    again = json.loads((tmp_path / "third.json").read_text())
    # The LLM calls of one compile: the waiting one found everything done.
    assert report["totals"]["llm_calls"] == llm_server.calls["chat"] > 0
    assert again["totals"]["llm_calls"] == 0 and again["status"] == "succeeded"
    jobs = sorted(jobs_of(workspace), key=lambda j: j.id)
    assert [(j.status, j.trigger, j.attempts) for j in jobs] == [("succeeded", "cli", 1)] * 2


def test_a_killed_compile_is_taken_over_at_once_by_the_next_one(workspace, llm_server, tmp_path):
    held = HeldResponder(llm_server.responder)
    llm_server.responder = held  # killed while it waits on the LLM, whatever the machine's load
    killed = compile_process(workspace, llm_server)
    try:
        wait_for_requests(llm_server, killed, 1)
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=DEADLINE)
        held.release()
    assert killed.returncode == -signal.SIGKILL
    (before,) = jobs_of(workspace)
    assert before.status == "running" and before.lease_owner  # the dead process still holds it

    proc = compile_process(workspace, llm_server, report=tmp_path / "report.json")
    _, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, err
    assert "resuming" in err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["status"] == "succeeded"
    (job,) = jobs_of(workspace)
    assert job.id == before.id and job.status == "succeeded" and job.attempts == 2
    # Taken over at once, its holder known dead: the dead one's lease still ran when it was.
    assert report["started_at"] < before.lease_expires_at


MYSQL_URL = os.environ.get("COMPENDIUM_TEST_MYSQL_URL", "").strip()


@pytest.fixture(params=["sqlite", "mysql"])
async def lease_store(request, tmp_path: Path):
    """A store whose system scope holds the jobs; the lease's knowledge base is unique to the test."""
    if request.param == "mysql" and not MYSQL_URL:
        pytest.skip("COMPENDIUM_TEST_MYSQL_URL is not set: no MariaDB/MySQL server")
    url = MYSQL_URL if request.param == "mysql" else f"sqlite:///{tmp_path / 'store.db'}"
    store = await open_store(url, "default")
    kb = f"lease-{uuid.uuid4().hex[:8]}"
    try:
        yield store, kb
    finally:
        await system_store(store).delete(Job, {"knowledge_base": kb})
        await store.close()


async def _claim(lease_store, worker: str, now: float | None = None):
    store, kb = lease_store
    return await claim(store, tenant=LOCAL_TENANT, knowledge_base=kb, template="wiki",
                       worker=worker, lease_seconds=30, now=now)


async def test_a_lease_held_elsewhere_is_taken_over_only_when_it_expires(lease_store):
    store = lease_store
    now = time.time()
    other_host = "build-17.example:4242:abc123"
    job, holder = await _claim(store, other_host, now)
    assert job is not None and holder is None
    mine = worker_name()
    job, holder = await _claim(store, mine, now + 10)
    assert job is None and holder is not None and holder.lease_owner == other_host
    job, holder = await _claim(store, mine, now + 31)  # no heartbeat for a whole lease
    assert job is not None and job.lease_owner == mine and job.attempts == 2
    # This process is alive: nobody else on this host takes its lease, expired or not.
    job, holder = await _claim(store, "x:1:y", now + 62)
    assert job is None and holder is not None and holder.lease_owner == mine


async def test_a_lease_of_a_process_that_ended_on_this_host_is_free_at_once(lease_store):
    ended = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await ended.wait()  # ended and reaped: its pid names no process now
    gone = f"{socket.gethostname()}:{ended.pid}:abc123"
    job, _ = await _claim(lease_store, gone)
    assert job is not None
    job, holder = await _claim(lease_store, worker_name())
    assert job is not None and holder is None and job.attempts == 2


RACER = """
import asyncio, sys
from compendium.compiler.exclusive import acquire
from compendium.compiler.leases import worker_name
from compendium.errors import Busy
from compendium.storage.factory import open_store

async def main(url, kb):
    store = await open_store(url, "default")
    try:
        print("ready", flush=True)
        sys.stdin.readline()  # all go at once, when every racer is connected
        try:
            await acquire(store, knowledge_base=kb, template="wiki", worker=worker_name(), wait=False,
                          lease_seconds=30, poll_seconds=1)
            print("held", flush=True)
        except Busy:
            print("busy", flush=True)
        sys.stdin.readline()  # alive until every racer has claimed: a holder that ended frees its lease
    finally:
        await store.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


@pytest.mark.skipif(not MYSQL_URL, reason="COMPENDIUM_TEST_MYSQL_URL is not set: no MariaDB/MySQL server")
def test_compiles_that_claim_at_the_same_instant_on_mariadb_get_one_lease():
    kb = f"race-{uuid.uuid4().hex[:8]}"
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, MYSQL_URL, kb], cwd=REPO, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    for proc in racers:  # every one connected
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready", proc.communicate()[1]
    for proc in racers:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    # Each racer's claim, read while all of them are alive: on a loaded machine the first holder
    # could otherwise have ended (its lease then rightly free) before the last racer claimed.
    outcomes = [proc.stdout.readline().strip() for proc in racers]  # type: ignore[union-attr]
    for proc in racers:
        _out, err = proc.communicate("end\n", timeout=DEADLINE)
        assert proc.returncode == 0, err

    async def cleanup() -> list[Job]:
        store = await open_store(MYSQL_URL, "default")
        try:
            jobs = [j async for j in system_store(store).scan(Job, {"knowledge_base": kb})]  # type: ignore[misc]
            await system_store(store).delete(Job, {"knowledge_base": kb})
            return jobs
        finally:
            await store.close()

    jobs = asyncio.run(cleanup())
    assert sorted(outcomes) == ["busy", "busy", "busy", "held"]
    assert len(jobs) == 1 and jobs[0].status == "running"


async def test_a_compile_whose_lease_was_taken_stops_and_says_so(tmp_path, llm_server):
    from compendium.compiler.exclusive import compile_exclusively
    from compendium.compiler.leases import system_of
    from compendium.engines.factory import build_embedder, build_engine
    from compendium.engines.usage import UsageMeter
    from compendium.pipeline.context import CompileContext
    from compendium.storage.response_cache import StoreResponseCache
    from compendium.templates.registry import load_template
    from tests.support.llm_fixtures import settings_for

    docs = tmp_path / "documents"
    shutil.copytree(SAMPLE_CORPUS / "storage", docs)
    store = await open_store(f"sqlite:///{tmp_path / 'store.db'}", "default")
    template = load_template("wiki")
    usage = UsageMeter()
    settings = settings_for(llm_server, timeout=5.0)
    engine = build_engine(settings, template, usage=usage, cache=StoreResponseCache(store))
    embedder = build_embedder(settings, template, usage=usage, cache=StoreResponseCache(store))
    ctx = CompileContext(store=store, engine=engine, embedder=embedder, template=template, documents_dir=docs)
    llm_server.set_latency(0.1)
    try:
        running = asyncio.create_task(compile_exclusively(store, ctx, knowledge_base="default", lease_seconds=0.6))
        for _ in range(int(DEADLINE / 0.01)):  # until the compile is asking the LLM
            if llm_server.requests:
                break
            await asyncio.sleep(0.01)
        (job,) = [j async for j in system_of(store).scan(Job)]
        job.lease_owner = "elsewhere.example:99:thief"  # as if another host took the lease over
        await system_of(store).upsert([job])
        report = await asyncio.wait_for(running, DEADLINE)
    finally:
        await engine.close()
        await embedder.close()
    try:
        assert report.status == "cancelled" and "took over" in report.error
        assert "refine" not in report.phases  # stopped, not run to the end beside the new holder
        (job,) = [j async for j in system_of(store).scan(Job)]
        assert job.lease_owner == "elsewhere.example:99:thief" and job.status == "running"  # left to it
    finally:
        await store.close()
