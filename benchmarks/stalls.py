"""What stalls cost a compile: the sample corpus compiled through the scripted server clean, then
with a share of the calls (20% by default) held for 30 s without an answer, at the client's
default timeout; wall time of each, their ratio, and the requests the server saw (a hedge is one
request more: in the clean run, every request past the calls is a needless hedge).

    python -m benchmarks.stalls [--rate 0.2] [--stall 30] [--timeout 120] [--floor S] [--repeat N]

--floor sets the transport's hedge floor (HEDGE_FLOOR) for the run, to measure its default.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = REPO / "samples" / "corpus"


def _serve(conn: Any, stall: float) -> None:
    """Child process: the scripted server; a 'timeout' fault holds its answer `stall` seconds."""
    from tests.support.llm_server import LLMServer

    server = LLMServer().start()
    server.timeout_sleep = stall
    conn.send(server.base_url)
    while True:
        command, *args = conn.recv()
        if command == "stop":
            break
        if command == "count":
            conn.send(sum(server.calls.values()))
            continue
        server.reset()
        server.fault_rate(*args)
        conn.send(None)
    server.stop()


async def _compile(workspace: Path, base_url: str, llm_timeout: float) -> dict[str, Any]:
    from compendium.operations import compile_workspace
    from compendium.settings import load_settings

    env = {"COMPENDIUM_LLM_BASE_URL": base_url, "COMPENDIUM_LLM_API_KEY": "bench", "COMPENDIUM_LLM_MODEL": "test-chat"}
    settings = load_settings(workspace, env=env, overrides={"llm.timeout": llm_timeout})
    return (await compile_workspace(settings)).as_dict(settings.llm)


def run(rate: float, stall: float, timeout: float, repeat: int = 1) -> dict[str, list[tuple[float, str, int]]]:
    """Clean and stalled compiles, interleaved `repeat` times: (wall seconds, status, requests) of each."""
    from compendium.workspace import init_workspace

    ctx = mp.get_context("spawn")
    ours, theirs = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(theirs, stall), daemon=True)
    server.start()
    root = Path(tempfile.mkdtemp(prefix="compendium-stalls-"))
    out: dict[str, list[tuple[float, str, int]]] = {"clean": [], "stalls": []}
    try:
        base_url = ours.recv()
        # One compile first, untimed: the first compile of a process pays for imports and the
        # embedder's load, which are no stall's cost.
        workspace = init_workspace(root / "warm-up" / "kb")
        shutil.copytree(SAMPLE_CORPUS, workspace / "documents" / "corpus")
        ours.send(("fault", None, rate, 0))
        ours.recv()
        asyncio.run(_compile(workspace, base_url, timeout))
        for n in range(repeat):
            for name, kind in (("clean", None), ("stalls", "timeout")):
                workspace = init_workspace(root / f"{name}-{n}" / "kb")
                shutil.copytree(SAMPLE_CORPUS, workspace / "documents" / "corpus")
                ours.send(("fault", kind, rate, 0))
                ours.recv()
                started = time.perf_counter()
                report = asyncio.run(_compile(workspace, base_url, timeout))
                wall = time.perf_counter() - started
                ours.send(("count",))
                requests = ours.recv()
                out[name].append((wall, report["status"], requests))
                print(f"{name}: {wall:.1f} s wall, {report['status']}, {requests} requests", flush=True)
    finally:
        ours.send(("stop",))
        server.join(timeout=stall + 10)
        shutil.rmtree(root, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=0.2)
    parser.add_argument("--stall", type=float, default=30.0)
    parser.add_argument("--timeout", type=float, default=120.0, help="llm.timeout (the default is 120 s)")
    parser.add_argument("--floor", type=float, default=None, help="the transport's hedge floor, seconds")
    parser.add_argument("--repeat", type=int, default=1, help="clean and stalled compiles, interleaved")
    args = parser.parse_args()
    from compendium.engines import transport

    if args.floor is not None:
        transport.HEDGE_FLOOR = args.floor
    load = os.getloadavg()[0]
    result = run(args.rate, args.stall, args.timeout, args.repeat)
    for (clean, _, clean_requests), (stalled, status, requests) in zip(result["clean"], result["stalls"], strict=True):
        print(f"{args.rate:.0%} of calls stalling {args.stall:g} s (timeout {args.timeout:g} s, hedge floor "
              f"{transport.HEDGE_FLOOR:g} s): {stalled:.1f} s wall ({status}) against {clean:.1f} s clean, "
              f"x{stalled / clean:.2f}; {clean_requests} requests clean, {requests} stalled")
    if args.repeat > 1:
        clean = statistics.median(wall for wall, _, _ in result["clean"])
        stalled = statistics.median(wall for wall, _, _ in result["stalls"])
        print(f"median of {args.repeat}: {stalled:.1f} s stalled against {clean:.1f} s clean, x{stalled / clean:.2f}")
    print(f"load {load:.2f} -> {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
