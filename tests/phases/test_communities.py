"""Topic communities: found from the weighted graph, stable across runs, matched to stored topics."""

from itertools import combinations

from compendium.graph.communities import (
    find_communities,
    match_previous,
    membership_fingerprint,
    update_communities,
)


def two_cliques():
    left, right = ["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]
    edges = [(x, y, 3.0) for group in (left, right) for x, y in combinations(group, 2)]
    edges.append(("a1", "b1", 1.0))  # one weak bridge
    return [*left, *right, "lonely", "p1", "p2"], [*edges, ("p1", "p2", 5.0)]


def test_cliques_joined_by_a_weak_edge_are_two_topics_and_small_groups_are_dropped():
    nodes, edges = two_cliques()
    groups = find_communities(nodes, edges, min_size=3)
    assert groups == [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]]
    # Same input, same answer: the seed is fixed.
    assert find_communities(list(reversed(nodes)), list(reversed(edges)), min_size=3) == groups


def test_max_topics_keeps_the_most_important():
    nodes, edges = two_cliques()
    groups = find_communities(nodes, edges, min_size=3, max_topics=1, importance={"b2": 9.0})
    assert groups == [["b1", "b2", "b3", "b4"]]


def test_no_edges_means_no_topics():
    assert find_communities(["a", "b", "c"], [], min_size=2) == []


def test_stored_topics_are_matched_by_membership_then_overlap():
    groups = [["a", "b", "c"], ["d", "e", "f", "g"], ["x", "y", "z"]]
    previous = {"t-same": ["c", "b", "a"], "t-drift": ["d", "e", "f"], "t-gone": ["q", "r", "s"]}
    assert match_previous(groups, previous) == {0: "t-same", 1: "t-drift"}
    assert membership_fingerprint(["b", "a"]) == membership_fingerprint(["a", "b"])


def ring_of_cliques(count: int, size: int = 5) -> tuple[list[str], list[tuple[str, str, float]]]:
    groups = [[f"g{g}n{i}" for i in range(size)] for g in range(count)]
    edges = [(x, y, 3.0) for group in groups for x, y in combinations(group, 2)]
    edges += [(groups[g][0], groups[(g + 1) % count][1], 1.0) for g in range(count)]
    return [n for g in groups for n in g], edges


def test_a_new_node_joins_the_topic_it_is_tied_to_and_no_other_topic_moves():
    nodes, edges = ring_of_cliques(30)
    first = find_communities(nodes, edges, min_size=3)
    previous = {f"t{i}": members for i, members in enumerate(first)}
    grown = update_communities([*nodes, "new"], [*edges, ("new", "g7n2", 2.0), ("new", "g7n3", 2.0),
                                                 ("new", "g9n1", 1.0)], previous, nodes, min_size=3)
    changed = [g for g in grown if g not in first]
    assert len(changed) == 1 and "new" in changed[0] and "g7n2" in changed[0]
    assert len(grown) == len(first)
    # new nodes tied to no topic form topics of their own
    island = [("i1", "i2", 4.0), ("i2", "i3", 4.0), ("i1", "i3", 4.0)]
    grown = update_communities([*nodes, "i1", "i2", "i3"], [*edges, *island], previous, nodes, min_size=3)
    assert ["i1", "i2", "i3"] in grown and all(g in grown for g in first)


def test_a_removed_node_leaves_its_topic_and_a_large_change_starts_afresh():
    nodes, edges = ring_of_cliques(30)
    first = find_communities(nodes, edges, min_size=3)
    previous = {f"t{i}": members for i, members in enumerate(first)}
    shrunk = update_communities([n for n in nodes if n != "g4n4"], edges, previous, nodes, min_size=3)
    assert sum(1 for g in shrunk if g not in first) == 1 and not any("g4n4" in g for g in shrunk)
    # most of the graph is new: the old topics say little, so communities are found afresh
    fresh_nodes, fresh_edges = ring_of_cliques(4)
    again = update_communities(fresh_nodes, fresh_edges, previous, nodes, min_size=3)
    assert again == find_communities(fresh_nodes, fresh_edges, min_size=3)


def ring_of_small_cliques(count: int, size: int) -> tuple[list[list[str]], list[tuple[str, str, float]]]:
    """The textbook case modularity merges: many small cliques, each tied to the next by one edge."""
    groups = [[f"k{g:02d}n{i}" for i in range(size)] for g in range(count)]
    edges = [(x, y, 1.0) for group in groups for x, y in combinations(group, 2)]
    edges += [(groups[g][0], groups[(g + 1) % count][1], 1.0) for g in range(count)]
    return groups, edges


def test_a_community_past_max_size_is_partitioned_again_into_the_clusters_it_was_made_of():
    cliques, edges = ring_of_small_cliques(40, 4)
    nodes = [n for c in cliques for n in c]
    merged = find_communities(nodes, edges, min_size=3, max_topics=1000)
    assert max(len(g) for g in merged) > 4  # over the whole graph, neighbouring cliques merge
    split = find_communities(nodes, edges, min_size=3, max_topics=1000, max_size=4)
    assert sorted(split) == sorted(cliques)
    # A full compile is an incremental one from empty: the same split.
    assert update_communities(nodes, edges, {}, [], min_size=3, max_topics=1000, max_size=4) == split


def test_a_community_that_does_not_fall_apart_stays_whole():
    clique = [f"n{i}" for i in range(8)]
    edges = [(x, y, 1.0) for x, y in combinations(clique, 2)]
    assert find_communities(clique, edges, min_size=3, max_size=4) == [clique]


def test_new_nodes_forming_an_oversized_community_of_their_own_are_split_too():
    nodes, edges = ring_of_cliques(6)
    previous = {f"t{i}": g for i, g in enumerate(find_communities(nodes, edges, min_size=3))}
    cliques, island = ring_of_small_cliques(30, 4)  # tied to no existing topic
    island_nodes = [n for c in cliques for n in c]
    grown = update_communities([*nodes, *island_nodes], [*edges, *island], previous, nodes,
                               min_size=3, max_topics=1000, max_size=4, max_drift=10.0)
    assert all(g in grown for g in previous.values())
    assert sorted(g for g in grown if g[0].startswith("k")) == sorted(cliques)
