"""Pure scoring for retrieval: similarity x graph importance, graph expansion, rank fusion."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

# How an entity's similarity to the question and its importance in the graph (its degree over
# the largest degree among the question's subjects, at most 1.0) combine. The default won on the
# PostgreSQL manual, when the importance was PageRank; it orders entities, not passages.
RANKINGS: dict[str, Callable[[float, float], float]] = {
    "similarity": lambda sim, rank: sim,
    "similarity*pagerank": lambda sim, rank: sim * rank,
    "similarity*(1+pagerank)": lambda sim, rank: sim * (1.0 + rank),
    "similarity*sqrt(pagerank)": lambda sim, rank: sim * math.sqrt(rank),
}
DEFAULT_RANKING = "similarity*(1+pagerank)"
RRF_K = 60  # the usual constant of reciprocal rank fusion: top ranks matter, long tails little


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
