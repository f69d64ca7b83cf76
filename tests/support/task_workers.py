"""`compendium worker --tasks` processes for tests and benchmarks: start, wait for, stop."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def start_task_workers(count: int, concurrency: int, env: Mapping[str, str], logs: Path) -> list[subprocess.Popen[bytes]]:
    """`count` worker processes with the given environment; each one's output in logs/workerN.log."""
    procs = []
    for n in range(count):
        with (logs / f"worker{n}.log").open("wb") as out:  # the child keeps its own copy
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "compendium.cli", "worker", "--tasks", "--concurrency", str(concurrency),
                 "--name", f"w{n}-{uuid.uuid4().hex[:6]}@localhost"],
                env={**os.environ, **env}, cwd=logs, stdout=out, stderr=subprocess.STDOUT,
            ))
    return procs


def wait_until_answering(app: Any, procs: list[subprocess.Popen[bytes]], seconds: float = 30.0) -> None:
    """Until every worker answers a ping on the broker (a worker that exits is an error)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            raise RuntimeError("a task worker exited at start (see its log)")
        if len(app.control.ping(timeout=0.5) or []) >= len(procs):
            return
    raise RuntimeError(f"the task workers did not all answer a ping within {seconds:.0f} s")


def forget_tasks(app: Any) -> None:
    """Drop every task queued, or taken and not acknowledged (a killed worker's), so that no
    worker of a later test runs one against its own server."""
    app.control.purge()
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        channel.client.delete(channel.unacked_key, channel.unacked_index_key)


def stop_task_workers(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()
