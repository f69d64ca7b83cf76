"""Benchmark of a whole compile: a generated corpus against the scripted LLM server.

The server runs in a separate process with a fixed latency per call (chat and embeddings),
so this process's CPU time is Compendium's own work. Embeddings go through the same server
unless `--embedder offline`. Printed and written to benchmarks/reports/compile.md:
LLM calls per chunk in MAP, prompt tokens per corpus token (MAP's and the whole compile's;
benchmarks/prompt_cost.py splits them by phase and part), own CPU per chunk, each
phase's wall time against the bound its chat calls impose (calls x latency / concurrency),
and the whole compile's wall against that bound, K·L/C summed over the phases. Each latency
is compiled `--repeat` times, one after another, each in a new process (its imports paid),
and the compile with the least CPU is shown:
on shared cores the same code measured 2.2 and 3.2 s of CPU a quarter of an hour apart.

    python -m benchmarks.compile [--documents 300] [--latency 0.05 --latency 0.2 --latency 0.5]
                                 [--repeat 3] [--embedder server|offline] [--no-write]

Longer than ~450 lines because of NOTES: some 280 lines of prose the report prints after its
tables (why a target is missed, what changed), kept beside the measure they explain. The code
itself is under 300 lines.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.bytecode import compile_package
from benchmarks.corpus import generate_corpus

REPORT = Path(__file__).parent / "reports" / "compile.md"
TARGETS = {"calls_per_chunk": 0.15, "prompt_per_corpus_token": 1.3, "compile_prompt_per_corpus_token": 1.35,
           "cpu_per_chunk": 0.002, "wall_over_bound": 0.15}
LATENCIES = [0.05, 0.2, 0.5]  # seconds per call: CPU-bound, the middle, model-bound


def _serve(latency: float, conn: Any) -> None:
    """Child process: the scripted server until told to stop; then its counters."""
    from tests.support import llm_server

    # The scripted server writes a reply's headers and body separately; without TCP_NODELAY,
    # Nagle's algorithm holds the body until the client's delayed ACK, ~45 ms per call on
    # Linux (measured: 48 ms a call in series at zero latency, 3 ms with it). Real endpoints
    # (uvicorn, vLLM, llama.cpp) set TCP_NODELAY; so does the server here.
    llm_server._Handler.disable_nagle_algorithm = True
    server = llm_server.LLMServer().start()
    server.set_latency(latency)
    conn.send(server.base_url)
    conn.recv()
    conn.send({"calls": dict(server.calls), "prompt_tokens": server.prompt_tokens, "cpu": time.process_time()})
    server.stop()


@dataclass
class Run:
    report: dict[str, Any]
    wall: float
    cpu: float
    corpus_tokens: int
    chunks: int
    server: dict[str, Any]
    lanes: dict[str, list[tuple[int, int]]]  # phase -> (calls, concurrency) of each kind of call
    phase_cpu: dict[str, float]
    startup_cpu: float  # imports, settings, engine: before the first phase starts


class _CpuByPhase:
    """Event sink noting this process's CPU seconds per phase (the server is another process)."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.started: dict[str, float] = {}
        self.spent: dict[str, float] = {}

    def emit(self, event: Any) -> None:
        from compendium.pipeline.events import PhaseFinished, PhaseStarted

        if isinstance(event, PhaseStarted):
            self.started[event.phase] = time.process_time()
            self.first = self.first if self.first is not None else self.started[event.phase]
        elif isinstance(event, PhaseFinished):
            self.spent[event.phase] = time.process_time() - self.started[event.phase]


def lanes_of(phases: dict[str, dict[str, Any]], template: Any, limit: int) -> dict[str, list[tuple[int, int]]]:
    """How each phase's calls were allowed to overlap, as (calls, concurrency) parts.

    MAP and REFINE run under their template's concurrency; REDUCE's pair judgments, then its
    description summaries, run under map.concurrency; PLAN names topics and judges MAYBE
    matches one call at a time. Embedding calls are not in the bound (they overlap the chat
    calls, or are one round trip before REDUCE's judgments).
    """
    fan = min(template.map.concurrency, limit)
    reduce_calls, summaries = phases["reduce"]["llm_calls"], phases["reduce"].get("summaries", 0)
    return {
        "ingest": [(0, 1)],
        "map": [(phases["map"]["llm_calls"], fan)],
        "reduce": [(reduce_calls - summaries, fan), (summaries, fan)],
        "plan": [(phases["plan"]["llm_calls"], 1)],
        "refine": [(phases["refine"]["llm_calls"], min(template.refine.concurrency, limit))],
    }


