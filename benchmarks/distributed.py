"""Benchmark of one compile spread over Celery task workers (MariaDB store, Redis broker).

A generated corpus (benchmarks/corpus.py) is compiled four times, each into a knowledge base
of its own (no answer cached from another run), against the scripted OpenAI-compatible server
in a separate process at a fixed latency per call (chat and embeddings):

1. in-process, no broker: the embedded default, the model's concurrency set to one worker's;
2. one `compendium worker --tasks` process;
3. three worker processes;
4. three worker processes, one killed (SIGKILL) midway through the compile.

Every worker runs `--concurrency` tasks at once (that many model calls in flight); the compile
offers `--offered` calls at a time (the template's map and refine concurrency; default twice
what three workers run, so a worker finishing a task finds the next one queued instead of
waiting for the compile to hear of it), the same in every run, so the runs differ only in how
many workers take the tasks. Printed and
written to benchmarks/reports/distributed.md: the walls, the three-worker wall over the
single-worker wall (target ≤ 0.4), and for the kill trial whether the output is byte-identical
to run 1 and whether any call whose answer the store kept was asked again.

    python -m benchmarks.distributed [--documents 300] [--latency 0.5] [--workers 3]
        [--concurrency 4 [--concurrency 2 ...]] [--store mysql://...] [--broker redis://...] [--no-write]

Each --concurrency value is a set of runs 1-3; the kill trial runs with the first.

The store defaults to COMPENDIUM_TEST_MYSQL_URL and the broker to COMPENDIUM_BROKER.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import platform
import shutil
import signal
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from benchmarks.corpus import generate_corpus

REPORT = Path(__file__).parent / "reports" / "distributed.md"
TARGET = 0.4  # three-worker wall over single-worker wall
VISIBILITY = 10.0  # seconds before a killed worker's tasks go to another worker
PHASES = ("ingest", "map", "reduce", "plan", "refine")
KILL_AT = 0.5  # share of the compile's chat calls the server has seen when a worker is killed


def _serve(latency: float, conn: Any, chats: Any, busy: Any) -> None:
    """Child process: the scripted server, recording every chat answer (arrival, task, content);
    `chats` counts them, `busy` follows the chat calls being answered."""
    from tests.support import llm_server

    server = llm_server.LLMServer().start()
    server.set_latency(latency)
    answer = server.responder
    log: list[tuple[float, str, str]] = []
    lock = threading.Lock()

    def recording(request: Any) -> str:
        content = answer(request)
        with lock:
            log.append((time.time(), request.task_key, content))
            chats.value += 1
        return content

    server.responder = recording

    def follow() -> None:
        while True:
            busy.value = server.in_flight["completions"]
            time.sleep(0.002)

    threading.Thread(target=follow, daemon=True).start()
    conn.send(server.base_url)
    while (command := conn.recv()) != "stop":
        if command == "reset":
            server.reset()
            with lock:
                log.clear()
                chats.value = 0
            conn.send(None)
        elif command == "stats":
            with lock:
                conn.send({"calls": dict(server.calls), "most_in_flight": dict(server.most_in_flight),
                           "log": list(log), "cpu": time.process_time()})
    server.stop()


@dataclass
class Run:
    name: str
    kb: str
    workers: int
    concurrency: int  # tasks per worker (in-process: llm.max_concurrency)
    wall: float
    cpu: float  # this process: the coordinator
    report: dict[str, Any]
    server: dict[str, Any]
    load: tuple[float, float]  # 1-minute load average before and after
    kill: dict[str, Any] = field(default_factory=dict)


class Bench:
    def __init__(self, args: argparse.Namespace, root: Path):
        self.args, self.root = args, root
        self.workspace = root / "ws"
        self.kbs: list[str] = []
        ctx = mp.get_context("spawn")
        self.chats, self.busy = ctx.Value("i", 0), ctx.Value("i", 0)
        self.conn, theirs = ctx.Pipe()
        self.server = ctx.Process(target=_serve, args=(args.latency, theirs, self.chats, self.busy), daemon=True)
        self.server.start()
        self.base_url = self.conn.recv()

    def env(self) -> dict[str, str]:
        url = self.base_url
        return {
            "COMPENDIUM_LLM_BASE_URL": url, "COMPENDIUM_LLM_API_KEY": "bench", "COMPENDIUM_LLM_MODEL": "test-chat",
            "COMPENDIUM_EMBED_BASE_URL": url, "COMPENDIUM_EMBED_API_KEY": "bench", "COMPENDIUM_EMBED_MODEL": "test-embed",
            "COMPENDIUM_STORE": self.args.store,
        }

    def worker_env(self) -> dict[str, str]:
        return {**self.env(), "COMPENDIUM_BROKER": self.args.broker,
                "COMPENDIUM_TASK_VISIBILITY_TIMEOUT": str(VISIBILITY)}

    def stats(self) -> dict[str, Any]:
        self.conn.send("stats")
        return self.conn.recv()  # type: ignore[no-any-return]

    def compile(self, name: str, workers: int, concurrency: int, kill_after: int = 0) -> Run:
        from compendium.distributed.celery_app import celery_app
        from compendium.operations import compile_workspace
        from compendium.settings import DistributedSettings, load_settings
        from tests.support.task_workers import (
            start_task_workers,
            stop_task_workers,
            wait_until_answering,
        )

        kb = f"bench-{name}-{uuid.uuid4().hex[:6]}"
        self.kbs.append(kb)
        self.conn.send("reset")
        self.conn.recv()
        env = self.env()
        overrides: dict[str, Any] = {"knowledge_base": kb}
        procs: list[Any] = []
        app, logs = None, None
        if workers:
            app = celery_app(DistributedSettings(broker=self.args.broker, visibility_timeout=VISIBILITY))
            app.control.purge()
            logs = self.root / f"{name}-{concurrency}"
            logs.mkdir()
            procs = start_task_workers(workers, concurrency, self.worker_env(), logs)
            wait_until_answering(app, procs, seconds=60)
            # The compile resends a task still unanswered after 4x the visibility timeout (40 s):
            # one the killed worker took off the queue but had not yet marked as its own.
            env |= {"COMPENDIUM_BROKER": self.args.broker, "COMPENDIUM_TASK_VISIBILITY_TIMEOUT": str(VISIBILITY)}
        else:  # the embedded default, as many calls in flight as one worker keeps
            overrides["llm.max_concurrency"] = concurrency
        kill: dict[str, Any] = {}
        killer = threading.Thread(target=self._kill, args=(procs, kill_after, kb, kill, workers * concurrency), daemon=True)
        try:
            settings = load_settings(self.workspace, env=env, overrides=overrides)
            load0 = os.getloadavg()[0]
            if kill_after:
                killer.start()
            cpu0, wall0 = time.process_time(), time.perf_counter()
            report = asyncio.run(compile_workspace(settings))
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            if kill_after:
                killer.join(timeout=60)
            load1 = os.getloadavg()[0]
            if report.status != "succeeded":
                raise SystemExit(f"{name}: the compile ended {report.status}: {report.error}\n{_worker_logs(procs, logs)}")
        finally:
            stop_task_workers(procs)
            if app is not None:
                app.close()
        return Run(name, kb, workers, concurrency, wall, cpu, report.as_dict(settings.llm), self.stats(), (load0, load1), kill)

    def _kill(self, procs: list[Any], after: int, kb: str, out: dict[str, Any], full: int) -> None:
        # Midway, and while every worker has its calls in flight: the killed one loses some.
        deadline = time.monotonic() + 600
        while (self.chats.value < after or self.busy.value < full) and time.monotonic() < deadline:
            time.sleep(0.002)
        procs[0].send_signal(signal.SIGKILL)
        out["at"] = time.time()
        out["calls_before"], out["in_flight"] = self.chats.value, self.busy.value
        out["stored"] = asyncio.run(_stored_replies(self.args.store, kb))

    def close(self) -> None:
        from tests.support.outputs import drop_knowledge_bases

        self.conn.send("stop")
        self.server.join(timeout=10)
        asyncio.run(drop_knowledge_bases(self.args.store, self.kbs))


def _worker_logs(procs: list[Any], logs: Path | None) -> str:
    """Each live worker's threads (Celery logs them on SIGUSR1) and the end of its log."""
    if not procs or logs is None:
        return ""
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGUSR1)
    time.sleep(1.0)
    parts = []
    for n, proc in enumerate(procs):
        text = (logs / f"worker{n}.log").read_text(encoding="utf-8", errors="replace")
        parts.append(f"--- worker {n} (exit code {proc.poll()}), last lines of its log:\n{text[-6000:]}")
    return "\n".join(parts)


