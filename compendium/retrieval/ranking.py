"""Pure scoring for retrieval: similarity x graph importance, graph expansion, rank fusion."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

# How an entity's similarity to the question and its graph importance (PageRank, max 1.0)
# combine. Measured on the PostgreSQL manual (benchmarks/reports/retrieval.md); the default
# is the one that won there.
RANKINGS: dict[str, Callable[[float, float], float]] = {
    "similarity": lambda sim, rank: sim,
    "similarity*pagerank": lambda sim, rank: sim * rank,
    "similarity*(1+pagerank)": lambda sim, rank: sim * (1.0 + rank),
    "similarity*sqrt(pagerank)": lambda sim, rank: sim * math.sqrt(rank),
}
DEFAULT_RANKING = "similarity*(1+pagerank)"
RRF_K = 60  # the usual constant of reciprocal rank fusion: top ranks matter, long tails little


def normalised(scores: dict[str, float]) -> dict[str, float]:
    """Scores divided by the best one (a backend's BM25 is only comparable within one answer)."""
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {}


def strength_weight(strength: int, max_strength: int) -> float:
    """A relation's pull in (0, 1]: square root, so one strong edge does not drown the rest."""
    return math.sqrt(max(strength, 1) / max(max_strength, 1))


def expand(
    seeds: dict[str, float],
    neighbours: dict[str, list[tuple[int, str, str]]],
    max_strength: int,
    *,
    decay: float = 0.5,
) -> dict[str, float]:
    """One hop out from `seeds` along each one's strongest relations ((strength, other, id),
    already bounded per node): a neighbour gets the best of seed score x decay x strength
    weight. Returns the neighbours' scores (seeds themselves are not in it)."""
    found: dict[str, float] = {}
    for seed, score in seeds.items():
        for strength, other, _ in neighbours.get(seed, ()):
            if other in seeds:
                continue
            pulled = score * decay * strength_weight(strength, max_strength)
            if pulled > found.get(other, 0.0):
                found[other] = pulled
    return found


def fuse(lists: Sequence[tuple[Sequence[str], float]], k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion: sum over ranked lists of weight / (k + rank), rank from 1."""
    fused: dict[str, float] = {}
    for ids, weight in lists:
        for rank, item in enumerate(ids, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return fused


def ranked(scores: dict[str, float], limit: int | None = None) -> list[str]:
    """Ids best first (ties by id, so answers are stable)."""
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return order if limit is None else order[:limit]


def pagerank(
    nodes: Sequence[str], edges: Sequence[tuple[str, str, float]], *, damping: float = 0.85,
    iterations: int = 100, tolerance: float = 1e-8,
) -> dict[str, float]:
    """PageRank of an undirected weighted graph by power iteration over edge arrays (numpy,
    linear in edges per step), scaled so the most important node has 1.0."""
    import numpy as np

    index = {node: i for i, node in enumerate(nodes)}
    n = len(index)
    if n == 0:
        return {}
    pairs = [(index[a], index[b], float(w)) for a, b, w in edges if a in index and b in index and a != b]
    src = np.array([p[0] for p in pairs] + [p[1] for p in pairs], dtype=np.int64)
    dst = np.array([p[1] for p in pairs] + [p[0] for p in pairs], dtype=np.int64)
    weight = np.array([p[2] for p in pairs] * 2, dtype=np.float64)
    out = np.bincount(src, weights=weight, minlength=n)
    share = np.divide(weight, out[src], out=np.zeros_like(weight), where=out[src] > 0)
    dangling = out == 0
    rank = np.full(n, 1.0 / n)
    for _ in range(iterations):
        spread = np.bincount(dst, weights=rank[src] * share, minlength=n)
        new = (1 - damping) / n + damping * (spread + rank[dangling].sum() / n)
        if np.abs(new - rank).sum() < tolerance:
            rank = new
            break
        rank = new
    top = float(rank.max()) or 1.0
    return {node: round(float(rank[i]) / top, 5) for node, i in index.items()}