async def _compile(
    workspace: Path, base_url: str, sink: _CpuByPhase, embedder: str
) -> tuple[dict[str, Any], int, dict[str, list[tuple[int, int]]], float, float]:
    from compendium.operations import compile_workspace, opened_store, resolve_template
    from compendium.settings import load_settings
    from compendium.storage.records import Chunk

    env = {"COMPENDIUM_LLM_BASE_URL": base_url, "COMPENDIUM_LLM_API_KEY": "bench", "COMPENDIUM_LLM_MODEL": "test-chat"}
    if embedder == "server":
        env |= {"COMPENDIUM_EMBED_BASE_URL": base_url, "COMPENDIUM_EMBED_API_KEY": "bench",
                "COMPENDIUM_EMBED_MODEL": "test-embed"}
    settings = load_settings(workspace, env=env)
    report = await compile_workspace(settings, events=sink)
    # The compile ends here: counting the corpus's tokens below is the benchmark's own work.
    cpu, wall = time.process_time(), time.perf_counter()
    async with opened_store(settings) as store:
        tokens = sum([c.tokens async for c in store.scan(Chunk)])  # type: ignore[attr-defined]
    template = resolve_template(settings, None)
    data = report.as_dict(settings.llm)
    return data, tokens, lanes_of(data["phases"], template, settings.llm.max_concurrency), cpu, wall


