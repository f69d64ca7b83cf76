"""Entity graph layout for the canvas and the exported site's graph view: each connected
component laid out by forces from a start where topic communities sit together, then the
components packed in rows, largest first, so no space is lost between scattered islands."""

from __future__ import annotations

import numpy as np

EXACT_UP_TO = 400  # nodes; above this, repulsion comes from a grid of cell centroids
GRID = 24
GOLDEN_ANGLE = 2.399963229728653


def force_layout(
    n: int, edges: np.ndarray, *, weights: np.ndarray | None = None, iterations: int = 30,
    seed: int = 7, start: np.ndarray | None = None, temperature: float = 0.2,
) -> np.ndarray:
    """Positions (n, 2) in [-1, 1] for nodes 0..n-1 joined by `edges` (m, 2) of indexes.

    `start` gives initial positions (else random). Deterministic for the same input.
    O(iterations * (n * min(n, GRID²) + m)).
    """
    if n == 0:
        return np.zeros((0, 2), dtype=np.float32)
    if n == 1:
        return np.zeros((1, 2), dtype=np.float32)
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1.0, 1.0, size=(n, 2)) if start is None else _unit(np.array(start, dtype=float))
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


def _repulsion(pos: np.ndarray, k: float, mass: np.ndarray) -> np.ndarray:
    if len(pos) <= EXACT_UP_TO:
        delta = pos[:, None, :] - pos[None, :, :]
        dist2 = (delta**2).sum(axis=2) + 1e-6
        push = k * k * mass[:, None] * mass[None, :] / dist2
        return (delta * push[:, :, None]).sum(axis=1)
    # Far-field approximation: each node is pushed by the centroids of occupied grid cells,
    # weighted by how many nodes each holds.
    low, high = pos.min(axis=0), pos.max(axis=0)
    cell = np.floor((pos - low) / (high - low + 1e-9) * GRID).clip(0, GRID - 1).astype(np.int64)
    index = cell[:, 0] * GRID + cell[:, 1]
    counts = np.bincount(index, minlength=GRID * GRID).astype(float)
    weight = np.bincount(index, weights=mass, minlength=GRID * GRID)
    sums = np.zeros((GRID * GRID, 2))
    np.add.at(sums, index, pos)
    occupied = counts > 0
    centres, cell_mass = sums[occupied] / counts[occupied, None], weight[occupied]
    shift = np.zeros_like(pos)
    for start in range(0, len(pos), 2048):
        part = pos[start : start + 2048]
        delta = part[:, None, :] - centres[None, :, :]
        dist2 = (delta**2).sum(axis=2) + 1e-4
        push = k * k * mass[start : start + 2048, None] * cell_mass[None, :] / dist2
        shift[start : start + 2048] = (delta * push[:, :, None]).sum(axis=1)
    return shift


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


def community_start(groups: np.ndarray, seed: int) -> np.ndarray:
    """Initial positions: each community a disc on a spiral (largest at the centre), its
    members scattered inside it, so the forces start from communities already apart."""
    rng = np.random.default_rng(seed)
    names, inverse, sizes = np.unique(groups, return_inverse=True, return_counts=True)
    order = np.argsort(-sizes, kind="stable")
    centre = np.zeros((len(names), 2))
    filled = 0.0
    for rank, g in enumerate(order):
        radius = np.sqrt(filled + sizes[g] / 2)  # area so far: larger discs keep their space
        centre[g] = radius * np.array([np.cos(rank * GOLDEN_ANGLE), np.sin(rank * GOLDEN_ANGLE)])
        filled += sizes[g]
    angle = rng.uniform(0, 2 * np.pi, len(groups))
    spread = np.sqrt(rng.uniform(0, 1, len(groups))) * np.sqrt(sizes[inverse]) * 0.5
    return centre[inverse] + np.c_[np.cos(angle), np.sin(angle)] * spread[:, None]


def graph_layout(
    n: int, edges: np.ndarray, *, weights: np.ndarray | None = None,
    groups: np.ndarray | None = None, seed: int = 7,
) -> np.ndarray:
    """Positions (n, 2) in [-1, 1]: components laid out apart and packed, communities
    (`groups`, an int per node, e.g. its topic) kept together inside each component."""
    if n == 0:
        return np.zeros((0, 2), dtype=np.float32)
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    weights = np.ones(len(edges)) if weights is None else np.asarray(weights, dtype=float)
    groups = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    label = components(n, edges)
    count = int(label.max()) + 1
    members = [np.flatnonzero(label == c) for c in range(count)]
    edge_label = label[edges[:, 0]] if len(edges) else np.zeros(0, dtype=np.int64)
    placed: list[tuple[np.ndarray, np.ndarray, float]] = []  # members, positions, radius
    for c, nodes in enumerate(members):
        if len(nodes) == 1:
            placed.append((nodes, np.zeros((1, 2)), 0.5))
            continue
        local = np.full(n, -1, dtype=np.int64)
        local[nodes] = np.arange(len(nodes))
        mine = edge_label == c
        sub = local[edges[mine]]
        start = community_start(groups[nodes], seed) if len(nodes) > 2 else None
        xy = force_layout(len(nodes), sub, weights=weights[mine], seed=seed, start=start,
                          iterations=50, temperature=0.2 if start is None else 0.15).astype(float)
        # Equal density in every component: scaled by the spread of its bulk (root mean
        # square), not by its farthest node, so a few outliers do not crush the core.
        rms = float(np.sqrt((xy**2).sum(axis=1).mean())) or 1.0
        xy *= 0.6 * np.sqrt(len(nodes)) / rms
        placed.append((nodes, xy, float(np.linalg.norm(xy, axis=1).max()) + 0.5))
    out = np.zeros((n, 2))
    for nodes, xy, (cx, cy) in zip(
        [p[0] for p in placed], [p[1] for p in placed], _pack([p[2] for p in placed]), strict=True
    ):
        out[nodes] = xy + np.array([cx, cy])
    return _unit(out).astype(np.float32) if n > 1 else out.astype(np.float32)


def _pack(radii: list[float], gap: float = 1.0) -> list[tuple[float, float]]:
    """Centres for discs of `radii` in rows (largest first) of a roughly 16:10 rectangle."""
    order = sorted(range(len(radii)), key=lambda i: -radii[i])
    area = sum((2 * r + gap) ** 2 for r in radii)
    width = max(2 * max(radii, default=0) + gap, np.sqrt(area * 1.6))
    centres: list[tuple[float, float]] = [(0.0, 0.0)] * len(radii)
    x = y = row_height = 0.0
    for i in order:
        size = 2 * radii[i] + gap
        if x > 0 and x + size > width:
            x, y, row_height = 0.0, y + row_height, 0.0
        centres[i] = (x + size / 2, y + size / 2)
        x += size
        row_height = max(row_height, size)
    return centres


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
