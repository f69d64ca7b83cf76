"""Benchmark of a whole compile: a generated corpus against the scripted LLM server.

The server runs in a separate process with a fixed latency per call, so this process's CPU
time is Compendium's own work. Printed and written to benchmarks/reports/compile.md:
LLM calls per chunk in MAP, MAP prompt tokens per corpus token, CPU seconds per chunk, and
each phase's wall time against the bound its calls impose (calls x latency / concurrency).

    python -m benchmarks.compile [--documents 300] [--latency 0.05] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.corpus import generate_corpus

REPORT = Path(__file__).parent / "reports" / "compile.md"
TARGETS = {"calls_per_chunk": 0.15, "prompt_per_corpus_token": 1.3, "cpu_per_chunk": 0.005, "wall_over_bound": 0.15}


def _serve(latency: float, conn: Any) -> None:
    """Child process: the scripted server until told to stop; then its counters."""
    from tests.support.llm_server import LLMServer

    server = LLMServer().start()
    server.set_latency(latency)
    conn.send(server.base_url)
    conn.recv()
    conn.send({"calls": dict(server.calls), "prompt_tokens": server.prompt_tokens})
    server.stop()


@dataclass
class Run:
    report: dict[str, Any]
    wall: float
    cpu: float
    corpus_tokens: int
    chunks: int
    server: dict[str, Any]
    concurrency: dict[str, int]


async def _compile(workspace: Path, base_url: str) -> tuple[dict[str, Any], int, dict[str, int]]:
    from compendium.operations import compile_workspace, opened_store, resolve_template
    from compendium.settings import load_settings
    from compendium.storage.records import Chunk

    env = {"COMPENDIUM_LLM_BASE_URL": base_url, "COMPENDIUM_LLM_API_KEY": "bench", "COMPENDIUM_LLM_MODEL": "test-chat"}
    settings = load_settings(workspace, env=env)
    report = await compile_workspace(settings)
    async with opened_store(settings) as store:
        tokens = sum([c.tokens async for c in store.scan(Chunk)])  # type: ignore[attr-defined]
    template = resolve_template(settings, None)
    limit = settings.llm.max_concurrency
    # Phases that ask one call at a time (REDUCE judgments and summaries, PLAN topic names).
    concurrency = {
        "map": min(template.map.concurrency, limit),
        "reduce": 1,
        "plan": 1,
        "refine": min(template.refine.concurrency, limit),
    }
    return report.as_dict(settings.llm), tokens, concurrency


def run(documents: int, latency: float, keep: Path | None = None) -> Run:
    from compendium.workspace import init_workspace

    root = Path(tempfile.mkdtemp(prefix="compendium-bench-"))
    try:
        workspace = init_workspace(root / "ws")
        generate_corpus(workspace / "documents" / "synthetic", documents)
        ctx = mp.get_context("spawn")
        ours, theirs = ctx.Pipe()
        server = ctx.Process(target=_serve, args=(latency, theirs), daemon=True)
        server.start()
        base_url = ours.recv()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        report, tokens, concurrency = asyncio.run(_compile(workspace, base_url))
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        ours.send("stop")
        counters = ours.recv()
        server.join(timeout=10)
        if keep is not None:
            shutil.copytree(workspace, keep, dirs_exist_ok=True)
        return Run(report, wall, cpu, tokens, report["chunks"], counters, concurrency)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def table(run_: Run, latency: float) -> list[str]:
    phases = run_.report["phases"]
    mapped = phases["map"]
    calls_per_chunk = mapped["llm_calls"] / max(run_.chunks, 1)
    prompt_ratio = mapped["prompt_tokens"] / max(run_.corpus_tokens, 1)
    cpu_per_chunk = run_.cpu / max(run_.chunks, 1)
    rows = [
        "| Measure | Value | Target | Met |",
        "|---|---|---|---|",
        _row("MAP LLM calls per chunk", calls_per_chunk, TARGETS["calls_per_chunk"]),
        _row("MAP prompt tokens per corpus token", prompt_ratio, TARGETS["prompt_per_corpus_token"]),
        _row("CPU seconds per chunk (this process)", cpu_per_chunk, TARGETS["cpu_per_chunk"], digits=4),
        "",
        f"| Phase | Calls | Concurrency | Bound (s) | Wall (s) | Over bound | Met (≤ {TARGETS['wall_over_bound']:.0%}) |",
        "|---|---|---|---|---|---|---|",
    ]
    bound_total = 0.0
    for name in ("ingest", "map", "reduce", "plan", "refine"):
        p = phases[name]
        conc = run_.concurrency.get(name, 1)
        bound = p["llm_calls"] * latency / conc
        bound_total += bound
        rows.append(_phase_row(name, p["llm_calls"], conc, bound, p["seconds"]))
    rows.append(_phase_row("whole compile", run_.report["totals"]["llm_calls"], 0, bound_total, run_.wall))
    return rows


def _row(label: str, value: float, target: float, digits: int = 3) -> str:
    return f"| {label} | {value:.{digits}f} | ≤ {target} | {'yes' if value <= target else 'NO'} |"


def _phase_row(name: str, calls: int, conc: int, bound: float, wall: float) -> str:
    over = (wall - bound) / bound if bound else float("nan")
    met = "n/a (no calls)" if not bound else ("yes" if over <= TARGETS["wall_over_bound"] else "NO")
    over_text = f"{over:+.0%}" if bound else "—"
    return f"| {name} | {calls} | {conc or '—'} | {bound:.2f} | {wall:.2f} | {over_text} | {met} |"


def render(run_: Run, documents: int, latency: float) -> str:
    r = run_.report
    counts = r["counts"]
    lines = [
        "# Compile benchmark",
        "",
        f"Generated by `python -m benchmarks.compile --documents {documents} --latency {latency}` on "
        f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"{mp.cpu_count()} cores (shared). Scripted OpenAI-compatible server in a separate process, "
        f"{latency * 1000:.0f} ms per call; default `wiki` template; SQLite store; offline embedder.",
        "",
        f"Corpus: {r['documents']} documents (benchmarks/corpus.py), {run_.chunks} chunks, "
        f"{run_.corpus_tokens} chunk tokens. Result: {counts.get('entities', 0)} entities, "
        f"{counts.get('concepts', 0)} concepts, {counts.get('relations', 0)} relations, "
        f"{counts.get('claims', 0)} claims, {counts.get('topics', 0)} topics, {r['pages']['created']} pages. "
        f"LLM calls {r['totals']['llm_calls']} (server counted {run_.server['calls'].get('chat', 0)}), "
        f"prompt tokens {r['totals']['prompt_tokens']}, wall {run_.wall:.1f} s, CPU {run_.cpu:.1f} s.",
        "",
        *table(run_, latency),
        "",
    ]
    return "\n".join(lines)


# Why the targets are missed (cProfile of a 120-document run; see the final report of issue 3).
NOTES = """
## Where the time goes