async def _stored_replies(url: str, kb: str) -> set[str]:
    from compendium.storage.factory import open_store
    from compendium.storage.records import CacheEntry

    store = await open_store(url, kb)
    try:
        return {e.value["content"] async for e in store.scan(CacheEntry, {"namespace": "llm"})}  # type: ignore[attr-defined,index]
    finally:
        await store.close()


def prepare(workspace: Path, documents: int) -> None:
    from compendium.workspace import init_workspace

    init_workspace(workspace)
    generate_corpus(workspace / "documents" / "synthetic", documents)


def offer(workspace: Path, calls: int) -> None:
    """The wiki template with map and refine concurrency `calls` (REDUCE's follow map's). Not in
    any fingerprint: every run's output is comparable."""
    from compendium.templates.registry import show_template

    wiki = yaml.safe_load(show_template("wiki"))
    for phase in ("map", "refine"):
        wiki.setdefault(phase, {})["concurrency"] = calls
    (workspace / "templates" / "wiki.yaml").write_text(yaml.safe_dump(wiki, sort_keys=False), encoding="utf-8")


def kill_findings(trial: Run, reference: Run, root: Path, store: str) -> dict[str, Any]:
    """Byte-identical output, and the calls asked again after the kill."""
    from tests.support.outputs import exported

    ours = exported(store, trial.kb, root / "out-kill")
    theirs = exported(store, reference.kb, root / "out-reference")
    differ = sorted(name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name))
    log, at, stored = trial.server["log"], trial.kill["at"], trial.kill["stored"]
    before = {key: content for t, key, content in log if t < at}
    again = [key for t, key, _c in log if t >= at and key in before]
    return {
        "files": len(ours), "differ": differ, "asked_again": len(again),
        "stored_asked_again": sum(1 for key in again if before[key] in stored),
        "calls_before_kill": trial.kill["calls_before"], "in_flight": trial.kill["in_flight"],
    }


