"""Tier-2 candidate pairs: every pair of vectors above a cosine threshold, without an all-pairs loop.

The method is an inverted-file index (IVF) searched with itself. Vectors are cut into cells of
about `leaf_size` by spherical k-means; every vector is stored in its nearest cell and searches
its `probes` nearest cells, so a pair is found when either vector's cell is among the other's
probes. Every pair is then verified exactly by a matrix product, so precision is 1 and only
recall is approximate (measured against an exact scan in benchmarks/reduce.py and tests).

Costs stay near linear in n: the cells are found through a two-level quantiser (about sqrt(cells)
coarse groups, each holding its own fine centroids, and a vector compares itself only with the
fine centroids of its few nearest groups), and verification costs n * probes * leaf_size dot
products. Memory is bounded by working in blocks of rows.
"""

from __future__ import annotations

import math
import time
from contextlib import AbstractContextManager

import numpy as np

_BLOCK = 1 << 24  # entries of one temporary similarity matrix (64 MB of float32)
_ROWS = 8192  # rows per block of a product with centroids, to bound temporary memory
_SAMPLE_PER_CELL = 24  # k-means trains on this many sampled vectors per centroid
_FLAT_BELOW = 256  # with fewer cells than this, one level of centroids is cheap enough
_COARSE_PROBES = 10  # coarse groups whose fine centroids a vector compares itself with
_ASSIGN_ROWS = 1 << 16  # vectors assigned to cells at a time


def candidate_pairs(
    vectors: np.ndarray,
    threshold: float,
    *,
    seed: int = 0,
    leaf_size: int = 128,
    probes: int = 24,
    timings: dict[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i < j, as two int64 arrays sorted by i then j) with cosine >= threshold.

    `vectors` are rows of unit length. `leaf_size` is the mean number of vectors in a cell (and
    below 4 * leaf_size vectors everything is compared exactly); `probes` is how many nearest
    cells each vector searches. If `timings` is given, seconds spent building the index and
    finding each vector's cells ("partition") and verifying pairs ("verify") are added to it,
    and the number of dot products computed in verification ("comparisons").
    """
    v = np.ascontiguousarray(vectors, dtype=np.float32)
    n = len(v)
    clock = timings if timings is not None else {}
    clock.setdefault("partition", 0.0)
    clock.setdefault("verify", 0.0)
    empty = np.empty(0, dtype=np.int64)
    if n < 2:
        return empty, empty.copy()
    threshold = float(threshold)
    with _one_blas_thread():
        codes = _pairs(v, threshold, seed, leaf_size, probes, clock)
    codes = np.sort(codes)  # then each once: np.unique's plain form imports numpy.ma (~10-40 ms)
    codes = codes[np.concatenate(([True], codes[1:] != codes[:-1]))] if len(codes) else codes
    return codes // n, codes % n


def _one_blas_thread() -> AbstractContextManager[object]:
    """BLAS on one thread: these products are many and small, and a second thread spinning on
    each cost 2.5-3x the CPU and (on a machine shared with other work) the wall time too
    (benchmarks/reduce.py at 10k and 100k names). The results are the same either way."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _pairs(v: np.ndarray, threshold: float, seed: int, leaf_size: int, probes: int,
           clock: dict[str, float]) -> np.ndarray:
    """Codes i * n + j of the pairs found (unsorted, perhaps repeated)."""
    n = len(v)
    if n <= 4 * leaf_size:
        started = time.perf_counter()
        codes = _scan_all(v, threshold)
        clock["verify"] += time.perf_counter() - started
    else:
        started = time.perf_counter()
        rng = np.random.default_rng(seed)
        centroids, group_bounds, coarse = _train(v, max(2, math.ceil(n / leaf_size)), rng)
        cells = _nearest_cells(v, centroids, group_bounds, coarse, max(1, probes))
        middle = time.perf_counter()
        clock["partition"] += middle - started
        codes, compared = _verify(v, cells, len(centroids), threshold)
        clock["comparisons"] = clock.get("comparisons", 0.0) + compared
        clock["verify"] += time.perf_counter() - middle
    return codes


