"""Topic communities: groups of closely related entities found in the entity graph."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import networkx as nx

from ..fingerprint import fingerprint

SEED = 7  # fixed so the same graph always gives the same topics


MAX_DRIFT = 0.2  # share of the graph's nodes new or gone past which topics are found afresh


def _graph(nodes: Iterable[str], edges: Iterable[tuple[str, str, float]]) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(sorted(set(nodes)))
    for source, target, weight in sorted(edges):
        if source == target or source not in graph or target not in graph:
            continue
        if graph.has_edge(source, target):
            graph[source][target]["weight"] += weight
        else:
            graph.add_edge(source, target, weight=float(weight))
    return graph


def _ordered(groups: Iterable[Iterable[str]], min_size: int, max_topics: int,
             importance: dict[str, float] | None) -> list[list[str]]:
    weights = importance or {}
    kept = [sorted(g) for g in groups if len(set(g)) >= min_size]
    kept.sort(key=lambda g: (-len(g), -sum(weights.get(n, 0.0) for n in g), g[0]))
    return kept[:max_topics]


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
    graph = _graph(nodes, edges)
    if graph.number_of_edges() == 0:
        return []
    found = nx.community.louvain_communities(graph, weight="weight", resolution=resolution, seed=SEED)
    return _ordered(found, min_size, max_topics, importance)


def update_communities(
    nodes: Iterable[str],
    edges: Iterable[tuple[str, str, float]],
    previous: dict[str, Sequence[str]],
    previous_nodes: Iterable[str],
    *,
    resolution: float = 1.0,
    min_size: int = 3,
    max_topics: int = 200,
    importance: dict[str, float] | None = None,
    max_drift: float = MAX_DRIFT,
) -> list[list[str]]:
    """Communities that move only where the graph did: after a small change, every topic keeps
    its members that still exist, each new node joins the topic it is most strongly tied to,
    and new nodes tied to no topic form topics of their own. `previous` maps topic id to
    members, `previous_nodes` are the nodes the previous communities were found among.

    A graph whose nodes changed by more than `max_drift` is partitioned afresh (Louvain from
    scratch would reshuffle many topics for a one-document change: measured).
    """
    graph = _graph(nodes, edges)
    before = set(previous_nodes)
    now = set(graph)
    changed = len(now - before) + len(before - now)
    if not previous or not before or changed > max_drift * max(len(before), 1):
        return find_communities(graph.nodes, ((a, b, d["weight"]) for a, b, d in graph.edges(data=True)),
                                resolution=resolution, min_size=min_size, max_topics=max_topics,
                                importance=importance)
    groups = {tid: [n for n in members if n in now] for tid, members in sorted(previous.items())}
    placed = {n: tid for tid, members in groups.items() for n in members}
    leftover = []
    for node in sorted(now - before):
        ties: dict[str, float] = defaultdict(float)
        for other, data in graph[node].items():
            if other in placed:
                ties[placed[other]] += data["weight"]
        if ties:
            groups[max(sorted(ties), key=lambda t: ties[t])].append(node)
        else:
            leftover.append(node)
    extra: list[set[str]] = []
    sub = graph.subgraph(leftover)
    if sub.number_of_edges():
        extra = nx.community.louvain_communities(sub, weight="weight", resolution=resolution, seed=SEED)
    return _ordered([*groups.values(), *extra], min_size, max_topics, importance)


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