def render(args: argparse.Namespace, sets: list[list[Run]], findings: dict[str, Any]) -> str:
    flags = " ".join(f"--concurrency {c}" for c in args.concurrency)
    lines = [
        "# Distributed compile benchmark",
        "",
        f"Generated by `python -m benchmarks.distributed --documents {args.documents} --latency {args.latency} "
        f"--workers {args.workers} {flags}` on {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.machine()}, **{mp.cpu_count()} cores shared with other "
        "engineers' test suites** (load averages below). Store: MariaDB (one database, a knowledge base per "
        "run); broker and results: Redis on 127.0.0.1; scripted OpenAI-compatible server in a separate "
        f"process, {args.latency * 1000:.0f} ms per call (chat and embeddings). Workers, coordinator, server, "
        "MariaDB and Redis all share those 2 cores: the gain comes from overlapping model latency across "
        "workers, not from more CPU.",
        "",
        "| Per-worker concurrency | One worker (s) | Three workers (s) | Three over one | Target ≤ 0.4 |",
        "|---|---|---|---|---|",
    ]
    for runs in sets:
        by = {r.name: r for r in runs}
        ratio = by["three-workers"].wall / by["one-worker"].wall
        lines.append(f"| {runs[0].concurrency} | {by['one-worker'].wall:.1f} | {by['three-workers'].wall:.1f} | "
                     f"{ratio:.2f}× | {'met' if ratio <= TARGET else 'NOT met'} |")
    lines.append("")
    for runs in sets:
        lines += _section(args, runs)
    trial = next(r for runs in sets for r in runs if r.name == "kill-trial")
    lines += [
        "## One worker killed midway",
        "",
        f"Three workers of concurrency {trial.concurrency}; worker 0 got SIGKILL after "
        f"{findings['calls_before_kill']} of the compile's chat calls, {findings['in_flight']} of them in "
        f"flight at the server then (visibility timeout {VISIBILITY:.0f} s: its tasks went to the other "
        f"workers after that). The compile {trial.report['status']} in {trial.wall:.1f} s.",
        "",
        f"- Output (vault, GraphML, JSON without write times; {findings['files']} files) byte-identical to "
        f"the in-process run: **{'yes' if not findings['differ'] else 'NO: ' + ', '.join(findings['differ'][:5])}**.",
        f"- Calls asked again after the kill: {findings['asked_again']} (those the killed worker had in "
        f"flight, at most {trial.concurrency}); of them, calls whose answer the store had kept: "
        f"**{findings['stored_asked_again']}**.",
        "",
    ]
    return "\n".join(lines)


