"""Tier-2 candidate pairs: recall against a brute-force scan, and exactness of what is returned."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from compendium.engines.offline_embedder import OfflineEmbedder
from compendium.phases.candidates import candidate_pairs


def brute_force(v: np.ndarray, threshold: float) -> set[tuple[int, int]]:
    sims = v @ v.T
    a, b = np.nonzero(np.triu(sims >= threshold, 1))
    return set(zip(a.tolist(), b.tolist(), strict=True))


def check(v: np.ndarray, threshold: float, **kwargs) -> float:
    a, b = candidate_pairs(v, threshold, **kwargs)
    got = set(zip(a.tolist(), b.tolist(), strict=True))
    truth = brute_force(v, threshold)
    assert (a < b).all()
    assert len(got) == len(a)  # no pair twice
    assert got <= truth  # verified exactly: nothing below the threshold
    return len(got & truth) / max(1, len(truth))


def name_like(n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    heads = "async cached cloud secure shared sparse stream static virtual global local remote".split()
    mids = "cache queue index token session ledger shard replica schema vault socket kernel".split()
    tails = "manager service engine broker router scheduler gateway writer reader monitor".split()
    names = [" ".join(w).title() for w in itertools.product(heads, mids, tails)]
    rng.shuffle(names)
    out = names[:n]
    for name in out[: n // 5]:  # near-duplicates: a typo, a plural
        i = int(rng.integers(2, len(name) - 2))
        out.append(name[:i] + name[i + 1 :] if rng.random() < 0.5 else name + "s")
    return out


@pytest.mark.parametrize("threshold", [0.85, 0.95])
async def test_recall_on_name_vectors_when_cells_are_used(threshold):
    vectors = await OfflineEmbedder().embed(name_like(1200))
    # A small leaf and few probes force the index path (the exact path would trivially find all).
    recall = check(vectors, threshold, leaf_size=32, probes=4)
    assert recall >= 0.99


def clustered(n: int, seed: int, spread: float = 0.25) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n // 40, 64))
    v = centres[rng.integers(len(centres), size=n)] + spread * rng.standard_normal((n, 64))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def test_recall_on_clustered_random_vectors():
    assert check(clustered(3000, 5), 0.9, leaf_size=64, probes=4) >= 0.99


def test_two_level_index_keeps_recall_without_comparing_all_pairs():
    # 6000 vectors in cells of 16 make 375 cells: enough for coarse groups over fine cells.
    v = clustered(6000, 9, spread=0.35)
    clock: dict[str, float] = {}
    assert check(v, 0.85, leaf_size=16, probes=8, timings=clock) >= 0.99
    assert clock["comparisons"] < 0.1 * len(v) ** 2 / 2
    assert clock["partition"] > 0 and clock["verify"] > 0


def test_one_probe_misses_pairs_that_more_probes_find():
    # The probes are what recall rests on: with one, pairs split by a cell border are lost.
    v = clustered(6000, 9, spread=0.35)
    assert check(v, 0.85, leaf_size=16, probes=1) < check(v, 0.85, leaf_size=16, probes=8)


def test_small_inputs_are_scanned_exactly_and_ordered():
    rng = np.random.default_rng(2)
    v = rng.standard_normal((300, 16)).astype(np.float32)
    v[7] = v[3]
    v[200] = v[3] * 1.0001
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    a, b = candidate_pairs(v, 0.999)
    assert {(3, 7), (3, 200), (7, 200)} <= set(zip(a.tolist(), b.tolist(), strict=True))
    assert check(v, 0.6) == 1.0
    pairs = list(zip(a.tolist(), b.tolist(), strict=True))
    assert pairs == sorted(pairs)


def test_no_pairs_from_fewer_than_two_vectors():
    a, b = candidate_pairs(np.zeros((1, 8), dtype=np.float32), 0.5)
    assert len(a) == len(b) == 0
    a, b = candidate_pairs(np.zeros((0, 8), dtype=np.float32), 0.5)
    assert len(a) == 0
