"""Speed of the offline engine's two inner loops: embedding short names, and extracting a chunk.

Printed and written to benchmarks/reports/offline_speed.md:
- the offline embedder's short names per second (100,000 random names of 1-3 words), wall time;
- offline extraction's chunks per second of CPU time, on a three-times repeated passage of
  technical prose (or on the paragraphs of a text file given with --text).
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


def render(names: int, names_per_s: float, chars: int, chunks_per_s: float, runs: int, source: str) -> str:
    return "\n".join([
        "# Offline engine: embedding and extraction speed",
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
        "Reproduce: `.venv/bin/python benchmarks/offline_speed.py` "
        "(`--names N`, `--seconds S`, `--text FILE` to extract from a file of your own).",
        "",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds of extraction to time")
    parser.add_argument("--text", type=Path, help="a text file to extract from instead of the built-in passage")
    parser.add_argument("--no-write", action="store_true", help="print only; leave the report file alone")
    args = parser.parse_args()
    text = args.text.read_text(encoding="utf-8") if args.text else PASSAGE * 3
    source = args.text.name if args.text else "built-in passage ×3"
    names_per_s = embedder_rate(args.names)
    chunks_per_s, runs = extraction_rate(text, args.seconds)
    report = render(args.names, names_per_s, len(text), chunks_per_s, runs, source)
    print(report)
    if not args.no_write:
        REPORT.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