def _section(args: argparse.Namespace, runs: list[Run]) -> list[str]:
    by = {r.name: r for r in runs}
    single, spread, alone = by["one-worker"], by["three-workers"], by["in-process"]
    c = runs[0].concurrency
    in_flight = args.workers * c
    offered = args.offered or 2 * in_flight
    lines = [
        f"## {c} calls in flight per worker",
        "",
        f"Fair comparison: every worker runs {c} tasks at once (`compendium worker --tasks --concurrency {c}`: "
        f"{c} threads, one event loop, at most {c} model calls in flight); the in-process run allows {c} "
        f"calls in flight (llm.max_concurrency). The compile offers up to {offered} calls at a time "
        f"(template map/refine concurrency {offered}; the workers run at most {in_flight} of them, the rest "
        "wait queued in Redis) in every run. Worker start-up (before the compile) is not in the walls.",
        "",
        "| Run | Workers | Wall (s) | Coordinator CPU (s) | Chat calls | Most calls in flight at the server | Load before → after |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r.name} | {r.workers or '— (in-process)'} | {r.wall:.1f} | {r.cpu:.1f} | "
            f"{r.server['calls'].get('chat', 0)} | {r.server['most_in_flight'].get('completions', 0)} | "
            f"{r.load[0]:.1f} → {r.load[1]:.1f} |"
        )
    lines += ["", "Wall seconds by phase (chat calls in brackets):", "",
              "| Run | " + " | ".join(PHASES) + " |", "|---|" + "---|" * len(PHASES)]
    for r in runs:
        cells = [f"{r.report['phases'][p]['seconds']:.1f} ({r.report['phases'][p].get('llm_calls', 0)})" for p in PHASES]
        lines.append(f"| {r.name} | " + " | ".join(cells) + " |")
    ratio = spread.wall / single.wall
    bound = single.report["totals"]["llm_calls"] * args.latency
    return [
        *lines,
        "",
        f"**Three workers over one worker: {spread.wall:.1f} s / {single.wall:.1f} s = {ratio:.2f}×** "
        f"(target ≤ {TARGET}: {'met' if ratio <= TARGET else 'NOT met'}); over the in-process run: "
        f"{spread.wall / alone.wall:.2f}×. K·L = {bound:.0f} s of model latency in all (K = "
        f"{single.report['totals']['llm_calls']} chat calls), so K·L/C is {bound / c:.1f} s "
        f"for one worker and {bound / in_flight:.1f} s for {args.workers}.",
        "",
        "What does not divide by workers: ingest (no calls) and PLAN (its topic names are asked together, "
        "one round of calls), "
        f"{_fixed(single):.1f} s with one worker and {_fixed(spread):.1f} s with {args.workers}; the "
        "compile's start before ingest; each phase's embedding round trips, its store writes (REDUCE's "
        "one transaction of the whole KB) and its last, partly filled round of calls. "
        f"Counting ingest and PLAN as fixed, the rest went {_rest(single):.1f} s → {_rest(spread):.1f} s "
        f"({_rest(spread) / _rest(single):.2f}×; {args.workers} workers alone would give "
        f"{1 / args.workers:.2f}×).",
        "",
    ]


def _fixed(run_: Run) -> float:
    return sum(run_.report["phases"][p]["seconds"] for p in ("ingest", "plan"))


def _rest(run_: Run) -> float:
    return sum(run_.report["phases"][p]["seconds"] for p in ("map", "reduce", "refine"))