def _kmeans(x: np.ndarray, k: int, rng: np.random.Generator, iterations: int = 5) -> np.ndarray:
    """Spherical k-means on the rows of x (a sample): good enough cells, cheap to train."""
    k = min(k, len(x))
    centroids = x[rng.choice(len(x), k, replace=False)].copy()
    if k == 1:
        return centroids
    for _ in range(iterations):
        nearest = np.concatenate([(x[s : s + _ROWS] @ centroids.T).argmax(axis=1) for s in range(0, len(x), _ROWS)])
        order = np.argsort(nearest, kind="stable")
        counts = np.bincount(nearest, minlength=k)
        alive = counts > 0
        sums = np.empty_like(centroids)
        # Sums of each cell's rows in one pass over the sorted rows (np.add.at is far slower).
        sums[alive] = np.add.reduceat(x[order], (np.cumsum(counts) - counts)[alive], axis=0)
        sums[~alive] = x[rng.choice(len(x), int((~alive).sum()))]  # reseed empty cells
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return centroids.astype(np.float32)


def _train(v: np.ndarray, cells: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fine centroids sorted by coarse group, the group boundaries in them, and coarse centroids.

    Training is hierarchical (coarse k-means, then k-means inside each coarse group on its share
    of the sample), so it costs about sample * (sqrt(cells) + cells / groups) per iteration.
    """
    sample = v[np.sort(rng.choice(len(v), min(len(v), _SAMPLE_PER_CELL * cells), replace=False))]
    groups = 1 if cells < _FLAT_BELOW else math.ceil(math.sqrt(cells))
    coarse = _kmeans(sample, groups, rng)
    group_of = _top(sample, coarse, 1)[0][:, 0]
    fine: list[np.ndarray] = []
    bounds = [0]
    share = np.bincount(group_of, minlength=len(coarse)) / len(sample)
    for g in range(len(coarse)):
        members = sample[group_of == g]
        if len(members):
            fine.append(_kmeans(members, max(1, round(cells * share[g])), rng))
        bounds.append(bounds[-1] + (len(fine[-1]) if len(members) else 0))
    return np.concatenate(fine), np.asarray(bounds, dtype=np.int64), coarse


def _top(x: np.ndarray, centroids: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, similarities) of each row's p most similar centroids, in blocks of rows."""
    p = min(p, len(centroids))
    index = np.empty((len(x), p), dtype=np.int64)
    sims = np.empty((len(x), p), dtype=np.float32)
    rows = max(1, min(_ROWS, _BLOCK // max(1, len(centroids))))
    for s in range(0, len(x), rows):
        block = x[s : s + rows] @ centroids.T
        m = block.shape[1]  # the p largest sit at the end: no negated copy of the block needed
        top = block.argmax(axis=1)[:, None] if p == 1 else np.argpartition(block, m - p, axis=1)[:, m - p :]
        index[s : s + rows] = top
        sims[s : s + rows] = np.take_along_axis(block, top, axis=1)
    return index, sims


def _nearest_cells(
    v: np.ndarray, centroids: np.ndarray, group_bounds: np.ndarray, coarse: np.ndarray, probes: int
) -> np.ndarray:
    """(n, probes) fine cells per vector, nearest first, found among its nearest coarse groups."""
    cells = np.empty((len(v), probes), dtype=np.int64)
    for s in range(0, len(v), _ASSIGN_ROWS):  # bounded memory: one block of vectors at a time
        cells[s : s + _ASSIGN_ROWS] = _nearest_cells_block(v[s : s + _ASSIGN_ROWS], centroids, group_bounds, coarse, probes)
    return cells


def _nearest_cells_block(
    v: np.ndarray, centroids: np.ndarray, group_bounds: np.ndarray, coarse: np.ndarray, probes: int
) -> np.ndarray:
    """_nearest_cells for one block of vectors."""
    n = len(v)
    groups, _ = _top(v, coarse, _COARSE_PROBES)
    width = groups.shape[1]
    # Each vector's best cells inside each of its groups go to their own slots; one selection
    # over all slots at the end is cheaper than merging after every group.
    slot_sim = np.full((n, width * probes), -np.inf, dtype=np.float32)
    slot_cell = np.full((n, width * probes), -1, dtype=np.int64)
    flat = groups.ravel()
    order = np.argsort(flat, kind="stable")
    starts = np.searchsorted(flat[order], np.arange(len(coarse) + 1))
    for g in np.flatnonzero(np.diff(starts)):
        lo, hi = int(group_bounds[g]), int(group_bounds[g + 1])
        if hi == lo:
            continue
        rows, slot = np.divmod(order[starts[g] : starts[g + 1]], width)  # a vector once per group
        index, sims = _top(v[rows], centroids[lo:hi], probes)
        columns = slot[:, None] * probes + np.arange(index.shape[1])
        slot_sim[rows[:, None], columns] = sims
        slot_cell[rows[:, None], columns] = index + lo
    if width > 1:
        keep = np.argpartition(slot_sim, width * probes - probes, axis=1)[:, -probes:]
        slot_sim, slot_cell = np.take_along_axis(slot_sim, keep, axis=1), np.take_along_axis(slot_cell, keep, axis=1)
    return np.take_along_axis(slot_cell, np.argsort(-slot_sim, axis=1, kind="stable"), axis=1)


def _verify(v: np.ndarray, cells: np.ndarray, n_cells: int, threshold: float) -> tuple[np.ndarray, int]:
    """(codes i * n + j with i < j and cosine >= threshold, dot products computed).

    A vector is stored in its nearest cell only and searches all its cells, so each cell's
    stored vectors are compared with every vector that searches it.
    """
    n = len(v)
    home = cells[:, 0]
    stored = np.argsort(home, kind="stable")
    stored_at = np.searchsorted(home[stored], np.arange(n_cells + 1))
    flat = cells.ravel()
    flat = np.where(flat >= 0, flat, n_cells)  # fewer cells than probes leaves -1 slots: last
    searches = np.argsort(flat, kind="stable")
    searcher = searches // cells.shape[1]
    search_at = np.searchsorted(flat[searches], np.arange(n_cells + 1))
    found: list[np.ndarray] = []
    compared = 0
    for c in range(n_cells):
        members = stored[stored_at[c] : stored_at[c + 1]]
        if len(members) == 0:
            continue
        queries = searcher[search_at[c] : search_at[c + 1]]
        target = v[members].T
        compared += len(queries) * len(members)
        step = max(1, _BLOCK // len(members))
        for s in range(0, len(queries), step):
            q = queries[s : s + step]
            # flatnonzero then divmod: several times faster than nonzero on a 2-d mask
            rows, cols = np.divmod(np.flatnonzero(v[q] @ target >= threshold), len(members))
            a, b = q[rows], members[cols]
            keep = a != b
            if keep.any():
                a, b = a[keep], b[keep]
                found.append(np.minimum(a, b) * n + np.maximum(a, b))
    return (np.concatenate(found) if found else np.empty(0, dtype=np.int64)), compared


def _scan_all(v: np.ndarray, threshold: float) -> np.ndarray:
    """Exact: every pair, by blocks of a matrix product (only for small inputs)."""
    n = len(v)
    found: list[np.ndarray] = []
    step = max(1, min(n, _BLOCK // n))
    for s in range(0, n, step):
        rows, cols = np.divmod(np.flatnonzero(v[s : s + step] @ v[s:].T >= threshold), n - s)
        keep = cols > rows  # columns start at s: the diagonal sits at cols == rows
        if keep.any():
            found.append((rows[keep] + s) * n + (cols[keep] + s))
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)
