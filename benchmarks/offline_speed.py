"""Speed of the offline engine: its two inner loops, and a whole compile of a public manual.

Printed and written to benchmarks/reports/offline_speed.md:
- the offline embedder's short names per second (100,000 random names of 1-3 words), wall time;
- offline extraction's chunks per second of CPU time, on a three-times repeated passage of
  technical prose (or on the paragraphs of a text file given with --text);
- with --corpus (python by default): the quality benchmark's 150-document sample of that
  manual compiled offline --runs times with the compile's collector thresholds and as many with
  Python's defaults, with each phase's CPU seconds, the engine phases' (MAP+REDUCE+PLAN+REFINE)
  chunks per CPU second and the load average around each run.

    python -m benchmarks.offline_speed [--corpus python|postgres|none] [--runs N] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import string
import time
from pathlib import Path

from compendium.engines.offline.extract import extract_chunk
from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.engines.tasks import ChunkInput
from compendium.templates.schema import Template, TypeSpec

REPORT = Path(__file__).parent / "reports" / "offline_speed.md"

TEMPLATE = Template(
    name="docs",
    entity_types=[
        TypeSpec(name="technology"),
        TypeSpec(name="component"),
        TypeSpec(name="concept"),
        TypeSpec(name="setting", patterns=[r"^[a-z]+(_[a-z]+)+$"]),
    ],
    relation_types=[TypeSpec(name=n) for n in ("uses", "depends_on", "part_of", "related_to")],
)

# Made-up product prose with the shapes extraction meets in documentation: acronyms, code
# identifiers, a code block, a table, a question.
PASSAGE = """# Durability

Basalt records every change in the Change Journal (CJ) before it updates the segment files, e.g. row and key segments.
The CJ is an append-only history of every change made to the store.
A sync point is a place in the journal at which all segment files are known to be current.
The Page Cache holds recently read segments in memory. Basalt uses the CJ to recover after a crash.
The flusher writes changed segments from the Page Cache to disk.

```sql
SELECT * FROM basalt_io_stats;
```

| setting | default |
|---------|---------|
| journal_mode | full |

Note: the `basalt_io_stats` view shows one row per session.
Journal shipping, also known as log streaming, sends CJ records to follower nodes.
Release 4.1 of Basalt made the sync_interval setting changeable without a restart.
Is the CJ always on?
"""


def short_names(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join("".join(rng.choices(string.ascii_letters, k=rng.randint(3, 9))) for _ in range(rng.randint(1, 3)))
        for _ in range(count)
    ]


def embedder_rate(count: int) -> float:
    names = short_names(count)
    embedder = OfflineEmbedder()
    started = time.perf_counter()
    embedder.embed_sync(names)
    return count / (time.perf_counter() - started)


def extraction_rate(text: str, seconds: float) -> tuple[float, int]:
    chunk = ChunkInput(label="c1", text=text, heading_path=["Durability"])
    started = time.process_time()
    count = 0
    while time.process_time() - started < seconds:
        extract_chunk(chunk, TEMPLATE)
        count += 1
    return count / (time.process_time() - started), count


ENGINE_PHASES = ("map", "reduce", "plan", "refine")


def corpus_runs(corpus: str, runs: int, documents: int = 150) -> list[dict]:
    """Offline compiles of the quality benchmark's sample of `corpus`: CPU by phase, load.
    Each compile runs in a new process, as a `compendium compile` does: a second compile in
    the same process finds its imports done and its caches (token counts, patterns) warm."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from benchmarks.bytecode import compile_package

    compile_package()
    out = []
    for n in range(runs * 2):
        with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
            out.append(pool.submit(_compile_once, corpus, documents, n % 2 == 1).result())
    return out


