"""The graph layout shared by the canvas and the site: communities as islands, components
packed without overlap, deterministic."""

import numpy as np

from compendium.export.layout import communities, entity_positions, graph_layout


def clustered(groups: int = 6, size: int = 30, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """`groups` communities of `size` nodes, dense inside, a few relations across."""
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(groups), size)
    edges = set()
    while len(edges) < groups * size * 3:
        a = int(rng.integers(0, len(group)))
        same = np.flatnonzero(group == group[a])
        b = int(rng.choice(same)) if rng.random() < 0.95 else int(rng.integers(0, len(group)))
        if a != b:
            edges.add((min(a, b), max(a, b)))
    return np.array(sorted(edges)), group


def test_each_community_is_an_island_closer_to_itself_than_to_the_others():
    edges, group = clustered()
    xy = graph_layout(len(group), edges, groups=group)
    assert xy.shape == (len(group), 2) and np.abs(xy).max() <= 1.0 + 1e-6
    centres = np.array([xy[group == g].mean(axis=0) for g in range(6)])
    spread = max(np.linalg.norm(xy[group == g] - centres[g], axis=1).max() for g in range(6))
    gaps = [np.linalg.norm(centres[a] - centres[b]) for a in range(6) for b in range(a + 1, 6)]
    # Every community's nodes lie nearer its own centre than any other community's centre is.
    for g in range(6):
        own = np.linalg.norm(xy[group == g] - centres[g], axis=1)
        others = np.min([np.linalg.norm(xy[group == g] - centres[o], axis=1) for o in range(6) if o != g], axis=0)
        assert (own < others).mean() > 0.95
    assert min(gaps) > spread  # islands are apart


def test_components_are_packed_without_overlap_in_a_compact_area():
    # One large component and forty pairs and singletons, as an offline compile leaves them.
    edges, group = clustered(groups=2, size=40)
    n = len(group)
    pairs = [(n + 2 * i, n + 2 * i + 1) for i in range(20)]
    total = n + 40 + 20
    xy = graph_layout(total, np.vstack([edges, pairs]), groups=np.r_[group, np.full(60, -1)])
    pieces = [np.arange(n)] + [np.array(p) for p in pairs] + [np.array([i]) for i in range(n + 40, total)]
    boxes = [(xy[p].min(axis=0), xy[p].max(axis=0)) for p in pieces]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            (a0, a1), (b0, b1) = boxes[i], boxes[j]
            assert (a1 < b0).any() or (b1 < a0).any(), (i, j)  # bounding boxes never meet
    width, height = xy.max(axis=0) - xy.min(axis=0)
    assert 0.4 < width / height < 2.5  # a block, not a long line of islands


def test_positions_are_the_same_on_every_run_and_for_every_entity():
    ids = [f"e{i}" for i in range(50)]
    relations = [(f"e{i}", f"e{(i * 7) % 50}", 1 + i % 3) for i in range(50)] + [("e1", "gone", 1)]
    topics = [[f"e{i}" for i in range(25)], [f"e{i}" for i in range(25, 50)]]
    first = entity_positions(ids, relations, topics)
    assert sorted(first) == sorted(ids)
    assert entity_positions(ids, relations, topics) == first
    assert entity_positions([], [], []) == {}


def test_an_entity_in_two_topics_is_drawn_in_the_largest_the_exports_name_for_it():
    from compendium.storage.records import Topic

    small = Topic(id="t-small", title="Small", members=["shared", "a"])
    large = Topic(id="t-large", title="Large", members=["shared", "b", "c", "d"])
    ids = ["shared", "a", "b", "c", "d"]
    relations = [("shared", "b", 1), ("b", "c", 1), ("c", "d", 1), ("d", "shared", 1), ("a", "shared", 1)]
    xy = entity_positions(ids, relations, communities([small, large]))
    distance = lambda p, q: ((xy[p][0] - xy[q][0]) ** 2 + (xy[p][1] - xy[q][1]) ** 2) ** 0.5  # noqa: E731
    # Islands are kept apart: the shared entity sits with the large topic's members.
    assert max(distance("shared", m) for m in "bcd") < distance("shared", "a")
