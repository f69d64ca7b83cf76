"""Small graphs with a known structure for the outline tests."""

from __future__ import annotations

import random
from itertools import combinations

from compendium.outline import Leaf


def cliques(count: int, size: int, *, seed: int = 3, bridges: int = 1) -> tuple[list[list[str]], list[tuple[str, str, float]]]:
    """`count` dense groups of `size` subjects, each tied to the next by a few weak edges."""
    rng = random.Random(seed)
    groups = [[f"c{g:02d}m{i:03d}" for i in range(size)] for g in range(count)]
    edges = []
    for group in groups:
        for a, b in combinations(group, 2):
            if rng.random() < 0.5:
                edges.append((a, b, 3.0))
    for g in range(count):
        for _ in range(bridges):
            edges.append((rng.choice(groups[g]), rng.choice(groups[(g + 1) % count]), 1.0))
    return groups, edges


def leaves_of(groups: list[list[str]], paths: dict[str, list[tuple[str, str]]] | None = None) -> list[Leaf]:
    names = {}
    for g, group in enumerate(groups):
        for i, s in enumerate(group):
            names[s] = f"Subject {g}-{i}"
    return [Leaf(s, names[s], float(len(s)), (paths or {}).get(s, []), (n,))
            for n, s in enumerate(x for group in groups for x in group)]
