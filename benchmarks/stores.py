"""Store throughput: write and scan 100k chunks and 100k entities (256-d), then 1,000 KNN queries.

Run: .venv/bin/python benchmarks/stores.py [--records N] [--queries Q]
SQLite always; MySQL/MariaDB/TiDB when COMPENDIUM_TEST_MYSQL_URL is set, Elasticsearch when
COMPENDIUM_TEST_ES_URL is set. Prints the figures and writes benchmarks/reports/stores.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

from compendium.storage.factory import open_store
from compendium.storage.records import RECORD_TYPES, Chunk, Entity

DIM = 256
BATCH = 1000
REPORT = Path(__file__).parent / "reports" / "stores.md"


def vectors(n: int, seed: int) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


async def run_backend(name: str, url: str, records: int, queries: int) -> dict[str, float]:
    kb = f"bench{uuid.uuid4().hex[:8]}"
    store = await open_store(url, kb=kb)
    figures: dict[str, float] = {}
    try:
        text = "A passage of a document, long enough to look like a real chunk. " * 12
        started = time.perf_counter()
        for start in range(0, records, BATCH):
            await store.upsert(
                Chunk(id=f"c{i:07}", document_id=f"d{i // 50}", text=text, tokens=200)
                for i in range(start, min(records, start + BATCH))
            )
        figures["chunk writes/s"] = records / (time.perf_counter() - started)

        matrix = vectors(records, seed=1)
        started = time.perf_counter()
        for start in range(0, records, BATCH):
            await store.upsert(
                Entity(
                    id=f"e{i:07}",
                    name=f"Entity {i}",
                    type=("person", "place")[i % 2],
                    description="An entity.",
                    embedding=matrix[i],
                )
                for i in range(start, min(records, start + BATCH))
            )
        figures["entity writes/s"] = records / (time.perf_counter() - started)

        for kind, label in ((Chunk, "chunk scan/s"), (Entity, "entity scan/s")):
            started = time.perf_counter()
            seen = sum([1 async for _ in store.scan(kind)])
            assert seen == records, (kind.KIND, seen)
            figures[label] = records / (time.perf_counter() - started)

        probes = vectors(queries, seed=2)
        started = time.perf_counter()
        await store.knn(Entity, probes[0], 10)
        figures["first knn ms (loads vectors)"] = (time.perf_counter() - started) * 1000
        latencies = []
        for probe in probes:
            started = time.perf_counter()
            hits = await store.knn(Entity, probe, 10)
            latencies.append((time.perf_counter() - started) * 1000)
            assert len(hits) == 10
        for p in (50, 95, 99):
            figures[f"knn p{p} ms"] = float(np.percentile(latencies, p))
        filtered = []
        for probe in probes[: max(1, queries // 10)]:
            started = time.perf_counter()
            await store.knn(Entity, probe, 10, {"type": "place"})
            filtered.append((time.perf_counter() - started) * 1000)
        figures["filtered knn p50 ms"] = float(np.percentile(filtered, 50))
    finally:
        for kind in RECORD_TYPES.values():
            await store.delete(kind, {})
        await store.close()
    print(f"\n{name} ({url.split('@')[-1]})")
    for key, value in figures.items():
        print(f"  {key:32} {value:12,.1f}")
    return figures


def report(results: dict[str, dict[str, float]], records: int, queries: int) -> str:
    names = list(results)
    keys = list(next(iter(results.values())))
    lines = [
        "# Store benchmark",
        "",
        f"{records:,} chunks and {records:,} entities ({DIM}-d vectors), batches of {BATCH}; "
        f"{queries:,} KNN queries (k=10). Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs (shared), {platform.machine()}.",
        "Produced by `benchmarks/stores.py`.",
        "",
        "| figure | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    for key in keys:
        lines.append(f"| {key} | " + " | ".join(f"{results[n][key]:,.1f}" for n in names) + " |")
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--no-report", action="store_true", help="print only")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        results["sqlite"] = await run_backend("sqlite", url, args.records, args.queries)
    for name, variable in (
        ("mysql", "COMPENDIUM_TEST_MYSQL_URL"),
        ("elasticsearch", "COMPENDIUM_TEST_ES_URL"),
    ):
        if os.environ.get(variable):
            results[name] = await run_backend(
                name, os.environ[variable], args.records, args.queries
            )
    if not args.no_report:
        REPORT.parent.mkdir(parents=True, exist_ok=True)
        REPORT.write_text(report(results, args.records, args.queries), encoding="utf-8")
        print(f"\nreport: {REPORT}")


if __name__ == "__main__":
    asyncio.run(main())
