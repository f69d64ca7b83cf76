"""Benchmark of the ingest phase alone: reading, chunking and storing a generated corpus.

The corpus of benchmarks/compile.py (`--documents`, 3,000 by default: its 10x size, 11,282
chunks) is ingested into a fresh SQLite store `--runs` times with the default `wiki` template.
Printed and written to benchmarks/reports/ingest.md: the phase's CPU seconds (user and system,
this process's reading threads included), chunks per CPU second and the load average.

    python -m benchmarks.ingest [--documents 3000] [--runs 3] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import resource
import shutil
import tempfile
from pathlib import Path

from benchmarks.corpus import generate_corpus

REPORT = Path(__file__).parent / "reports" / "ingest.md"


async def _ingest_once(corpus: Path, store_dir: Path) -> tuple[float, float, int]:
    from compendium.phases import ingest
    from compendium.pipeline.context import CompileContext
    from compendium.storage.factory import open_store
    from compendium.templates.registry import load_template

    template = load_template("wiki")
    store = await open_store(f"sqlite:///{store_dir / 'store.db'}")
    try:
        ctx = CompileContext(store=store, engine=None, embedder=None, template=template, documents_dir=corpus)
        before = resource.getrusage(resource.RUSAGE_SELF)
        result = await ingest.run(template, ctx)
        after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        await store.close()
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, result.details["chunks"]


def run(documents: int, runs: int) -> list[tuple[float, float, int, float]]:
    """(user s, system s, chunks, load average) of each run."""
    root = Path(tempfile.mkdtemp(prefix="compendium-ingest-bench-"))
    try:
        generate_corpus(root / "documents" / "synthetic", documents)
        # Imports and the Markdown parser's first build are not the phase's work: one run warms them.
        asyncio.run(_ingest_once(root / "documents", Path(tempfile.mkdtemp(dir=root))))
        out = []
        for _ in range(runs):
            load = os.getloadavg()[0]
            user, system, chunks = asyncio.run(_ingest_once(root / "documents", Path(tempfile.mkdtemp(dir=root))))
            out.append((user, system, chunks, load))
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def render(documents: int, results: list[tuple[float, float, int, float]]) -> str:
    lines = [
        "# Ingest benchmark: reading, chunking and storing",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores (shared with other jobs), CPython "
        f"{platform.python_version()}. Corpus: benchmarks/corpus.py, {documents} Markdown documents; "
        "default `wiki` template; fresh SQLite store per run.",
        "",
        "| run | load average (1 min) | CPU s (user + system) | chunks | chunks per CPU second |",
        "|---|---|---|---|---|",
    ]
    for n, (user, system, chunks, load) in enumerate(results, start=1):
        cpu = user + system
        lines.append(f"| {n} | {load:.2f} | {cpu:.2f} ({user:.2f} + {system:.2f}) | {chunks:,} | {chunks / cpu:,.0f} |")
    lines += [
        "",
        "Reproduce: `.venv/bin/python -m benchmarks.ingest` (`--documents N`, `--runs N`).",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    text = render(args.documents, run(args.documents, args.runs))
    print(text)
    if not args.no_write:
        REPORT.write_text(text)


if __name__ == "__main__":
    main()
