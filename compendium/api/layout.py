"""A fast force-directed layout in numpy for the canvas (thousands of nodes, tens of thousands
of edges): springs along edges, repulsion from every node when few, from grid cells when many."""

from __future__ import annotations

import numpy as np

EXACT_UP_TO = 400  # nodes; above this, repulsion comes from a grid of cell centroids
GRID = 24


def force_layout(
    n: int, edges: np.ndarray, *, weights: np.ndarray | None = None, iterations: int = 30,
    seed: int = 7,
) -> np.ndarray:
    """Positions (n, 2) in [-1, 1] for nodes 0..n-1 joined by `edges` (m, 2) of indexes.

    Deterministic for the same input. O(iterations * (n * min(n, GRID²) + m)).
    """
    if n == 0:
        return np.zeros((0, 2), dtype=np.float32)
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1.0, 1.0, size=(n, 2))
    if n == 1:
        return np.zeros((1, 2), dtype=np.float32)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    w = np.ones(len(edges)) if weights is None else np.log1p(np.asarray(weights, dtype=float))
    k = np.sqrt(4.0 / n)  # ideal distance for n nodes in a 2x2 square
    temperature = 0.2
    for _ in range(iterations):
        shift = _repulsion(pos, k)
        if len(edges):
            delta = pos[edges[:, 0]] - pos[edges[:, 1]]
            dist = np.linalg.norm(delta, axis=1) + 1e-9
            pull = (delta * (dist / k * w)[:, None])
            np.add.at(shift, edges[:, 0], -pull)
            np.add.at(shift, edges[:, 1], pull)
        length = np.linalg.norm(shift, axis=1) + 1e-9
        pos += shift / length[:, None] * np.minimum(length, temperature)[:, None]
        pos -= pos.mean(axis=0)
        temperature *= 0.92
    span = np.abs(pos).max() or 1.0
    return (pos / span).astype(np.float32)


def _repulsion(pos: np.ndarray, k: float) -> np.ndarray:
    if len(pos) <= EXACT_UP_TO:
        delta = pos[:, None, :] - pos[None, :, :]
        dist2 = (delta**2).sum(axis=2) + 1e-6
        return (delta * (k * k / dist2)[:, :, None]).sum(axis=1)
    # Far-field approximation: each node is pushed by the centroids of occupied grid cells,
    # weighted by how many nodes each holds.
    low, high = pos.min(axis=0), pos.max(axis=0)
    cell = np.floor((pos - low) / (high - low + 1e-9) * GRID).clip(0, GRID - 1).astype(np.int64)
    index = cell[:, 0] * GRID + cell[:, 1]
    counts = np.bincount(index, minlength=GRID * GRID).astype(float)
    sums = np.zeros((GRID * GRID, 2))
    np.add.at(sums, index, pos)
    occupied = counts > 0
    centres, mass = sums[occupied] / counts[occupied, None], counts[occupied]
    shift = np.zeros_like(pos)
    for start in range(0, len(pos), 2048):
        part = pos[start : start + 2048]
        delta = part[:, None, :] - centres[None, :, :]
        dist2 = (delta**2).sum(axis=2) + 1e-4
        shift[start : start + 2048] = (delta * (k * k * mass / dist2)[:, :, None]).sum(axis=1)
    return shift
