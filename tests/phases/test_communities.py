"""Topic communities: found from the weighted graph, stable across runs, matched to stored topics."""

from itertools import combinations

from compendium.phases.communities import find_communities, match_previous, membership_fingerprint


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