def run(documents: int, latency: float, keep: Path | None = None, embedder: str = "server") -> Run:
    from compendium.workspace import init_workspace

    compile_package()
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
        sink = _CpuByPhase()
        report, tokens, lanes, cpu1, wall1 = asyncio.run(_compile(workspace, base_url, sink, embedder))
        wall, cpu = wall1 - wall0, cpu1 - cpu0
        ours.send("stop")
        counters = ours.recv()
        server.join(timeout=10)
        if keep is not None:
            shutil.copytree(workspace, keep, dirs_exist_ok=True)
        startup = (sink.first if sink.first is not None else cpu0) - cpu0
        return Run(report, wall, cpu, tokens, report["chunks"], counters, lanes, sink.spent, startup)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_fresh(documents: int, latency: float, keep: Path | None = None, embedder: str = "server") -> Run:
    """`run` in a new interpreter: each compile pays its imports, as a `compendium compile` does."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(run, documents, latency, keep, embedder).result()


def table(run_: Run, latency: float) -> list[str]:
    phases = run_.report["phases"]
    mapped = phases["map"]
    calls_per_chunk = mapped["llm_calls"] / max(run_.chunks, 1)
    prompt_ratio = mapped["prompt_tokens"] / max(run_.corpus_tokens, 1)
    cpu_per_chunk = run_.cpu / max(run_.chunks, 1)
    in_phases = sum(run_.phase_cpu.values()) / max(run_.chunks, 1)
    rows = [
        "| Measure | Value | Target | Met |",
        "|---|---|---|---|",
        _row("MAP LLM calls per chunk", calls_per_chunk, TARGETS["calls_per_chunk"]),
        _row("MAP prompt tokens per corpus token", prompt_ratio, TARGETS["prompt_per_corpus_token"]),
        _row("Prompt tokens per corpus token, whole compile", run_.report["totals"]["prompt_tokens"] / max(run_.corpus_tokens, 1),
             TARGETS["compile_prompt_per_corpus_token"]),
        _row("CPU seconds per chunk (this process, whole run)", cpu_per_chunk, TARGETS["cpu_per_chunk"], digits=4),
        _row("CPU seconds per chunk in the phases (without startup)", in_phases, TARGETS["cpu_per_chunk"], digits=4),
        "",
        f"| Phase | Calls | Concurrency | Bound (s) | Wall (s) | Over bound | Met (≤ {TARGETS['wall_over_bound']:.0%}) | CPU (s) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    bound_total = 0.0
    for name in ("ingest", "map", "reduce", "plan", "refine"):
        p = phases[name]
        parts = [(n, c) for n, c in run_.lanes.get(name, [(p["llm_calls"], 1)]) if n] or [(0, 1)]
        bound = sum(n * latency / c for n, c in parts)
        bound_total += bound
        conc = " + ".join(f"{n}@{c}" if len(parts) > 1 else str(c) for n, c in parts)
        rows.append(_phase_row(name, p["llm_calls"], conc, bound, p["seconds"], run_.phase_cpu.get(name, 0.0)))
    rows.append(_phase_row("whole compile", run_.report["totals"]["llm_calls"], "", bound_total, run_.wall, run_.cpu))
    rows.append(f"\nStartup before the first phase (imports, settings, engine): {run_.startup_cpu:.2f} s CPU.")
    rows.append("")
    rows.extend(headline(run_, bound_total))
    return rows


def headline(run_: Run, bound: float) -> list[str]:
    """The two figures the issue asks for: wall against K·L/C, and own CPU per chunk."""
    ratio = run_.wall / bound if bound else float("nan")
    per_chunk = run_.cpu / max(run_.chunks, 1) * 1000
    return [
        f"**Wall vs K·L/C: {run_.wall:.2f} s vs {bound:.2f} s = {ratio:.2f}×** "
        f"(target ≤ {1 + TARGETS['wall_over_bound']:.2f}×; K = {run_.report['totals']['llm_calls']} chat calls; "
        f"{run_.server['calls'].get('embeddings', 0)} embedding calls besides). The scripted server spent "
        f"{run_.server.get('cpu', float('nan')):.1f} s of CPU writing its answers (one process, one GIL, on the "
        "same 2 cores): a real endpoint does that work within its latency; here it adds to it when the cores are busy.",
        f"**Own CPU per chunk: {per_chunk:.2f} ms** (target ≤ {TARGETS['cpu_per_chunk'] * 1000:.0f} ms; "
        f"{run_.cpu:.2f} s over {run_.chunks} chunks, startup included).",
    ]


def _row(label: str, value: float, target: float, digits: int = 3) -> str:
    return f"| {label} | {value:.{digits}f} | ≤ {target} | {'yes' if value <= target else 'NO'} |"


def _phase_row(name: str, calls: int, conc: str, bound: float, wall: float, cpu: float) -> str:
    over = (wall - bound) / bound if bound else float("nan")
    met = "n/a (no calls)" if not bound else ("yes" if over <= TARGETS["wall_over_bound"] else "NO")
    over_text = f"{over:+.0%}" if bound else "—"
    return f"| {name} | {calls} | {conc or '—'} | {bound:.2f} | {wall:.2f} | {over_text} | {met} | {cpu:.2f} |"


def render(runs: list[tuple[Run, float]], documents: int, embedder: str = "server",
           tries: dict[float, list[Run]] | None = None) -> str:
    flags = " ".join(f"--latency {latency}" for _, latency in runs) + (" --embedder offline" if embedder == "offline" else "")
    repeat = f" --repeat {max(len(d) for d in tries.values())}" if tries else ""
    embeddings = ("embeddings through the same server (same latency)" if embedder == "server"
                  else "offline embedder")
    lines = [
        "# Compile benchmark",
        "",
        f"Generated by `python -m benchmarks.compile --documents {documents} {flags}{repeat}` on "
        f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
        f"{mp.cpu_count()} cores (shared with other jobs). Scripted OpenAI-compatible server in a separate "
        "process (TCP_NODELAY), a fixed latency per call; default `wiki` template; SQLite store; "
        f"{embeddings}. Load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}.",
        "",
    ]
    for run_, latency in runs:
        r = run_.report
        counts = r["counts"]
        lines += [
            f"## {latency * 1000:.0f} ms per call",
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
            *_tries(run_, (tries or {}).get(latency, [])),
        ]
    return "\n".join(lines)


def _tries(shown: Run, done: list[Run]) -> list[str]:
    """Every compile at this latency: the machine's speed moves between runs (shared cores),
    so the one with the least CPU is shown above, the others named here."""
    if len(done) < 2:
        return []
    cpu = ", ".join(f"{r.cpu / max(r.chunks, 1) * 1000:.2f}" for r in done)
    walls = ", ".join(f"{r.wall:.1f}" for r in done)
    return [f"{len(done)} compiles, one after another: own CPU per chunk {cpu} ms; wall {walls} s. "
            f"Shown above: the one with the least CPU ({shown.cpu / max(shown.chunks, 1) * 1000:.2f} ms).", ""]


# Why the targets are missed and what changed (issue 15, "get to the model's limit").
NOTES = """
## 10x and the machine's speed (issue 15, ninth part)

10x, the same script with `--documents 3000 --latency 0.05 --repeat 2` (11,282 chunks, 1,075
chat calls), right after the run above: own CPU 9.35 and 8.72 s, **0.83 and 0.77 ms a chunk**
(target <= 1 ms); wall 20.7 and 20.2 s against K·L/C 13.6 s at 50 ms (CPU-bound, no target).