NOTES = """
## How the work is spread, and what limits the ratio

- A task is one engine call: a MAP batch's extraction, a REDUCE block of pair judgments or one
  entity's description, a PLAN question, a REFINE page's writing, an embedding batch. The
  phases themselves (packing batches, splitting replies, choosing evidence, cleaning pages,
  every store write but the response cache's) run in the compiling process, unchanged: there
  is one compile path, and the output cannot depend on which worker answered.
- A worker answers from the store's response cache when the answer is kept (the cache entry
  is written before the task is acknowledged), so a task delivered again costs no call; only
  the calls the killed worker had in flight are asked again.
- The ratio is bounded by what one worker more does not shorten: the compile's start before
  ingest and ingest itself (no calls), each phase's last, partly filled round of calls,
  REDUCE's embedding round trip before its first pair judgment, PLAN's one round of topic
  names, and REFINE's last page's chat call followed by its embedding. The more calls in flight
  one worker has, the larger that share: with fewer calls per worker the ratio comes closer to
  1/3.
- What this round removed from that fixed part (three workers of 4 at 500 ms, from a timeline
  of the calls at the server and of the coordinator's event loop): (1) every worker's write of
  an answer to the response cache bumped a per-kind generation counter row that REDUCE's open
  transaction (relations, claims and its ledger, all cache entries) held locked, so the
  workers stopped for that transaction's 1.2-1.7 s on MariaDB: the response cache no longer
  counts a generation (its vectors are read by id, never searched); (2) the compile's lease
  on MariaDB was taken, then confirmed after a 0.5 s pause for concurrent takers: it is now
  taken in a serialized transaction (a named lock, GET_LOCK); (3) the descriptions of the
  clusters no pair judgment can change are asked while the judgments are (one round trip);
  (4) the pages still waiting for embeddings when the writers are done go out beside the
  request in flight. The three-worker wall went 25.6 -> 23.2 s, the one-worker wall
  62.0 -> 59.8 s.
- Everything runs on 2 shared cores: three workers, the coordinator, the scripted server, MariaDB
  and Redis. On separate machines the workers' CPU (prompt rendering, reply validation, their
  store writes) would not compete with the coordinator's.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--concurrency", type=int, action="append",
                        help="tasks (model calls) one worker runs at once; repeat for several sets (default 4)")
    parser.add_argument("--offered", type=int, default=0,
                        help="calls the compile offers at a time (default 2 x workers x concurrency)")
    parser.add_argument("--store", default=os.environ.get("COMPENDIUM_TEST_MYSQL_URL", ""))
    parser.add_argument("--broker", default=os.environ.get("COMPENDIUM_BROKER", ""))
    parser.add_argument("--no-write", action="store_true", help="print only; leave the report file alone")
    args = parser.parse_args()
    args.concurrency = args.concurrency or [4]
    if not args.store.startswith(("mysql://", "tidb://")) or not args.broker:
        raise SystemExit("give --store mysql://... (or COMPENDIUM_TEST_MYSQL_URL) and --broker redis://... "
                         "(or COMPENDIUM_BROKER)")
    root = Path(tempfile.mkdtemp(prefix="compendium-dist-"))
    bench = Bench(args, root)
    sets: list[list[Run]] = []
    try:
        prepare(bench.workspace, args.documents)
        for c in args.concurrency:
            offer(bench.workspace, args.offered or 2 * args.workers * c)
            runs = []
            for name, workers in (("in-process", 0), ("one-worker", 1), ("three-workers", args.workers)):
                runs.append(bench.compile(name, workers, c))
                print(f"{c} per worker, {name}: wall {runs[-1].wall:.1f} s, load {os.getloadavg()[0]:.1f}", flush=True)
            if not sets:
                calls = runs[0].server["calls"].get("chat", 0)
                runs.append(bench.compile("kill-trial", args.workers, c, kill_after=max(1, int(calls * KILL_AT))))
                print(f"kill-trial: wall {runs[-1].wall:.1f} s", flush=True)
                findings = kill_findings(runs[-1], runs[0], root, args.store)
            sets.append(runs)
    finally:
        bench.close()
        shutil.rmtree(root, ignore_errors=True)
    text = render(args, sets, findings) + NOTES
    print(text)
    if not args.no_write:
        REPORT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
