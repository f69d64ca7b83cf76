"""What stalls cost a compile: the sample corpus compiled through the scripted server clean, then
with a share of the calls (20% by default) held for 30 s without an answer, at the client's
default timeout; wall time of each, and their ratio.

    python -m benchmarks.stalls [--rate 0.2] [--stall 30] [--timeout 120]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import shutil
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


def run(rate: float, stall: float, timeout: float) -> dict[str, tuple[float, str]]:
    from compendium.workspace import init_workspace

    ctx = mp.get_context("spawn")
    ours, theirs = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(theirs, stall), daemon=True)
    server.start()
    root = Path(tempfile.mkdtemp(prefix="compendium-stalls-"))
    out = {}
    try:
        base_url = ours.recv()
        for name, kind in (("clean", None), ("stalls", "timeout")):
            workspace = init_workspace(root / name / "kb")
            shutil.copytree(SAMPLE_CORPUS, workspace / "documents" / "corpus")
            ours.send(("fault", kind, rate, 0))
            ours.recv()
            started = time.perf_counter()
            report = asyncio.run(_compile(workspace, base_url, timeout))
            out[name] = (time.perf_counter() - started, report["status"])
            print(f"{name}: {out[name][0]:.1f} s wall, {report['status']}", flush=True)
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
    args = parser.parse_args()
    load = os.getloadavg()[0]
    result = run(args.rate, args.stall, args.timeout)
    clean, stalled = result["clean"][0], result["stalls"][0]
    print(f"{args.rate:.0%} of calls stalling {args.stall:g} s (timeout {args.timeout:g} s): {stalled:.1f} s wall "
          f"against {clean:.1f} s clean, x{stalled / clean:.1f} (load {load:.2f}, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