- MAP calls per chunk and prompt ratio: the corpus's sections make ~160-token chunks, and the
  `wiki` template packs at most `map.batch_chunks: 8` per call, so a call carries ~1,040 chunk
  tokens against ~540 tokens of fixed prompt (36 system + 505 instructions and type lists).
  Document-aligned packing (phases/batching.py starts a fresh batch rather than split a
  document) leaves ~1.5 slots empty per batch: 6.5 chunks per call -> 0.155 calls per chunk.
  Raising the template default to 16 chunks per batch would give ~0.07 calls per chunk and
  ~1.25 prompt tokens per corpus token.
- REDUCE wall time: `describe()` in phases/reduce.py asks one summary at a time (170 calls in
  series) with a store read and a committed write around each; at concurrency 4 its bound
  would be ~2 s instead of 8.5 s, and its per-call overhead (~60 ms here) is store round trips.
- CPU: the `openai` SDK costs ~6 ms of CPU per call (request param transforms walk the JSON
  schema of `response_format` on every structured call, ~8 ms each) plus ~1.5 s to import;
  at ~0.47 calls per chunk that alone is ~3 ms per chunk. Page evidence packs (`_evidence`,
  `build_evidence`) and SQLite upserts come next.
- Wall over bound in MAP/REFINE: the 2 shared cores also run the server process and the other
  engineers' jobs; any CPU per call in this process (SDK, JSON parse of ~4k-token replies,
  SQLite commit) adds to each of the 4 concurrent slots.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--no-write", action="store_true", help="print only; leave the report file alone")
    parser.add_argument("--keep", type=Path, help="copy the compiled workspace here")
    args = parser.parse_args()
    result = run(args.documents, args.latency, args.keep)
    text = render(result, args.documents, args.latency) + NOTES
    print(text)
    if not args.no_write:
        REPORT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
