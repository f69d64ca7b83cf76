"""Tier-2 candidate pairs: every pair of vectors above a cosine threshold, without an all-pairs loop.

The method is an inverted-file partition (as in IVF indexes): spherical k-means cells sized so
that an exact matrix product inside a cell is cheap, with every vector placed in its `probes`
nearest cells so that a close pair split by a cell border still meets in one of them. Pairs
are then verified exactly, so precision is 1 and only recall is approximate (measured against
an exact scan in benchmarks/reduce.py). Verification grows as n * leaf_size; assigning vectors
to cells as n * cells = n^2 / leaf_size, a small constant below ~1M vectors (a two-level
coarse quantiser would make it linear past that).
"""

from __future__ import annotations

import math
import time

import numpy as np

_ROWS = 4096  # rows per block when scanning or assigning, to bound temporary memory
_MAX_DEPTH = 3  # a cell k-means cannot split (near-identical vectors) is scanned exactly


def candidate_pairs(
    vectors: np.ndarray,
    threshold: float,
    *,
    seed: int = 0,
    leaf_size: int = 1024,
    probes: int = 3,
    partitions: int = 1,
    timings: dict[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i < j, as two int64 arrays sorted by i then j) with cosine >= threshold.

    `vectors` are rows of unit length. `leaf_size` is the cell size below which a cell is
    compared exactly; `probes` is how many nearest cells each vector joins; `partitions` is
    how many independent partitions are searched (each misses different pairs). If `timings` is
    given, seconds spent partitioning ("partition") and verifying ("verify") are added to it.
    """
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    n = len(v)
    empty = np.empty(0, dtype=np.int64)
    if n < 2:
        return empty, empty.copy()
    found: list[np.ndarray] = []
    clock = timings if timings is not None else {}
    clock.setdefault("partition", 0.0)
    clock.setdefault("verify", 0.0)
    started, verified_before = time.perf_counter(), clock["verify"]
    rng = np.random.default_rng(seed)
    for _ in range(max(1, partitions)):
        _join(v, np.arange(n, dtype=np.int64), float(threshold), rng, found, leaf_size, max(1, probes), 0, clock)
    codes = np.unique(np.concatenate(found)) if found else empty
    clock["partition"] += time.perf_counter() - started - (clock["verify"] - verified_before)
    return codes // n, codes % n


def _join(
    v: np.ndarray,
    idx: np.ndarray,
    threshold: float,
    rng: np.random.Generator,
    found: list[np.ndarray],
    leaf_size: int,
    probes: int,
    depth: int,
    clock: dict[str, float],
) -> None:
    if len(idx) <= 2 * leaf_size or depth >= _MAX_DEPTH:
        _scan(v, idx, threshold, found, clock)
        return
    cells = max(2, math.ceil(probes * len(idx) / leaf_size))
    centroids = _kmeans(v[idx], cells, rng)
    member, cell = _assign(v, idx, centroids, min(probes, cells))
    order = np.argsort(cell, kind="stable")
    member, cell = member[order], cell[order]
    bounds = np.flatnonzero(np.diff(cell)) + 1
    for part in np.split(member, bounds):
        if len(part) < 2:
            continue
        if len(part) >= 0.9 * len(idx):  # k-means did not split: nothing to gain by recursing
            _scan(v, part, threshold, found, clock)
        else:
            _join(v, part, threshold, rng, found, leaf_size, probes, depth + 1, clock)


def _kmeans(x: np.ndarray, k: int, rng: np.random.Generator, iterations: int = 5) -> np.ndarray:
    """Spherical k-means on a sample: good enough cells, cheap to train."""
    sample = x[rng.choice(len(x), min(len(x), 24 * k), replace=False)]
    centroids = sample[rng.choice(len(sample), k, replace=False)].copy()
    for _ in range(iterations):
        nearest = np.concatenate(
            [(sample[s : s + _ROWS] @ centroids.T).argmax(axis=1) for s in range(0, len(sample), _ROWS)]
        )
        sums = np.zeros_like(centroids)
        np.add.at(sums, nearest, sample)
        counts = np.bincount(nearest, minlength=k)
        dead = counts == 0  # reseed empty cells on random sample points
        sums[dead] = sample[rng.choice(len(sample), int(dead.sum()))]
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = sums / np.maximum(norms, 1e-12)
    return centroids.astype(np.float32)


def _assign(
    v: np.ndarray, idx: np.ndarray, centroids: np.ndarray, probes: int
) -> tuple[np.ndarray, np.ndarray]:
    """(member, cell) rows: each vector with each of its `probes` nearest cells."""
    members: list[np.ndarray] = []
    cells: list[np.ndarray] = []
    for s in range(0, len(idx), _ROWS):
        block = idx[s : s + _ROWS]
        sims = v[block] @ centroids.T
        rows = np.arange(len(block))
        top = np.empty((len(block), probes), dtype=np.int64)
        for p in range(probes):  # a few argmax passes beat argpartition over thousands of cells
            top[:, p] = sims.argmax(axis=1)
            sims[rows, top[:, p]] = -np.inf
        members.append(np.repeat(block, probes))
        cells.append(top.ravel())
    return np.concatenate(members), np.concatenate(cells)


def _scan(v: np.ndarray, idx: np.ndarray, threshold: float, found: list[np.ndarray], clock: dict[str, float]) -> None:
    """Exact: every pair inside idx, by blocks of a matrix product."""
    started = time.perf_counter()
    idx = np.sort(idx)
    n = len(v)
    sub = v[idx]
    rows_per_block = max(64, min(_ROWS, 2**24 // len(idx)))  # keeps a block's matrix <= 64 MB
    for s in range(0, len(idx), rows_per_block):
        sims = sub[s : s + rows_per_block] @ sub[s:].T
        rows, cols = np.nonzero(sims >= threshold)
        keep = cols > rows  # column offset s..: the diagonal sits at cols == rows
        if keep.any():
            a = idx[rows[keep] + s]
            b = idx[cols[keep] + s]
            found.append(np.minimum(a, b) * n + np.maximum(a, b))
    clock["verify"] += time.perf_counter() - started
