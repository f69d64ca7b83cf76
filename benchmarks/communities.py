"""Time and peak memory of topic communities (Leiden on igraph) on synthetic entity graphs up to
1M entities, beside networkx Louvain (what topics used before) at the sizes it can do.

The graph is seeded: communities of ~100 entities, each entity tied to ~3 others, 90% of ties
inside its community; weights 1-5. Each size and method runs in a fresh process so that peak
memory (max RSS) is that run's alone; a run is cut at --timeout seconds. Prints a table and
writes benchmarks/reports/communities.md.

    python -m benchmarks.communities [--sizes 10000 100000 1000000] [--whole 1000000] [--igraph 1000000]
                                     [--louvain 10000 100000]

A report's hand-written "## Findings" section is kept when the table is written again.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.findings import kept_findings

REPORT = Path(__file__).parent / "reports" / "communities.md"
SEED = 20261201
COMMUNITY = 100
DEGREE = 6  # ~3 relations per entity, as the PostgreSQL manual compiles to (40k relations, 14k entities)
INSIDE = 0.9


def synthetic_graph(n: int) -> tuple[list[str], list[tuple[str, str, float]], np.ndarray]:
    """Entity ids, weighted edges and each entity's planted community."""
    rng = np.random.default_rng(SEED)
    home = rng.integers(0, max(1, n // COMMUNITY), size=n)
    order = np.argsort(home, kind="stable")
    starts = np.searchsorted(home[order], np.arange(max(1, n // COMMUNITY) + 1))
    m = n * DEGREE // 2
    src = rng.integers(0, n, size=m)
    inside = rng.random(m) < INSIDE
    c = home[src]
    lo, hi = starts[c], starts[c + 1]
    same = order[lo + (rng.random(m) * np.maximum(hi - lo, 1)).astype(np.int64)]
    dst = np.where(inside, same, rng.integers(0, n, size=m))
    weight = rng.integers(1, 6, size=m)
    names = [f"e{i:07d}" for i in range(n)]
    edges = [(names[a], names[b], float(w)) for a, b, w in zip(src.tolist(), dst.tolist(), weight.tolist(), strict=True)]
    return names, edges, home


def _one(n: int, method: str) -> dict:
    names, edges, home = synthetic_graph(n)
    cpu0, t0 = time.process_time(), time.perf_counter()
    if method in ("leiden", "leiden-whole"):
        from compendium.graph.communities import WeightedGraph, find_communities
        from compendium.templates.schema import TopicSettings
        graph = WeightedGraph(names, edges)
        built = time.perf_counter() - t0
        # As topics are found (oversized communities partitioned again), or in one pass only.
        max_size = TopicSettings().max_size if method == "leiden" else None
        groups = find_communities(graph, (), min_size=3, max_topics=10**9, max_size=max_size)
    elif method == "igraph":
        # igraph's own C Leiden, for comparison: not what topics use (its seed is a global).
        import random

        import igraph

        from compendium.graph.communities import WeightedGraph
        graph = WeightedGraph(names, edges)
        built = time.perf_counter() - t0
        igraph.set_random_number_generator(random.Random(7))
        g = igraph.Graph(n=len(graph.nodes), edges=graph.edges)
        g.es["weight"] = graph.weights
        found = g.community_leiden(objective_function="modularity", weights="weight", n_iterations=2)
        groups = [[graph.nodes[i] for i in c] for c in found if len(c) >= 3]
    else:
        import networkx as nx
        graph = nx.Graph()
        graph.add_nodes_from(names)
        for a, b, w in edges:
            if a != b:
                graph.add_edge(a, b, weight=w)
        built = time.perf_counter() - t0
        found = nx.community.louvain_communities(graph, weight="weight", resolution=1.0, seed=7)
        groups = [sorted(g) for g in found if len(g) >= 3]
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    # Agreement with the planted communities: share of entities whose community's majority
    # planted label is their own.
    index = {name: i for i, name in enumerate(names)}
    agree = 0
    for g in groups:
        labels = home[[index[x] for x in g]]
        agree += int(np.bincount(labels).max())
    return {"n": n, "method": method, "edges": len(edges), "build_s": round(built, 2),
            "total_s": round(wall, 2), "cpu_s": round(cpu, 2), "communities": len(groups),
            "planted_agreement": round(agree / n, 3),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def _run(n: int, method: str, timeout: float) -> dict:
    load = os.getloadavg()[0]
    try:
        out = subprocess.run([sys.executable, "-m", "benchmarks.communities", "--one", str(n), method],
                             capture_output=True, text=True, timeout=timeout, check=True,
                             cwd=Path(__file__).parents[1])
        row = json.loads(out.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        row = {"n": n, "method": method, "total_s": f"> {timeout:.0f} (cut)"}
    row["load"] = round(load, 1)
    return row


COLUMNS = ("n", "method", "load", "edges", "build_s", "total_s", "cpu_s", "peak_mib", "communities",
           "planted_agreement")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--louvain", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--whole", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--igraph", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(int(args.one[0]), args.one[1])))
        return
    rows = [_run(n, "leiden", args.timeout) for n in args.sizes]
    rows += [_run(n, "leiden-whole", args.timeout) for n in args.whole]
    rows += [_run(n, "igraph", args.timeout) for n in args.igraph]
    rows += [_run(n, "louvain", args.timeout) for n in args.louvain]
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(str(row.get(c, "–")) for c in COLUMNS) + " |")
        print(lines[-1], flush=True)
    if args.no_write:
        return
    findings = kept_findings(REPORT)
    REPORT.write_text("\n".join([
        "# Topic communities at scale",
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other engineers' jobs "
        f"(`load` is the 1-minute load average as each run started), Python {platform.python_version()}.",
        "Each run is a fresh process; `peak_mib` is its max RSS, which includes the synthetic graph "
        "itself (ids and edge tuples). `build_s` turns the edge list into the graph; `total_s` "
        "includes it. `leiden` is `compendium.graph.communities.find_communities` as topics run it "
        "(leidenalg RBConfiguration, resolution 1, seed 7, 2 iterations; a community past "
        "`plan.topics.max_size`, 60 members, partitioned again on its own edges, up to 3 times); "
        "`leiden-whole` is the first pass alone; `louvain` is networkx "
        "`louvain_communities` as topics used before; `igraph` is igraph's own C "
        "`community_leiden` (modularity), for comparison only.",
        "",
        f"Graph: communities of ~{COMMUNITY} entities, {DEGREE / 2:.1f} edges per entity on average "
        f"({INSIDE:.0%} inside the planted community), seed {SEED}. `planted_agreement` is the share "
        "of entities in a found community (size ≥ 3) whose majority planted label is their own.",
        "",
        *lines,
        "",
        "Reproduce: `.venv/bin/python -m benchmarks.communities`.",
        "",
        findings,
    ]).rstrip() + "\n")


if __name__ == "__main__":
    main()
