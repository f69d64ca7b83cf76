"""Topic communities: groups of closely related entities found in the entity graph."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from ..fingerprint import fingerprint

SEED = 7  # fixed so the same graph always gives the same topics


MAX_DRIFT = 0.2  # share of the graph's nodes new or gone past which topics are found afresh
SPLIT_DEPTH = 3  # times an oversized community is partitioned again on its own edges


class WeightedGraph:
    """An undirected weighted graph over string ids: nodes sorted, parallel edges summed, self
    loops and edges to unknown nodes dropped. Edges are kept as integer pairs, the form igraph
    takes, so Leiden can run on a million entities."""

    def __init__(self, nodes: Iterable[str], edges: Iterable[tuple[str, str, float]]) -> None:
        self.nodes: list[str] = sorted(set(nodes))
        self.index = {n: i for i, n in enumerate(self.nodes)}
        summed: dict[tuple[int, int], float] = defaultdict(float)
        index = self.index
        for source, target, weight in edges:
            a, b = index.get(source), index.get(target)
            if a is None or b is None or a == b:
                continue
            summed[(a, b) if a < b else (b, a)] += float(weight)
        self.edges = sorted(summed)
        self.weights = [summed[e] for e in self.edges]

    def __len__(self) -> int:
        return len(self.nodes)

    def neighbours(self, wanted: Iterable[str]) -> dict[str, dict[str, float]]:
        """Weighted ties of the wanted nodes: node -> {other: weight}."""
        want = {self.index[n] for n in wanted if n in self.index}
        ties: dict[str, dict[str, float]] = defaultdict(dict)
        for (a, b), w in zip(self.edges, self.weights, strict=True):
            if a in want:
                ties[self.nodes[a]][self.nodes[b]] = w
            if b in want:
                ties[self.nodes[b]][self.nodes[a]] = w
        return ties

    def subgraph(self, keep: Iterable[str]) -> WeightedGraph:
        kept = set(keep)
        sub = WeightedGraph.__new__(WeightedGraph)
        sub.nodes = sorted(kept & set(self.index))
        sub.index = {n: i for i, n in enumerate(sub.nodes)}
        pairs = [((sub.index[self.nodes[a]], sub.index[self.nodes[b]]), w)
                 for (a, b), w in zip(self.edges, self.weights, strict=True)
                 if self.nodes[a] in kept and self.nodes[b] in kept]
        sub.edges = [p for p, _w in pairs]
        sub.weights = [w for _p, w in pairs]
        return sub

    def edge_list(self) -> list[tuple[str, str, float]]:
        return [(self.nodes[a], self.nodes[b], w) for (a, b), w in zip(self.edges, self.weights, strict=True)]


def leiden(graph: WeightedGraph, *, resolution: float = 1.0,
           initial: dict[str, int] | None = None) -> list[list[str]]:
    """Leiden communities (modularity with a resolution, as Louvain's) of the graph's nodes,
    each sorted; nodes without edges come back alone. The seed is fixed and the node order
    sorted, so the same graph always gives the same communities. `initial` (node -> group)
    starts the search from an earlier partition, which Leiden only improves on."""
    if not graph.edges:
        return [[n] for n in graph.nodes]
    import igraph  # heavy: only where communities are found
    import leidenalg

    g = igraph.Graph(n=len(graph.nodes), edges=graph.edges)
    g.es["weight"] = graph.weights
    start = None
    if initial is not None:
        fresh = max(initial.values(), default=-1) + 1
        start = []
        for n in graph.nodes:
            if n in initial:
                start.append(initial[n])
            else:
                start.append(fresh)
                fresh += 1
    partition = leidenalg.find_partition(
        g, leidenalg.RBConfigurationVertexPartition, weights="weight",
        resolution_parameter=resolution, seed=SEED, n_iterations=2, initial_membership=start,
    )
    groups: dict[int, list[str]] = defaultdict(list)
    for i, c in enumerate(partition.membership):
        groups[c].append(graph.nodes[i])
    return [sorted(m) for _c, m in sorted(groups.items())]


def split_oversized(graph: WeightedGraph, groups: Iterable[Sequence[str]], *, max_size: int | None,
                    resolution: float = 1.0, depth: int = SPLIT_DEPTH) -> list[list[str]]:
    """Communities larger than `max_size`, partitioned again by Leiden on their own edges (up to
    `depth` times; one Leiden cannot split stays whole).

    Modularity over a whole sparse graph merges small, barely tied clusters and gathers hub
    entities' neighbours ("None", "name", "path") into communities of hundreds that no title
    fits; on its own edges such a community falls apart into the clusters it was made of."""
    todo = [list(g) for g in groups]
    if max_size is None:
        return todo
    done: list[list[str]] = []
    for _ in range(depth):
        big = [g for g in todo if len(g) > max_size]
        done += [g for g in todo if len(g) <= max_size]
        todo = []
        for group, inner in zip(big, _inner_edges(graph, big), strict=True):
            parts = leiden(WeightedGraph(group, inner), resolution=resolution) if inner else [group]
            if len(parts) > 1:
                todo += parts
            else:
                done.append(group)
        if not todo:
            break
    return done + todo


def _inner_edges(graph: WeightedGraph, groups: Sequence[Sequence[str]]) -> list[list[tuple[str, str, float]]]:
    """Each group's edges between its own members, in one pass over the graph's edges."""
    where = {graph.index[n]: i for i, g in enumerate(groups) for n in g if n in graph.index}
    inner: list[list[tuple[str, str, float]]] = [[] for _ in groups]
    nodes = graph.nodes
    for (a, b), w in zip(graph.edges, graph.weights, strict=True):
        i = where.get(a)
        if i is not None and where.get(b) == i:
            inner[i].append((nodes[a], nodes[b], w))
    return inner


def _ordered(groups: Iterable[Iterable[str]], min_size: int, max_topics: int,
             importance: dict[str, float] | None) -> list[list[str]]:
    weights = importance or {}
    kept = [sorted(g) for g in groups if len(set(g)) >= min_size]
    kept.sort(key=lambda g: (-len(g), -sum(weights.get(n, 0.0) for n in g), g[0]))
    return kept[:max_topics]


def find_communities(
    nodes: Iterable[str] | WeightedGraph,
    edges: Iterable[tuple[str, str, float]],
    *,
    resolution: float = 1.0,
    min_size: int = 3,
    max_topics: int = 200,
    importance: dict[str, float] | None = None,
    max_size: int | None = None,
) -> list[list[str]]:
    """Leiden communities of the weighted graph, each a sorted list of node ids.

    Communities larger than `max_size` are partitioned again on their own edges; those smaller
    than `min_size` are dropped; the rest are ordered by size, then by the summed importance of
    their members, then by their first id, and cut at `max_topics`. Parallel edges add their
    weights.
    """
    graph = nodes if isinstance(nodes, WeightedGraph) else WeightedGraph(nodes, edges)
    if not graph.edges:
        return []
    found = split_oversized(graph, leiden(graph, resolution=resolution), max_size=max_size, resolution=resolution)
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
    max_size: int | None = None,
) -> list[list[str]]:
    """Communities that move only where the graph did: after a small change, every topic keeps
    its members that still exist, each new node joins the topic it is most strongly tied to,
    and new nodes tied to no topic form topics of their own. `previous` maps topic id to
    members, `previous_nodes` are the nodes the previous communities were found among.

    A graph whose nodes changed by more than `max_drift` is partitioned afresh (Leiden from
    scratch would reshuffle many topics for a one-document change: measured). Topics found
    afresh, here or among the new nodes, are split past `max_size` as `find_communities` does;
    a kept topic keeps its members.
    """
    graph = WeightedGraph(nodes, edges)
    before = set(previous_nodes)
    now = set(graph.nodes)
    changed = len(now - before) + len(before - now)
    if not previous or not before or changed > max_drift * max(len(before), 1):
        return find_communities(graph, (), resolution=resolution, min_size=min_size, max_topics=max_topics,
                                importance=importance, max_size=max_size)
    groups = {tid: [n for n in members if n in now] for tid, members in sorted(previous.items())}
    placed = {n: tid for tid, members in groups.items() for n in members}
    leftover = []
    new_ties = graph.neighbours(now - before)
    for node in sorted(now - before):
        ties: dict[str, float] = defaultdict(float)
        for other, weight in new_ties.get(node, {}).items():
            if other in placed:
                ties[placed[other]] += weight
        if ties:
            groups[max(sorted(ties), key=lambda t: ties[t])].append(node)
        else:
            leftover.append(node)
    extra: list[list[str]] = []
    sub = graph.subgraph(leftover)
    if sub.edges:
        extra = split_oversized(sub, leiden(sub, resolution=resolution), max_size=max_size, resolution=resolution)
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