The 1x figures above (1.62-1.93 ms) are from a fast stretch of this machine: the scripted
server, doing the same work for the same 414 calls, spent 0.8-1.1 s of CPU, against 1.8-2.3 s
in the report before this one, where this code's predecessor measured 3.4-3.7 ms a chunk. The
instructions executed did not change between the two (rounds 4-6 count them); the machine's
speed did. On a stretch as slow as that one the 2 ms target would not be met. CPU a chunk also
grows with the latency (1.62, 1.76, 1.93 ms at 50, 200, 500 ms): a cProfile of the 50 and 500 ms
compiles shows the same calls, each a little dearer (+4% in all, spread over every function),
as a process that sleeps between calls finds its caches cold (a loop of fixed work measured
3-5% dearer with 500 ms sleeps between its rounds than with 50 ms); nothing polls meanwhile.
## CPU round 6 (issue 15, eighth part)

This session's machine ran fast for stretches and drifted by up to 20% between runs a minute
apart, so pairs of whole compiles could not separate this round's changes from the drift.
Pairs, the session start (5e46fa4) right before this round's final code, each compile in a new
process, 50 ms: 1x 2.29 -> 2.13, 2.24 -> 2.65, 2.58 -> 2.62 s; 10x 14.28 -> 13.07, 11.82 ->
13.43 s. Instruction counts (cachegrind as in round 5, 0 ms, this process only), which do not
drift: 1x 15.056 -> 14.204 G (-5.7%), 10x 73.632 -> 68.270 G (-7.3%).
- A call's tokens are estimated before it is sent only when a budget or a tokens-per-minute
  limit needs them; otherwise the server's usage says what it cost (a reply without usage is
  counted after it). Counting every prompt was 3.4% of the 1x instructions.
