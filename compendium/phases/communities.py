"""Topic communities: groups of closely related entities found in the entity graph."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import networkx as nx

from ..fingerprint import fingerprint

SEED = 7  # fixed so the same graph always gives the same topics


def find_communities(
    nodes: Iterable[str],
    edges: Iterable[tuple[str, str, float]],
    *,
    resolution: float = 1.0,
    min_size: int = 3,
    max_topics: int = 200,
    importance: dict[str, float] | None = None,
) -> list[list[str]]:
    """Louvain communities of the weighted graph, each a sorted list of node ids.

    Communities smaller than `min_size` are dropped; the rest are ordered by size, then by
    the summed importance of their members, then by their first id, and cut at `max_topics`.
    Parallel edges add their weights.
    """
    graph = nx.Graph()
    graph.add_nodes_from(sorted(set(nodes)))
    for source, target, weight in sorted(edges):
        if source == target or source not in graph or target not in graph:
            continue
        if graph.has_edge(source, target):
            graph[source][target]["weight"] += weight
        else:
            graph.add_edge(source, target, weight=float(weight))
    if graph.number_of_edges() == 0:
        return []
    found = nx.community.louvain_communities(graph, weight="weight", resolution=resolution, seed=SEED)
    weights = importance or {}
    groups = [sorted(c) for c in found if len(c) >= min_size]
    groups.sort(key=lambda g: (-len(g), -sum(weights.get(n, 0.0) for n in g), g[0]))
    return groups[:max_topics]


def membership_fingerprint(members: Sequence[str]) -> str:
    """A topic's identity: the set of its members."""
    return fingerprint(sorted(members))


def match_previous(
    groups: Sequence[Sequence[str]], previous: dict[str, Sequence[str]], *, min_overlap: float = 0.5
) -> dict[int, str]:
    """Pair new groups with stored topics (id -> members) whose membership they mostly share.

    Exact matches first, then by Jaccard overlap ≥ `min_overlap`, best first; each stored
    topic is used once. Returns group index -> stored topic id.
    """
    by_fp = {membership_fingerprint(m): tid for tid, m in previous.items()}
    matched: dict[int, str] = {}
    used: set[str] = set()
    for i, group in enumerate(groups):
        tid = by_fp.get(membership_fingerprint(group))
        if tid is not None and tid not in used:
            matched[i] = tid
            used.add(tid)
    scored: list[tuple[float, int, str]] = []
    prev_sets = {tid: set(m) for tid, m in previous.items() if tid not in used}
    for i, group in enumerate(groups):
        if i in matched:
            continue
        g = set(group)
        for tid, members in prev_sets.items():
            shared = len(g & members)
            if shared:
                score = shared / len(g | members)
                if score >= min_overlap:
                    scored.append((-score, i, tid))
    for _neg, i, tid in sorted(scored):
        if i not in matched and tid not in used:
            matched[i] = tid
            used.add(tid)
    return matched
