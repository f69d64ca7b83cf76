"""Entity graph layout for the canvas and the exported site's graph view: inside each connected
component every topic community is laid out by forces as an island of its own, the islands are
placed by the relations between them and kept apart; then the components are packed in rows,
largest first, so no space is lost between scattered pieces."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

EXACT_UP_TO = 400  # nodes; above this, repulsion comes from a grid of cell centroids
GRID = 24
MAX_ISLANDS = 400  # communities in one component laid out as islands; more: one force layout


def force_layout(
    n: int, edges: np.ndarray, *, weights: np.ndarray | None = None, iterations: int = 30,
    seed: int = 7, temperature: float = 0.2,
) -> np.ndarray:
    """Positions (n, 2) in [-1, 1] for nodes 0..n-1 joined by `edges` (m, 2) of indexes.

    Deterministic for the same input.
    O(iterations * (n * min(n, GRID²) + m)).
    """
    if n == 0:
        return np.zeros((0, 2), dtype=np.float32)
    if n == 1:
        return np.zeros((1, 2), dtype=np.float32)
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1.0, 1.0, size=(n, 2))
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    w = np.ones(len(edges)) if weights is None else np.log1p(np.asarray(weights, dtype=float))
    k = np.sqrt(4.0 / n)  # ideal distance for n nodes in a 2x2 square
    # Hubs push harder (repulsion scaled by 1 + degree, as ForceAtlas2 does), so the many
    # neighbours of a hub spread around it instead of piling up in the middle.
    degree = np.bincount(edges.reshape(-1), minlength=n).astype(float) if len(edges) else np.zeros(n)
    mass = (1.0 + degree) / (1.0 + degree).mean()
    for _ in range(iterations):
        shift = _repulsion(pos, k, mass)
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
    return _unit(pos).astype(np.float32)


def _unit(pos: np.ndarray) -> np.ndarray:
    pos = pos - pos.mean(axis=0)
    span = np.abs(pos).max() or 1.0
    return pos / span


def _push(part: np.ndarray, part_mass: np.ndarray, centres: np.ndarray, mass: np.ndarray,
          k: float, floor: float) -> np.ndarray:
    """Sum over centres of k² m_i m_j (p_i - c_j) / |p_i - c_j|², as matrix products (the
    (p, c, 2) array of differences would cost ten times the time)."""
    push = part @ centres.T  # becomes |p - c|², then the push, in place: one array in all
    push *= -2.0
    push += (part**2).sum(axis=1)[:, None]
    push += (centres**2).sum(axis=1)[None, :]
    np.maximum(push, 0.0, out=push)
    push += floor
    np.divide(mass[None, :], push, out=push)
    push *= (k * k * part_mass)[:, None]
    return part * push.sum(axis=1)[:, None] - push @ centres


def _repulsion(pos: np.ndarray, k: float, mass: np.ndarray) -> np.ndarray:
    if len(pos) <= EXACT_UP_TO:
        return _push(pos, mass, pos, mass, k, 1e-6)
    # Far-field approximation: each node is pushed by the centroids of occupied grid cells,
    # weighted by the mass each holds.
    low, high = pos.min(axis=0), pos.max(axis=0)
    cell = np.floor((pos - low) / (high - low + 1e-9) * GRID).clip(0, GRID - 1).astype(np.int64)
    index = cell[:, 0] * GRID + cell[:, 1]
    counts = np.bincount(index, minlength=GRID * GRID).astype(float)
    weight = np.bincount(index, weights=mass, minlength=GRID * GRID)
    sums = np.c_[np.bincount(index, weights=pos[:, 0], minlength=GRID * GRID),
                 np.bincount(index, weights=pos[:, 1], minlength=GRID * GRID)]
    occupied = counts > 0
    centres, cell_mass = sums[occupied] / counts[occupied, None], weight[occupied]
    return _push(pos, mass, centres, cell_mass, k, 1e-4)


def components(n: int, edges: np.ndarray) -> np.ndarray:
    """Component label of each node (union-find with path halving), labels 0..c-1."""
    parent = np.arange(n)

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in np.asarray(edges, dtype=np.int64).reshape(-1, 2):
        ra, rb = find(int(a)), find(int(b))
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    roots = np.array([find(i) for i in range(n)], dtype=np.int64)
    _, labels = np.unique(roots, return_inverse=True)
    return labels


def graph_layout(
    n: int, edges: np.ndarray, *, weights: np.ndarray | None = None,
    groups: np.ndarray | None = None, seed: int = 7,
) -> np.ndarray:
    """Positions (n, 2) in [-1, 1]: components laid out apart and packed; inside a component
    each community (`groups`, an int per node such as its topic; -1 for none) is laid out on
    its own as an island, and the islands are placed by the relations between them."""
    if n == 0:
        return np.zeros((0, 2), dtype=np.float32)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    weights = np.ones(len(edges)) if weights is None else np.asarray(weights, dtype=float)
    groups = np.full(n, -1, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    label = components(n, edges)
    count = int(label.max()) + 1
    edge_label = label[edges[:, 0]] if len(edges) else np.zeros(0, dtype=np.int64)
    placed: list[tuple[np.ndarray, np.ndarray, float]] = []  # members, positions, radius
    for c in range(count):
        nodes = np.flatnonzero(label == c)
        if len(nodes) == 1:
            placed.append((nodes, np.zeros((1, 2)), 0.5))
            continue
        local = np.full(n, -1, dtype=np.int64)
        local[nodes] = np.arange(len(nodes))
        mine = edge_label == c
        xy = _component(local[edges[mine]], weights[mine], groups[nodes], seed)
        placed.append((nodes, xy, float(np.linalg.norm(xy, axis=1).max()) + 0.5))
    out = np.zeros((n, 2))
    for (nodes, xy, _), (cx, cy) in zip(placed, _pack([p[2] for p in placed]), strict=True):
        out[nodes] = xy + np.array([cx, cy])
    return _unit(out).astype(np.float32) if n > 1 else out.astype(np.float32)


def _island(edges: np.ndarray, weights: np.ndarray, size: int, seed: int) -> np.ndarray:
    """One connected piece laid out by forces, centred, at equal density: scaled by the spread
    of its bulk (root mean square), so a few outliers do not crush its core."""
    if size == 1:
        return np.zeros((1, 2))
    xy = force_layout(size, edges, weights=weights, seed=seed, iterations=50).astype(float)
    rms = float(np.sqrt((xy**2).sum(axis=1).mean())) or 1.0
    return xy * (0.6 * np.sqrt(size) / rms)


def _component(edges: np.ndarray, weights: np.ndarray, groups: np.ndarray, seed: int) -> np.ndarray:
    """A connected component: each community an island of its own, islands placed by the
    strength of the relations between them and pushed apart until none overlap."""
    size = len(groups)
    names, group = np.unique(groups, return_inverse=True)
    if len(names) == 1 or len(names) > MAX_ISLANDS:
        return _island(edges, weights, size, seed)
    inside = group[edges[:, 0]] == group[edges[:, 1]]
    xy = np.zeros((size, 2))
    radius = np.zeros(len(names))
    for g in range(len(names)):
        members = np.flatnonzero(group == g)
        local = np.full(size, -1, dtype=np.int64)
        local[members] = np.arange(len(members))
        own = inside & (group[edges[:, 0]] == g)
        xy[members] = _island(local[edges[own]], weights[own], len(members), seed)
        radius[g] = float(np.linalg.norm(xy[members], axis=1).max()) + 1.0
    across = edges[~inside]
    pairs = group[across] if len(across) else np.zeros((0, 2), dtype=np.int64)
    centres = force_layout(len(names), pairs, seed=seed, iterations=60).astype(float)
    centres = _separate(centres * radius.sum() / 2, radius)
    return xy + centres[group]


def _separate(centres: np.ndarray, radius: np.ndarray, rounds: int = 80) -> np.ndarray:
    """Move discs apart until none overlap, while drawing them toward their centre of mass, so
    islands end up close but distinct (a few hundred discs at most: all pairs)."""
    pos = centres - centres.mean(axis=0)
    need = radius[:, None] + radius[None, :]
    np.fill_diagonal(need, 0.0)
    for _ in range(rounds):
        pos *= 0.97  # toward the middle
        for _ in range(3):
            delta = pos[:, None, :] - pos[None, :, :]
            dist = np.linalg.norm(delta, axis=2) + 1e-9
            overlap = np.clip(need - dist, 0.0, None)
            np.fill_diagonal(overlap, 0.0)
            pos += (delta / dist[:, :, None] * (overlap / 2)[:, :, None]).sum(axis=1)
    return pos


def _pack(radii: list[float], gap: float = 1.0) -> list[tuple[float, float]]:
    """Centres for discs of `radii` in rows (largest first) of a roughly 16:10 rectangle; the
    space a row's first, tallest disc leaves beside it is filled with smaller rows of its own
    (one large component and many small ones is the usual shape)."""
    order = sorted(range(len(radii)), key=lambda i: -radii[i])
    size = [2 * r + gap for r in radii]
    area = sum(d * d for d in size)
    width = max(max(size, default=0.0), float(np.sqrt(area * 1.6)))
    centres: list[tuple[float, float]] = [(0.0, 0.0)] * len(radii)
    y, at = 0.0, 0
    while at < len(order):
        first = order[at]
        height = size[first]
        centres[first] = (height / 2, y + height / 2)
        at += 1
        # Beside the first disc: rows of the next discs, within the row's height.
        x0, sub_y, x, row_h = height, y, height, 0.0
        while at < len(order):
            d = size[order[at]]
            if x + d > width:  # this sub-row is full: start the next one below it
                if sub_y + row_h + d > y + height or row_h == 0:
                    break
                sub_y, x, row_h = sub_y + row_h, x0, 0.0
                continue
            if sub_y + d > y + height:
                break
            centres[order[at]] = (x + d / 2, sub_y + d / 2)
            x, row_h, at = x + d, max(row_h, d), at + 1
        y += height
    return centres


def communities(topics: Sequence[Any]) -> list[list[str]]:
    """Topics' member lists, largest first: an entity's first one is the topic the exports
    name for it (WikiSnapshot.topic_of), so it is drawn in the island it is labelled with."""
    ordered = sorted(topics, key=lambda t: (len(t.members), t.id), reverse=True)
    return [list(t.members) for t in ordered]


def entity_positions(
    entity_ids: list[str], relations: list[tuple[str, str, int]], topics: list[list[str]],
) -> dict[str, tuple[float, float]]:
    """x, y in [-1, 1] of each entity, from relations (source, target, strength) and topics
    (member ids; an entity's first topic is its community). Deterministic for the same input."""
    index = {entity_id: i for i, entity_id in enumerate(entity_ids)}
    pairs = [(index[s], index[t]) for s, t, _ in relations if s in index and t in index]
    weights = [max(1, w) for s, t, w in relations if s in index and t in index]
    groups = np.full(len(entity_ids), -1, dtype=np.int64)
    for g, members in enumerate(topics):
        for member in members:
            if member in index and groups[index[member]] < 0:
                groups[index[member]] = g
    xy = graph_layout(len(entity_ids), np.array(pairs, dtype=np.int64).reshape(-1, 2),
                      weights=np.array(weights, dtype=float), groups=groups)
    return {e: (round(float(xy[i, 0]), 4), round(float(xy[i, 1]), 4)) for e, i in index.items()}