- REDUCE takes a first compile's extracts from MAP in memory instead of reading and decoding
  every one from the store (trusted only when they give the fingerprint MAP reports as stored),
  up to 20,000 of them: the collector walks what MAP holds (30k chunks offline: +0.6 s of
  collector work against REDUCE's -0.5 s). REDUCE at 10x 4.95/4.29 -> 4.13/3.65 s in two pairs.
- Extracts have no filter fields (nothing filters them): their document_id and status indexes
  rewrote a B-tree page per extract at every MAP commit. 710 MAP-shaped commits: 0.72-0.78 ->
  0.56-0.62 s. A store with those indexes drops them on opening.
- word_counts (REDUCE's words of every claim) counts each distinct token once: 100k claims
  0.22-0.26 -> 0.14 s.
- Left, measured: SQLite's settings do not lower MAP's commit cost (wal_autocheckpoint 250,
  4,000 or 20,000 pages: same or worse); pydantic's MAP reply parse is 0.25 ms a reply at 1x and
  0.69 ms at 10x in the compile, against 0.39 ms for the same replies alone (a TypedDict
  adapter would take it to ~0.21 ms alone: ~2% at 10x, a change across the engine seam, not
  made); aiohttp's import builds two TLS contexts (~40 ms of its ~100 ms) even for a plain-HTTP
  endpoint; REFINE's evidence ranking is ~1.3 ms a page at 1x, spread over 23k candidate items
  (looking for a page's names in a source's whole text at once, not paragraph by paragraph, was
  tried: +0.3% instructions, taken back).
## CPU round 5 (issue 15, seventh part)

The machine ran slow again (the session-start code: 3.08-3.23 ms a chunk at 1x, against
2.56-2.85 ms on the same code four hours before). Pairs, session start (ec5e2de) right
before this round's code, each compile in a new process: 1x 3.51 -> 3.38, 3.64 -> 3.62,
3.47 -> 3.30 s (0.95-0.99); 10x one pair 16.45 -> 17.69 s, inside the drift. Instruction
counts (cachegrind, PYTHONHASHSEED=0, OPENBLAS_NUM_THREADS=1 on both sides so that only the
code differs, a 300-document compile at 0 ms): 15.252 -> 15.098 G (-1.0%).
- BLAS on one thread unless the environment chooses (compendium/blas.py): OpenBLAS started a
  thread per core at numpy's import, each spinning ~0.1 s of CPU (import numpy: 0.17-0.19 ->
  0.07 s of CPU on 2 cores; 2.6% of a 1x compile's perf samples). Not in the count above.
- count_tokens: digit runs by split, line terms only where a line break is (-15-20% a text).
- Fingerprints: a text of long strings is walked at once, not scanned first (42 -> 21-30 ms).
- REDUCE: contribution, add_mentions, collect_mentions, add_relations, finish do less per item
  (-4% to -10.5% in each; -0.4% of the whole compile).
- Offline engine (quality sample): whole-word searches by str.find instead of a regex compiled
  per word (term mentions, claim index, topic names), a span pattern without hopeless starts,
  the writer's per-sentence cache: engine phases -4% to -13% in six interleaved pairs.
- Left: at 10x MAP's SQLite writes (706 commits, ~550 MB) cost ~0.6 s, a third of it the
  commits (4 batches a commit: 0.61 -> 0.40 s, but a killed process would then lose paid
  replies); page size does not help (4 KiB: 0.86 s). pydantic's MAP reply parse ~0.35 ms a
  65 KB reply. 3,152 frame-stack chunks (16 KiB mmap/munmap pairs) a 1x compile.
## CPU round 4 (issue 15, sixth part)

This session's machine ran 30-50% slower than the last one's fast stretch (the same 1x compile of
the previous round's final code: 2.72-3.02 ms per chunk at load 0, against 1.93-1.96 then), and
its speed moved by as much again within minutes. Whole compiles timed in pairs could not separate
this round's changes from the drift, so they were judged by instruction counts: valgrind
cachegrind, PYTHONHASHSEED=0, a 1,000-document compile (3,774 chunks) at 0 ms per call, the
round's start (14b8620) and its end run side by side: 33.29 -> 31.53 G instructions for the
whole process (-5.3%; corpus generation and bytecode included, so the compile's own share falls
by more).

- REFINE: built-in prompts render in a plain Jinja environment (a stranger's prompt still renders
  in the sandbox, in a worker process); evidence ranking, candidates and the definition test do
  less per item; count_tokens copies less. REFINE's replayed work: -11% of instructions.
- PLAN: the outline's merge works out each group's items once per merge, not every step
  (build_outline on a 1x compile's input: 27.0 -> 9.2 ms).
- REDUCE: a mention's bucket is found once; a chunk's contribution builds no tuples (-10%).
- MAP: a reply's labels map to their slots without a call per item (split_reply -10%).
- Fingerprints: hex ids no longer send a fingerprint down the canonical path (21,684 -> 0 at 10x).
- Store: bulk writes of records without vector or text index are encoded in one pass.
- Left: at 10x a compile writes ~870 MB to SQLite (MAP alone 524 MB for 706 batches: each commit
  rewrites the random-id index leaves its extracts land in, and the WAL and checkpoint write each
  page twice); REDUCE takes ~114k fresh pages (page faults), and its system CPU varied 0.35-1.45 s
  between runs of the same code; aiohttp's import is ~0.16 s, 0.04 s of it two TLS contexts.
## CPU round 3 (issue 15, fifth part)

Own CPU per chunk at 50 ms per call, each compile in a new process. On these shared cores the
same code measured 2.2 s and 3.2 s of CPU a quarter of an hour apart, at load below 1: each
latency is now compiled `--repeat` times and the least CPU shown (the table above is from
whatever state the machine was in), and before/after are pairs run one right after the other
(session start 6ba3a29, exported, bytecode compiled, against this round's code):

| scale | pairs (start -> now, s of CPU) | now / start | least seen now | target |
|---|---|---|---|---|
| 1× (1,126 chunks) | 3.66 -> 3.03, 3.19 -> 2.55, 2.75 -> 2.20 | 0.80-0.83 | 1.93-1.96 ms (2.17-2.20 s) | ≤ 2 ms |
| 10× (11,282 chunks) | 20.4 -> 14.7, 15.4 -> 12.9 | 0.72-0.84 | 0.97-1.0 ms (10.96-11.28 s) | ≤ 1 ms |

- SQLite, schema 2: record tables keep their rowids, with a unique (kb, id) index, and new
  files use 16 KiB pages. A KB-sized JSON row spilled to overflow pages in a WITHOUT ROWID
  B-tree and random-id inserts rewrote whole leaves. 10× in interleaved runs: 12.9-13.7 ->
  11.0-12.1 s; ingest alone 2.7-2.85 -> 2.13 s. A schema 1 file is rebuilt on opening, in one
  transaction (12.7 s for the 1.8 GB store of 100k chunks, once).
- A record without a vector is written by orjson from its dataclass fields (no dict first).
- MAP: a reply's repeated names, types, labels and relation ends are cleaned once; built-in
  prompts render on the event loop (a stranger's template still renders in the worker
  process); the sandbox's hooks make fewer calls; page citations are cleaned without a regex
  pass per marker. REFINE's token and evidence-key caches hold a whole compile.
- Bytecode: this machine sets PYTHONDONTWRITEBYTECODE=1, so every benchmark process compiled
  the modules edited since their .pyc was written from source (~60-80 ms a compile, which an
  installed copy never spends). The benchmarks write the bytecode first, untimed.
- Left: aiohttp's import (~0.1 s of CPU, a third of it two TLS contexts it builds on import)
  and ~0.13 ms of CPU a post; pydantic's parse of a MAP reply (0.7 ms a reply against 0.24 ms
  for orjson.loads: only plain dicts would save it, which changes the engine seam); exact
  token counts of MAP prompts (~0.1 s at 10×); SQLite's full-text index of chunks at ingest
  (0.58 of 0.68 s to write 11k chunks); py-spy here puts up to 0.5 s on syscalls such as
  time.thread_time that cProfile counts at 1 ms: compare with A/B runs, not its shares.
## CPU round 2 (issue 15, fourth part)

Own CPU per chunk through this script, 300 documents (1×) and 3,000 (10×, 11,282 chunks), 50 ms
per call. The machine's speed itself moved by ~10% within the session (the same commit measured
2.58 ms and 2.87 ms 20 minutes apart at load 0.3-0.6), so before/after pairs were run one right
after the other:

| scale | session start (67ee6c0) | end of round | target |
|---|---|---|---|
| 1× | 2.65 ms (2.98 s) | 2.27-2.45 ms (2.55-2.77 s) | ≤ 2 ms |
| 10× | 1.46-1.50 ms (16.5 s) | 1.11-1.24 ms (12.5-13.9 s) | ≤ 1 ms |

- JSON: records, request bodies and replies through orjson (compendium/json_text.py), with the
  json module for what orjson refuses (64-bit-plus integers, lone surrogates, non-string keys,
  NaN written before); fingerprints through orjson whenever its text equals the canonical JSON
  (all but exponent floats), so no fingerprint moved.
- REDUCE (5.7 -> 3.1-3.6 s at 10×): claims have no full-text index (nothing searches them; a
  claim is a sentence of its chunk, which is indexed) and are filterable by chunk only; the
  claims' words are tokenised once; a term's claims are found by searching the claims' text
  before splitting only those that hold its words; no np.unique (it imported numpy.ma).
- Ingest (3.7 -> 2.3 s at 10×): small files read several to a thread call, 256 documents per
  write transaction, one Markdown parser per thread.
- REFINE (-18% at 1×, -29% at 10×): a chunk's evidence source built once per window of pages,
  not per page; chunk-to-page lookups a window at a time; a page's names prepared once for its
  definition checks; a page reply's checks stop at the first words and citation that pass.
- A MAP batch's reply, a pair judgment's and a summary's go to the response cache in the
  transaction that stores what was made of them (one commit instead of two; 10×: 14.4 ->
  13.5 s in one pair of runs); a JSON reply is cached as it came, not encoded again.
- Left: SQLite is ~21% of the CPU at 1× (py-spy, all threads). Its tables are WITHOUT ROWID
  with KB-sized JSON rows, so a row spills to overflow pages and random-id inserts rewrite
  whole leaves: 11k extracts written in 700 commits cost 0.46 s and 322 MB of WAL as now,
  0.25 s and 194 MB in a rowid table with a unique (kb, id) index (a schema change with a
  migration, not done). Then the event loop and sockets (~18%), REFINE's evidence ranking
  (~1 ms a page), prompt rendering in the template sandbox, and imports (~0.2 s at startup).

## CPU round (issue 15, third part)

Each pair of runs: the commit before this round (8d963a6, exported to a scratch directory) then
this one, one right after the other, through this script at 300 documents (1×) or 3,000 (10×,
11,282 chunks). `before` still counted the benchmark's own scan of the chunks (~0.02 ms/chunk).

| run (load average) | before: own CPU per chunk | after | before: wall / K·L/C | after |
|---|---|---|---|---|
| 1×, 50 ms (5.6 / 5.0) | 2.87 ms | 2.25 ms | 1.56× | 1.46× |
| 1×, 200 ms (4.4 / 3.9) | 3.06 ms | 2.40 ms | 1.22× | 1.14× |
| 10×, 50 ms (1.3 / 1.7) | 1.57 ms | 1.38 ms | 2.16× | 2.04× |
| 10×, 50 ms (5.9 / 4.2) | 1.63 ms | 1.39 ms | 2.41× | 2.02× |

- Model calls are posted through aiohttp (engines/transport.py), whose C parser costs ~0.15 ms
  of CPU a call against ~0.8 ms for httpx and ~1.1 ms for the `openai` SDK's own client
  (2,000 posts of a 2 KB prompt with a 4 KB reply, one machine); proxies in the environment
  are honoured; httpx is imported only to build the SDK's error objects when a call fails.
- SQLite: the full-text index is given a record's text as it is written instead of reading it
  back through the `ft` index and json_extract (45% of indexing); a 64 MiB page cache; one row
  per id, in id order. One write of 100k claims and 22k relations: 3.9 -> 2.7 s of CPU.
- The offline engine is imported when asked for (the phases use two of its rule modules):
  `import compendium` 302 -> 250 ms. Chunking counts a chunk's tokens once.
- Own CPU now ends with the compile: the benchmark's count of the corpus's tokens is not in it.
- Left at 1× (2.2-2.4 ms against 2 ms): REFINE is ~1.0 s, 5.4 ms a page, and the evidence
  ranking in phases/evidence.py is ~45% of it under cProfile (rank_evidence 0.36 s,
  choose_evidence 0.10 s, pack_value 0.13 s of REFINE's 1.52 s profiled); REDUCE's one write
  of 10k claims with their full-text index (reduce.py:560) is ~0.3 s of its ~0.7 s.
- Left at 10× (1.38-1.41 ms against 1 ms): SQLite is ~30% of the CPU (4.8 of 15.2 s, timed per
  statement before the last store cut): the claims' full-text index 1.31 s (101,737 rows in
  REDUCE's write), commits 1.59 s (706 MAP extract writes 0.54 s, 94 ingest groups with their
  chunk index segments 0.51 s, 1,360 cache entries 0.24 s), the chunks' index 0.53 s, claim rows
  0.46 s. Then MAP's reply handling (split_reply 0.8 ms a batch, pydantic's validation) and
  ingest's Markdown parsing. Whether claims need a full-text index, and larger ingest groups
  (ingest.py), are the levers left; neither is in this round's files.
- A send to the scripted server costs this process the loopback's kernel work too (~0.1 ms for
  50 KB); it is part of the figures, as the server's own CPU is not.

## Incremental round (issue 15, second part)

Same session, same script, commit before this round (`before`) and after, one right after the
other. The machine gave both ~25% more CPU per chunk than in the round below (2.5-2.6 ms then
for the code `before` here): CPU figures compare only within one session.

| run (load average) | before: own CPU per chunk | after | before: wall / K·L/C | after |
|---|---|---|---|---|
| 50 ms (6.5 / 7.1) | 3.67 ms | 3.36 ms | 2.70× | 2.45× |
| 200 ms (6.1 / 6.0) | 3.54 ms | 3.28 ms | 1.32× | 1.28× |
| 50 ms (2.6 / 1.8) | 3.33 ms | 3.29 ms | 1.98× | 1.64× |

The tables above are a later run at load 1.8-2.2: 1.16× at 200 ms and 1.09× at 500 ms.

At 10× (`--documents 3000 --latency 0.05 --no-write`, 11,282 chunks, load 5.0-5.6): own CPU
per chunk 2.05 ms before the last REDUCE and MAP cuts of this round, 1.93 ms after (target
≤ 1 ms); REDUCE 10.1 -> 8.6 s of CPU, ingest 4.1 s, MAP 5.6 s, REFINE 2.6 s. REDUCE grows with
the claims (100k here): building, hashing and writing them with their full-text index;
MAP with its replies (splitting them, 818k cleaned strings); the SQLite writes are ~20% of
the whole under cProfile.

- What serialised at 200 ms, from a timeline of one compile: REDUCE's work before its first
  summary call (reading the extracts, tiers 1-2, one embedding round trip, the pair judgment)
  and after its last one (relations and claims, the diff against the stored KB, the write).
  Relations and claims are now worked out in a thread and the stored KB is diffed while the
  summaries are asked; what is left after the last summary is the write of the new KB (0.5 s
  of CPU for 12k records with their full-text index, 1.1 s of wall at load 5). REDUCE at
  200 ms: +33% over its bound before, +17% after. The rest of the excess is this process's
  CPU on one event loop on a busy machine (MAP and REFINE prepare and store around their
  calls) and the last round of each phase's calls not being full.
- CPU cut: REDUCE hands the KB it stored to PLAN, and PLAN to REFINE, instead of each reading
  it back (12k records decoded twice); a chunk's paragraphs are split once, not once per page
  it is offered to; a claim's page slugs are looked up once; records encode through one
  attrgetter. Measured against the same machine: 3-8% less CPU per chunk.
- What is left of the CPU (3.1-3.3 ms per chunk here against 2 ms): httpx request and reply
  handling is the largest single part (~20% under cProfile), then the SQLite writes with their
  full-text index (~12%), REFINE's evidence ranking (~8%) and MAP's reply splitting (~7%);
  none is large enough alone, and going under httpx means an HTTP client of our own.

## Where the time goes

Same-session comparison against the commit before this round (`before`), both through this
script with embeddings through the server, one right after the other, the scripted server
answering within its latency (below); load average 4.6-8.0 on 2 cores shared with other
engineers' test suites, so single runs vary by ±20% in wall at 50-200 ms.

| per call | before: wall / K·L/C | after | before: own CPU per chunk | after |
|---|---|---|---|---|
| 50 ms | 2.45× | 1.70× | 3.12 ms | 2.53 ms |
| 200 ms | 1.86× (load 8.0) | 1.19× | 3.24 ms | 2.59 ms |
| 500 ms | 1.56× | 1.11× | 3.47 ms | 2.61 ms |

With the server's old timing (its own work added after the sleep, under one GIL), two pairs of
runs at load 5-12 gave before 3.15-3.54×, 1.64-1.72×, 1.55-1.56× and after 3.04-4.40×,
1.35-1.44×, 1.14-1.16× at 50, 200 and 500 ms; own CPU 2.9-3.5 ms before, 2.5-3.0 ms after.

- The scripted server slept its latency, then wrote its answer: the answer's own work (1 s of
  CPU a compile, in one process with one GIL, on the cores this process uses) came on top of
  the latency, most for MAP's long answers. It now writes the answer first and sends it when
  the latency has passed since the request, as an endpoint's latency includes its work.