def _compile_once(corpus: str, documents: int, default_gc: bool) -> dict:
    from benchmarks import quality
    from compendium.pipeline import collector as collection

    spec = quality.CORPORA[corpus]
    folder = spec["folder"]()
    chosen = quality.sample_documents(folder, spec["keep"], spec["skip"], documents)
    if default_gc:
        collection.COMPILE_THRESHOLDS = (1, 1, 1)  # (1, 1, 1): keep Python's defaults
    load_before = os.getloadavg()[0]
    data = quality.compile_corpus(folder, chosen)
    engine = sum(data["phase_cpu"].get(p, 0.0) for p in ENGINE_PHASES)
    return {"documents": len(chosen), "chunks": data["report"]["chunks"], "cpu": data["cpu"],
            "wall": data["wall"], "phase_cpu": data["phase_cpu"], "engine_cpu": engine,
            "load": (load_before, os.getloadavg()[0]), "default_gc": default_gc}


def render_corpus(corpus: str, runs: list[dict]) -> list[str]:
    if not runs:
        return []
    first = runs[0]
    lines = [
        f"## Whole compile: {corpus} manual, {first['documents']} documents, {first['chunks']:,} chunks, offline",
        "",
        "| run | garbage collector | load average (1 min) before / after "
        "| CPU s by phase (ingest, map, reduce, plan, refine) | compile CPU s | engine phases chunks per CPU second |",
        "|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(runs, start=1):
        phases = " / ".join(f"{r['phase_cpu'].get(p, 0.0):.1f}" for p in ("ingest", *ENGINE_PHASES))
        collector = "Python's defaults" if r["default_gc"] else "compile thresholds"
        lines.append(f"| {n} | {collector} | {r['load'][0]:.2f} / {r['load'][1]:.2f} | {phases} | {r['cpu']:.1f} "
                     f"| {r['chunks'] / max(r['engine_cpu'], 1e-9):.0f} |")
    return [*lines, "", "Each compile runs in a new process (its imports paid, its caches cold). "
            "Runs alternate between the compile's raised collector thresholds "
            "(`compendium/pipeline/collector.py`) and Python's defaults, to show what they save.", ""]


def render(names: int, names_per_s: float, chars: int, chunks_per_s: float, runs: int, source: str,
           corpus: str = "", corpus_results: list[dict] | None = None) -> str:
    return "\n".join([
        "# Offline engine: embedding, extraction and whole-compile speed",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs), "
        f"{platform.python_implementation()} {platform.python_version()}.",
        "",
        "| measure | figure |",
        "|---|---|",
        f"| offline embedder, {names:,} short names (1-3 random words), wall time | {names_per_s:,.0f} names/s |",
        f"| offline extraction, {chars:,}-character chunk ({source}), CPU time over {runs:,} runs "
        f"| {chunks_per_s:,.0f} chunks/s |",
        "",
        *render_corpus(corpus, corpus_results or []),
        "Reproduce: `.venv/bin/python -m benchmarks.offline_speed` "
        "(`--names N`, `--seconds S`, `--text FILE` to extract from a file of your own, "
        "`--corpus python|postgres|none`, `--runs N`).",
        "",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds of extraction to time")
    parser.add_argument("--text", type=Path, help="a text file to extract from instead of the built-in passage")
    parser.add_argument("--corpus", choices=("python", "postgres", "none"), default="python",
                        help="also compile this manual's quality sample offline (none: skip)")
    parser.add_argument("--runs", type=int, default=2,
                        help="pairs of compiles of the corpus to time (raised and default collector thresholds)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the report file alone")
    args = parser.parse_args()
    text = args.text.read_text(encoding="utf-8") if args.text else PASSAGE * 3
    source = args.text.name if args.text else "built-in passage ×3"
    names_per_s = embedder_rate(args.names)
    chunks_per_s, runs = extraction_rate(text, args.seconds)
    corpus = "" if args.corpus == "none" else args.corpus
    results = corpus_runs(corpus, args.runs) if corpus else []
    report = render(args.names, names_per_s, len(text), chunks_per_s, runs, source, corpus, results)
    print(report)
    if not args.no_write:
        REPORT.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