- REFINE embedded each page in a request of its own, inside the writer's concurrency slot,
  after the chat call: at 500 ms REFINE took 45.7 s against a 21.3 s bound (+115%). Written
  pages now go to phases/page_batches.py: one embedding request in flight, the pages written
  meanwhile go in the next one, so batches grow with the writing rate (172 embedding requests
  per compile became 43-46) and no writer waits for one. REFINE: +7% to +18% at 500 ms.
- MAP and REFINE hold a model slot only for the call: a batch's prompt or a page's evidence is
  prepared before it, the reply split or cleaned and stored after it, with 2 × concurrency
  items in progress.
- REDUCE asks its pair-judgment batches together (map.concurrency at a time, as its
  summaries) and its embedding batches together; this corpus has one judgment call, so it
  shows little here (tests/reduce/test_overlap.py shows the overlap and the equal result).
- Embeddings are asked as base64 and decoded with numpy from the raw body: 1.63 -> 0.61 ms of
  CPU per call (8 texts of 64 dimensions; the float path's cost grows with the width).
- Requests go through one httpx client per endpoint, and `openai` is imported only when a
  call fails or its client is asked for: 0.56 -> 0.38 ms of CPU per chat call, and a
  one-document `compendium compile` 0.70 -> 0.45 s of CPU (`import compendium.cli`
  299 -> 249 ms). A plain-HTTP endpoint's client loads no CA bundle (~80 ms each, two clients).
- What is left of the wall time over the bound at 200-500 ms is this process's CPU on a busy
  machine (one event loop: a reply waits while another page is being prepared) and the
  scripted server's CPU when its answers take longer than the latency, plus one round trip
  per phase for its embeddings and the last round of each phase's calls not being full.
- What is left of the CPU (2.5-2.6 ms per chunk against 2 ms) is spread: REFINE's evidence
  ranking and page prompt, MAP's reply splitting, decoding stored records (JSON per record),
  and httpx (~0.6 ms a call with these prompt sizes, ~10%; httpcore directly measured
  0.15-0.2 ms a call less, ~0.08 s a compile, not done).
- The scripted server writes headers and body separately; without TCP_NODELAY, Nagle's
  algorithm and the client's delayed ACK add ~45 ms to every call. The server sets it.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300)
    parser.add_argument("--latency", type=float, action="append",
                        help=f"seconds per call; repeat for several runs (default {' '.join(map(str, LATENCIES))})")
    parser.add_argument("--embedder", choices=["server", "offline"], default="server",
                        help="embeddings through the scripted server (default) or the offline embedder")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the report file alone")
    parser.add_argument("--keep", type=Path, help="copy the compiled workspace here")
    parser.add_argument("--repeat", type=int, default=3,
                        help="compiles per latency; the report shows the one with the least CPU (default 3)")
    args = parser.parse_args()
    runs, tries = [], {}
    for latency in args.latency or LATENCIES:
        done = []
        for _ in range(max(1, args.repeat)):
            done.append(run_fresh(args.documents, latency, args.keep, args.embedder))
            print(f"{latency * 1000:.0f} ms: wall {done[-1].wall:.1f} s, CPU {done[-1].cpu:.2f} s, "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
        runs.append((min(done, key=lambda r: r.cpu), latency))
        tries[latency] = done
    text = render(runs, args.documents, args.embedder, tries) + NOTES
    print(text)
    if not args.no_write:
        REPORT.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
